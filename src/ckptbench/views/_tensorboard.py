"""TensorBoard logs from an output directory, written without TensorFlow.

Layout under OUT/tensorboard/ (each directory is one TensorBoard run):

  .                       the HParams experiment (which options and metrics exist)
  <bench>/                per benchmark: aggregated statistics as scalars
                          (`<tag>/mean`, `/std`, `/min`, `/max`, `/median`, `/n`, and
                          `<tag>/hosts/<stat>` across hosts), the HParams session,
                          and the text cards (configuration, inventory, run summary)
  <bench>/host_<i>/       every metric of every run of host i, step = repeat index;
                          a failed run adds an `error` text card at its step
  <bench>__<op>/          profiler traces (`TestContext.trace_path`), read by the
                          Profile tab from `plugins/profile/<timestamp>/`

`<bench>` is `safe_path_component(benchmark name)`, the same directory name the
profiler traces use, so a benchmark's scalars and traces sit side by side.
Writing again replaces what an earlier call wrote. The event files are written
from TensorBoard's protos (`_tfevents.py`), without its TensorFlow stub.
"""

from __future__ import annotations

import collections
import datetime
import json
import pathlib
import time
from typing import Any, Iterable

from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
from tensorboard.plugins.scalar import plugin_data_pb2 as scalar_plugin_data

from ckptbench.api import safe_path_component
from ckptbench.api import BenchmarkSummary, MetricStatistics, RecordKind, RunRecord, measured_records
from ckptbench.api import Tag, is_judged
from ckptbench.results import read_outputs
from ckptbench.views._tfevents import EventFile, experiment_summary, session_summary, text_summary
from ckptbench._escape import markdown_text

TENSORBOARD_DIR = "tensorboard"
# Our event files end with this, so a rewrite removes exactly what we wrote.
_SUFFIX = ".ckptbench"
_STATS = ("mean", "std", "min", "max", "median", "n")
# What the scalars plugin's own `scalar_pb` attaches to each value (built once: that function
# converts every float through TensorFlow's dtype machinery, most of this view's cost).
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(
        plugin_name="scalars", content=scalar_plugin_data.ScalarPluginData(version=0).SerializeToString()
    )
)
_SCALAR_SHAPE = tensor_shape_pb2.TensorShapeProto()


def scalar_value(tag: str, value: float, first: bool = True) -> summary_pb2.Summary.Value:
  """One float32 scalar as the scalars plugin writes it (the same bytes as its `scalar_pb`).

  TensorBoard reads a tag's plugin metadata from its first value in a run and
  TensorFlow's FileWriter strips it from the later ones; so do we (`first=False`):
  a sixth of the bytes, which the writer checksums in pure Python.
  """
  tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape=_SCALAR_SHAPE, float_val=[value])
  if not first:
    return summary_pb2.Summary.Value(tag=tag, tensor=tensor)
  return summary_pb2.Summary.Value(tag=tag, metadata=_SCALAR_METADATA, tensor=tensor)


def tensorboard_run_name(benchmark: str) -> str:
  """The TensorBoard run (directory) name of a benchmark."""
  return safe_path_component(benchmark)


def write_tensorboard(out_dir: str | pathlib.Path) -> pathlib.Path:
  """Writes OUT/tensorboard/ from results.jsonl, summary.json and manifest.json.

  Args:
    out_dir: the output directory of a run.

  Returns:
    The TensorBoard log directory (`tensorboard --logdir` it).

  Raises:
    CkptbenchError: when `out_dir` holds no results.

  Example:
    >>> logdir = write_tensorboard("out/quickstart")
  """
  outputs = read_outputs(out_dir)
  logdir = outputs.out_dir / TENSORBOARD_DIR
  logdir.mkdir(parents=True, exist_ok=True)
  for old in logdir.rglob(f"events.out.tfevents.*{_SUFFIX}"):
    old.unlink()

  runs_by_bench: dict[str, list[RunRecord]] = collections.defaultdict(list)
  for record in measured_records(outputs.results):
    runs_by_bench[record.benchmark].append(record)
  for name, records in runs_by_bench.items():
    _write_host_scalars(logdir / tensorboard_run_name(name), records)

  benchmarks = outputs.benchmarks
  hparams_by_bench = {b.name: _hparams(b) for b in benchmarks}
  for bench in benchmarks:
    runs = runs_by_bench.get(bench.name, [])
    _write_benchmark_run(logdir / tensorboard_run_name(bench.name), bench, hparams_by_bench[bench.name], runs)
  if benchmarks:
    _write_experiment(logdir, hparams_by_bench.values(), benchmarks)
  return logdir


class TensorBoardWriter:
  """An event file in one TensorBoard run directory (created): scalars, text cards, an HParams session.

  `suffix` ends the file's name: `write_tensorboard` replaces the files ending in its own
  (the default), so a writer of other runs in the same log directory names its own.
  """

  def __init__(self, run_dir: pathlib.Path, suffix: str = _SUFFIX):
    self._file = EventFile(run_dir, suffix=suffix)
    self._tags: set[str] = set()  # the scalar tags written so far: later values carry no metadata

  def __enter__(self) -> "TensorBoardWriter":
    return self

  def __exit__(self, *exc) -> None:
    self._file.close()

  def add(self, summary: summary_pb2.Summary, step: int = 0, wall_time: float | None = None) -> None:
    self._file.add(event_pb2.Event(wall_time=wall_time or time.time(), step=step, summary=summary))

  def scalars(self, values: Iterable[tuple[str, float]], step: int = 0, wall_time: float | None = None) -> None:
    """Scalars of one step, in one event (TensorBoard reads every value of an event)."""
    summary = summary_pb2.Summary(value=[scalar_value(tag, v, tag not in self._tags) for tag, v in values])
    self._tags.update(value.tag for value in summary.value)
    self.add(summary, step, wall_time)

  def text(self, tag: str, markdown: str, step: int = 0) -> None:
    self.add(text_summary(tag, markdown), step)

  def hparams(self, values: dict[str, bool | float | str], trial_id: str) -> None:
    """The run's HParams session (values: bool, number or text)."""
    self.add(session_summary(values, trial_id=trial_id))

  def flush(self) -> None:
    self._file.flush()

  def close(self) -> None:
    self._file.close()


def _wall_time(record: RunRecord) -> float | None:
  try:
    return datetime.datetime.fromisoformat(record.started_at).timestamp()
  except ValueError:
    return None


def _write_host_scalars(bench_dir: pathlib.Path, records: list[RunRecord]) -> None:
  by_host: dict[int, list[RunRecord]] = collections.defaultdict(list)
  for record in records:
    by_host[record.host].append(record)
  for host, host_records in sorted(by_host.items()):
    with TensorBoardWriter(bench_dir / f"host_{host}") as writer:
      for record in sorted(host_records, key=lambda r: r.repeat):
        step, wall = record.repeat, _wall_time(record)
        values = [(tag, v) for tag in sorted(record.metrics) if (v := record.value(tag)) is not None]
        timed = record.kind is RecordKind.TIMED  # a memory pass's record: its samples, at its repeat's step
        values += [("run/duration_s", float(record.duration_s))] if timed else []
        writer.scalars(values, step, wall)
        if record.failed:
          writer.text("error" if timed else "memory_pass_error", _error_card(record), step)


def _write_benchmark_run(
    bench_dir: pathlib.Path, bench: BenchmarkSummary, hparams: dict[str, Any], records: list[RunRecord]
) -> None:
  with TensorBoardWriter(bench_dir) as writer:
    writer.hparams(hparams, trial_id=bench.key or bench.name)
    values = []
    for tag, stats in sorted(bench.metrics.items()):
      values += [(f"{tag}/{stat}", float(v)) for stat in _STATS if (v := getattr(stats, stat)) is not None]
      # The cross-host block under the names summary.json gives it (hosts/per_host/0, ...).
      values += [(f"{tag}/hosts/{stat}", v) for stat, v in _numeric_leaves(stats.hosts.to_json() if stats.hosts else None)]
    writer.scalars(values)
    writer.text("configuration", _configuration_card(bench))
    writer.text("inventory", _inventory_card(bench))
    writer.text("run_summary", _summary_card(bench, records))


def _numeric_leaves(value: Any, prefix: str = "") -> Iterable[tuple[str, float]]:
  """(path, number) for every number in a nested dict (`a/b` paths)."""
  if isinstance(value, dict):
    for key, sub in value.items():
      yield from _numeric_leaves(sub, f"{prefix}{key}" if not prefix else f"{prefix}/{key}")
  elif isinstance(value, (int, float)) and not isinstance(value, bool):
    yield prefix, float(value)


def _hparam_value(value: Any) -> bool | float | str:
  if value is None:
    return "None"
  if isinstance(value, (bool, str)):
    return value
  if isinstance(value, (int, float)):
    return float(value)
  return json.dumps(value, sort_keys=True, default=str)


def _flatten(prefix: str, value: Any, depth: int) -> dict[str, Any]:
  """`{prefix.key: value}` down to `depth` levels; deeper values become JSON text."""
  if isinstance(value, dict) and value and depth > 0:
    out: dict[str, Any] = {}
    for key, sub in value.items():
      out.update(_flatten(f"{prefix}.{key}", sub, depth - 1))
    return out
  return {prefix: _hparam_value(value)}


def _hparams(bench: BenchmarkSummary) -> dict[str, bool | float | str]:
  """HParams of a benchmark: its options, mesh and checkpoint description."""
  hparams: dict[str, Any] = {}
  for name, value in (bench.options or {}).items():
    hparams[name] = _hparam_value(value)
  hparams.update(_flatten("mesh", bench.mesh, depth=2))
  # One level only: a spec of many arrays would otherwise make hundreds of columns.
  hparams.update(_flatten("checkpoint", bench.checkpoint_config, depth=1))
  hparams["benchmark"] = bench.name
  hparams["generator"] = str(bench.generator or "")
  return hparams


def _write_experiment(
    logdir: pathlib.Path, all_hparams: Iterable[dict[str, Any]], benchmarks: list[BenchmarkSummary]
) -> None:
  values: dict[str, list[Any]] = collections.defaultdict(list)
  for hparams in all_hparams:
    for name, value in hparams.items():
      if value not in values[name]:
        values[name].append(value)
  # A discrete domain where every value has one type, else none.
  domains = [(name, seen if len({type(v) for v in seen}) == 1 else None) for name, seen in sorted(values.items())]
  metric_tags = sorted(
      {
          tag
          for bench in benchmarks
          for tag, stats in bench.metrics.items()
          if is_judged(tag)
      }
  )
  with TensorBoardWriter(logdir) as writer:
    writer.add(experiment_summary(domains, [(f"{tag}/mean", tag) for tag in metric_tags]))


def _fmt(number: float | None) -> str:
  return "" if number is None else f"{number:.4g}"


def _json_block(value: Any) -> str:
  return "```\n" + json.dumps(value, indent=2, sort_keys=True, default=str) + "\n```"


def _configuration_card(bench: BenchmarkSummary) -> str:
  md = markdown_text  # names and values are the user's: literal text, no table-breaking `|`
  rows = [f"| {md(name)} | {md(json.dumps(value, default=str))} |" for name, value in (bench.options or {}).items()]
  varying = md(", ".join(f"{k}={v}" for k, v in (bench.varying or {}).items()) or "(none)")
  parts = [
      f"### {md(bench.name)}",
      f"generator {md(bench.generator or '')}, key {md(bench.key)}, swept: {varying}",
      "| option | value |\n|---|---|\n" + "\n".join(rows) if rows else "no options",
      "**mesh**\n\n" + (_json_block(bench.mesh) if bench.mesh else "none"),
      "**checkpoint**\n\n" + (_json_block(bench.checkpoint_config) if bench.checkpoint_config else "none"),
  ]
  return "\n\n".join(parts)


def _stats_table(items: list[tuple[str, MetricStatistics]]) -> str:
  lines = ["| metric | mean | std | min | max | unit | n |", "|---|---|---|---|---|---|---|"]
  for tag, stats in items:
    lines.append(
        f"| {tag} | {_fmt(stats.mean)} | {_fmt(stats.std)} | {_fmt(stats.min)}"
        f" | {_fmt(stats.max)} | {stats.unit} | {stats.n} |"
    )
  return "\n".join(lines)


def _inventory_card(bench: BenchmarkSummary) -> str:
  items = [(t, s) for t, s in sorted(bench.metrics.items()) if Tag.parse(t).namespace == "5_inventory"]
  if not items:
    return "no checkpoint inventory was recorded"
  return "### checkpoint inventory\n\n" + _stats_table(items)


def _summary_card(bench: BenchmarkSummary, records: list[RunRecord]) -> str:
  runs, failed = bench.runs, bench.failed
  items = [(t, s) for t, s in sorted(bench.metrics.items()) if is_judged(t)]
  parts = [f"### run summary\n\n{runs} runs, {runs - failed} passed, {failed} failed"]
  if items:
    parts.append(_stats_table(items))
  failures = [r for r in records if r.failed]
  if failures:
    parts.append("### failures")
    parts.extend(_error_card(r) for r in failures)
  elif bench.errors:
    parts.append("### failures")
    parts.extend(f"repeat {e.repeat}, host {e.host}: `{e.text}`" for e in bench.errors)
  return "\n\n".join(parts)


def _error_card(record: RunRecord) -> str:
  error = record.error
  trace = error.traceback if error is not None else ""
  head = f"**repeat {record.repeat}, host {record.host}**: `{'' if error is None else error.text}`"
  return head + ("\n\n```\n" + trace.strip() + "\n```" if trace else "")
