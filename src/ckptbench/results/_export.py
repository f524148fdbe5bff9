"""Results as a pandas DataFrame, and CSV / Parquet exports of it; a run's benchmark x metric series
as pyperf and github-action-benchmark files."""

from __future__ import annotations

import json
import pathlib
from typing import TYPE_CHECKING, Any

from ckptbench.errors import CkptbenchError
from ckptbench.api import Tag, measured_records
from ckptbench.results._formats import BENCHMARK_FORMATS, FORMATS
from ckptbench.results._github_action import write_github_action_benchmark
from ckptbench.results._metric_series import BenchmarkExport, run_series
from ckptbench.results._pyperf import manifest_metadata, write_pyperf
from ckptbench.results._read import read_outputs

if TYPE_CHECKING:
  import pandas as pd

# Columns every row has; an option with one of these names becomes `option_<name>`.
RUN_COLUMNS = (
    "suite", "benchmark", "key", "generator", "repeat", "warmup", "memory_pass", "host", "num_hosts",
    "started_at", "duration_s", "mesh", "checkpoint_config", "error",
)
METRIC_COLUMNS = ("tag", "operation", "namespace", "metric", "value", "unit")


def _cell(value: Any) -> Any:
  """Scalars stay as they are; lists, dicts and the like become JSON text."""
  if value is None or isinstance(value, (bool, int, float, str)):
    return value
  return json.dumps(value, sort_keys=True, default=str)


def load_results(out_dir: str | pathlib.Path, include_warmups: bool = False) -> pd.DataFrame:
  """One row per run x metric of OUT/results.jsonl, with the options as columns.

  Warm-up runs (`num_warmups`) are left out, as summary.json leaves them out,
  unless `include_warmups`; a failed run's rows stay, with its `error` (summary.json's
  statistics leave them out: filter on `error.isna()` for the same numbers).

  A memory pass's runs (their host-memory tags; docs/metrics.md, *Host memory*) have `memory_pass`
  true: summary.json's host-memory statistics come from those rows, its timings from the others.

  A run that recorded no metric (it failed early) still has one row, with an
  empty `tag` and its `error`. Option columns follow the fixed columns
  (`RUN_COLUMNS` + `METRIC_COLUMNS`); an option whose name clashes with one of
  them is named `option_<name>`. Non-scalar values (lists, dicts) are JSON text.

  Args:
    out_dir: the output directory of a run.
    include_warmups: also the warm-up runs' rows (column `warmup` tells them apart).

  Returns:
    The DataFrame (empty, with the fixed columns, when no run finished).

  Raises:
    CkptbenchError: when `out_dir` holds no results.

  Example:
    >>> df = ckptbench.load_results("out/quickstart")
    >>> df[df.tag == "save_0_basics/time_s"].groupby("benchmark").value.mean()
  """
  import pandas as pd  # deferred: `import ckptbench` stays light

  outputs = read_outputs(out_dir)
  fixed = set(RUN_COLUMNS) | set(METRIC_COLUMNS)
  rows: list[dict[str, Any]] = []
  option_columns: list[str] = []
  for record in outputs.results if include_warmups else measured_records(outputs.results):
    run = {column: _cell(getattr(record, column)) for column in RUN_COLUMNS if column != "error"}
    run["error"] = None if record.error is None else record.error.text
    for name, value in record.options.items():
      column = f"option_{name}" if name in fixed else name
      if column not in option_columns:
        option_columns.append(column)
      run[column] = _cell(value)
    if not record.metrics:
      rows.append(run)
    for tag, entry in record.metrics.items():
      parts = Tag.parse(tag)
      rows.append({**run, "tag": tag, "operation": parts.op, "namespace": parts.namespace,
                   "metric": parts.metric, "value": entry.value, "unit": entry.unit})
  columns = list(RUN_COLUMNS) + list(METRIC_COLUMNS) + option_columns
  frame = pd.DataFrame(rows, columns=columns)
  frame["value"] = frame["value"].astype(float)
  return frame


def export_results(
    out_dir: str | pathlib.Path,
    fmt: str = "csv",
    output: str | pathlib.Path | None = None,
    include_warmups: bool = False,
) -> pathlib.Path:
  """Writes `load_results(out_dir)` as OUT/results.csv or OUT/results.parquet.

  Args:
    out_dir: the output directory of a run.
    fmt: "csv" or "parquet".
    output: the file to write; default OUT/results.<fmt>.
    include_warmups: also the warm-up runs (left out by default, as in summary.json).

  Returns:
    The path written.

  Raises:
    CkptbenchError: for an unknown format or a directory without results.
  """
  if fmt not in FORMATS:
    raise CkptbenchError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")
  frame = load_results(out_dir, include_warmups=include_warmups)
  path = pathlib.Path(output) if output is not None else pathlib.Path(out_dir) / f"results.{fmt}"
  path.parent.mkdir(parents=True, exist_ok=True)
  if fmt == "csv":
    frame.to_csv(path, index=False)
  else:
    # Option columns can mix types across generators (a bool here, a string
    # there); Arrow needs one type per column, so such columns become text.
    for column in frame.columns[len(RUN_COLUMNS) + len(METRIC_COLUMNS):]:
      kinds = {type(v) for v in frame[column].dropna()}
      if len(kinds) > 1:
        frame[column] = frame[column].map(lambda v: None if v is None or v != v else str(v))
    frame.to_parquet(path, index=False)
  return path


def export_benchmarks(
    out_dir: str | pathlib.Path,
    fmt: str = "pyperf",
    output: str | pathlib.Path | None = None,
    bigger_is_better: bool = False,
) -> BenchmarkExport:
  """Writes a run's benchmark x metric series for another tool: "pyperf" (`python -m pyperf stats`,
  `compare_to`) or "github-action-benchmark" (its `customSmallerIsBetter` list, or with
  `bigger_is_better` its `customBiggerIsBetter` one). What the format cannot hold is left out, named.

  Args:
    out_dir: the output directory of a run.
    fmt: "pyperf" or "github-action-benchmark".
    output: the file to write; default OUT/pyperf.json, OUT/github-action-benchmark.json (or
      OUT/github-action-benchmark-bigger.json with `bigger_is_better`).
    bigger_is_better: github-action-benchmark only: the bigger-is-better metrics.

  Returns:
    The file, the benchmark x metric names written, and those left out with why.

  Raises:
    CkptbenchError: for an unknown format, `bigger_is_better` with pyperf, a directory without
      results, no series the format holds, or pyperf not installed.

  Example:
    >>> export = export_benchmarks("out/quickstart", "pyperf")
    >>> [f"{o.benchmark} {o.tag}: {o.reason}" for o in export.left_out]
  """
  if fmt not in BENCHMARK_FORMATS:
    raise CkptbenchError(f"unknown export format {fmt!r}; use one of: {', '.join(BENCHMARK_FORMATS)}")
  if bigger_is_better and fmt != "github-action-benchmark":
    raise CkptbenchError("--bigger_is_better chooses the direction of a github-action-benchmark file; pyperf reads"
                         " every benchmark as smaller is better")  # fmt: skip
  outputs = read_outputs(out_dir)
  series = run_series(outputs)
  if fmt == "pyperf":
    path = pathlib.Path(output) if output is not None else outputs.out_dir / "pyperf.json"
    return write_pyperf(series, manifest_metadata(outputs.manifest, outputs.suite), path)
  default = "github-action-benchmark-bigger.json" if bigger_is_better else "github-action-benchmark.json"
  path = pathlib.Path(output) if output is not None else outputs.out_dir / default
  return write_github_action_benchmark(series, outputs.suite, path, bigger_is_better)
