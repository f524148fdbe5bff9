"""Compare a finished run with a baseline: OUT/comparison.json and a console table."""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import sys
from typing import Any, Mapping

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ckptbench.outputs._baseline import Baseline, build_baseline, load_baseline, read_run
from ckptbench.outputs._comparison_record import Comparison, ComparisonRow
from ckptbench.outputs._read import read_outputs
from ckptbench.outputs._results import write_json_atomic
from ckptbench.outputs._unmatched import unmatched_reasons
from ckptbench.api._verdict_record import Verdict
from ckptbench.stats import DEFAULT_THRESHOLD, Design, Direction, absolute_floor, compare_samples

_LOG_WIDTH = 160
# Manifest fields that identify the machine; a difference makes timings incomparable.
_MACHINE_FIELDS = ("hostname", "platform", "cpu_count", "backend", "device_kind", "device_count", "process_count")
_VERDICT_ORDER = {
    Verdict.WORSE: 0,
    Verdict.INCONCLUSIVE: 1,
    Verdict.BETTER: 2,
    Verdict.EQUIVALENT: 3,
    Verdict.NOT_JUDGED: 4,
}
# asv's marks: + worse, - better; ours add ? (inconclusive) and = (shown equivalent).
_VERDICT_STYLE = {
    Verdict.WORSE: ("+", "bold red"),
    Verdict.BETTER: ("-", "green"),
    Verdict.INCONCLUSIVE: ("?", "yellow"),
    Verdict.EQUIVALENT: ("=", ""),
    Verdict.NOT_JUDGED: ("", "dim"),
}


def compare_documents(
    baseline: Baseline,
    current: Baseline,
    threshold: float = DEFAULT_THRESHOLD,
    design: Design = Design(),
) -> Comparison:
  """Compares two baseline documents (see `build_baseline`), metric by metric, unpaired.

  `design` says how many looks at the data the run took (adaptive repeats
  compare with the baseline after several rounds), so the intervals keep
  their level over all of them.
  """
  base_benchmarks, cur_benchmarks = baseline.benchmarks, current.benchmarks
  rows: list[ComparisonRow] = []
  only_base: dict[str, list[str]] = {"benchmarks": [], "metrics": []}
  only_cur: dict[str, list[str]] = {"benchmarks": [], "metrics": []}
  for key in sorted(set(base_benchmarks) | set(cur_benchmarks)):
    if key not in cur_benchmarks:
      only_base["benchmarks"].append(f"{base_benchmarks[key].name} [{key}]")
      continue
    if key not in base_benchmarks:
      only_cur["benchmarks"].append(f"{cur_benchmarks[key].name} [{key}]")
      continue
    name = cur_benchmarks[key].name
    base_metrics, cur_metrics = base_benchmarks[key].metrics, cur_benchmarks[key].metrics
    only_base["metrics"] += [f"{name}: {t}" for t in sorted(set(base_metrics) - set(cur_metrics))]
    only_cur["metrics"] += [f"{name}: {t}" for t in sorted(set(cur_metrics) - set(base_metrics))]
    for tag in sorted(set(base_metrics) & set(cur_metrics)):
      rows.append(_row(name, key, tag, base_metrics[tag], cur_metrics[tag], threshold, design))
  rows.sort(key=lambda r: (_VERDICT_ORDER[r.verdict], not r.headline, r.benchmark, r.metric))
  return Comparison(
      baseline_label=baseline.label,
      threshold=threshold,
      alpha=design.alpha,
      rule=design.rule(threshold, paired=False),
      rows=tuple(rows),
      only_in_baseline=only_base,
      only_in_current=only_cur,
      warnings=tuple(_machine_warnings(baseline.manifest, current.manifest)),
      unmatched=tuple(unmatched_reasons(base_benchmarks, cur_benchmarks)),
  )


def _row(name, key, tag, base: Mapping[str, Any], cur: Mapping[str, Any], threshold, design):
  unit = cur["unit"]
  direction = Direction(cur["direction"])
  result = compare_samples(
      base["across_hosts"]["values"],
      cur["across_hosts"]["values"],
      direction,
      threshold=threshold,
      design=design,
      min_abs_change=absolute_floor(unit),
  )
  return ComparisonRow(
      benchmark=name, key=key, metric=tag, unit=unit, headline=bool(cur.get("headline")),
      **{f.name: getattr(result, f.name) for f in dataclasses.fields(result)},
  )


def run_design(out_dir: str | os.PathLike) -> Design:
  """The design a run's verdicts used, as its summary.json's `repeats` records (default: one look)."""
  summary = read_outputs(out_dir).summary
  repeats = summary.repeats if summary is not None and summary.repeats else {}
  return Design(alpha=repeats.get("alpha", Design().alpha), looks=repeats.get("looks", 1))


def _machine_warnings(base: Mapping[str, Any], cur: Mapping[str, Any]) -> list[str]:
  differing = [f for f in _MACHINE_FIELDS if f in base and f in cur and base[f] != cur[f]]
  if not differing:
    return []
  details = "; ".join(f"{f}: {base[f]!r} -> {cur[f]!r}" for f in differing)
  return [f"the baseline ran on a different machine ({details}); timings may not be comparable"]


def compare_to_baseline(
    baseline_file: str | os.PathLike,
    out_dir: str | os.PathLike,
    threshold: float = DEFAULT_THRESHOLD,
    design: Design | None = None,
) -> Comparison:
  """Compares the finished run in `out_dir` with a baseline; writes OUT/comparison.json.

  Args:
    baseline_file: a file written by `capture_baseline`.
    out_dir: the run's output directory (its results.jsonl; warmup runs ignored).
    threshold: the relative change that counts as a regression (0.1 = 10%).
    design: the error rate and how many looks at the data share it; None: as
      the run's summary.json records (`repeats`: auto repeats looked several times).

  Returns:
    The `Comparison`; `comparison.exit_code(fail_on_regression=True)` gives 3
    when a headline metric is worse, 5 when one is inconclusive.

  Raises:
    CkptbenchError: when either side cannot be read.

  Example:
    >>> c = compare_to_baseline("baselines/3f9a.json", "out")  # doctest: +SKIP
    >>> [r.metric for r in c.headline_regressions]  # doctest: +SKIP
    ['save_0_basics/time_s']
  """
  baseline = load_baseline(baseline_file)
  current = build_baseline(*read_run(out_dir), label="current")
  if design is None:
    design = run_design(out_dir)
  comparison = compare_documents(baseline, current, threshold=threshold, design=design)
  write_json_atomic(pathlib.Path(out_dir) / "comparison.json", comparison.to_json())
  return comparison


def _fmt(value: float | None, unit: str = "") -> str:
  if value is None or (isinstance(value, float) and math.isnan(value)):
    return "-"
  text = f"{value:.3g}" if abs(value) < 1e5 else f"{value:.3e}"
  return f"{text} {unit}".rstrip()


def _bound(value: float | None) -> str:
  return "?" if value is None else f"{value:.2f}"


def print_comparison(comparison: Comparison, console: Console | None = None, show_all: bool = False) -> None:
  """Prints the comparison as a table, regressions first.

  Unchanged non-headline rows and neutral rows are counted in one line
  unless `show_all`; comparison.json always holds every row.
  """
  # Off a terminal (CI logs), a wide table keeps metric names on one line.
  console = console or Console(width=None if sys.stdout.isatty() else _LOG_WIDTH)
  for warning in comparison.warnings:
    console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
  table = Table(
      title=f"Comparison with baseline {escape(comparison.baseline_label)}"
      f" (threshold {comparison.threshold:.0%}, {1 - comparison.alpha:.0%} intervals)"
  )
  table.add_column("", no_wrap=True)
  table.add_column("benchmark", overflow="fold")
  table.add_column("metric", overflow="fold")
  for column in ("baseline", "current", "ratio", "interval", "n"):
    table.add_column(column, justify="right", no_wrap=True)
  hidden = 0
  for row in comparison.rows:
    # By default: every regression and improvement, and the headline metrics.
    quiet = row.verdict == Verdict.NOT_JUDGED or (
        not row.headline and row.verdict not in (Verdict.WORSE, Verdict.BETTER)
    )
    if quiet and not show_all:
      hidden += 1
      continue
    mark, style = _VERDICT_STYLE[row.verdict]
    table.add_row(
        mark,
        escape(row.benchmark),
        escape(row.metric) + (" *" if row.headline else ""),
        _fmt(row.baseline, row.unit),
        _fmt(row.current, row.unit),
        "-" if row.ratio is None else f"{row.ratio:.2f}x",
        "-" if row.ratio is None else f"{_bound(row.ci_low)}-{_bound(row.ci_high)}",
        f"{row.n_baseline}/{row.n_current}",
        style=style,
    )
  if comparison.rows:
    console.print(table)
  console.print(
      "+ worse, - better (interval excludes 1, ratio beyond the threshold), = equivalent (interval within"
      " +-threshold), ? inconclusive, * headline (time, throughput, peak memory)"
      + (f"; {hidden} other rows hidden (--all shows them)" if hidden else ""), highlight=False
  )
  console.print(f"rule: {escape(comparison.rule)}", highlight=False)
  needed = comparison.repeats_needed()
  if needed:
    console.print(
        f"[yellow]inconclusive:[/yellow] {len(comparison.headline_inconclusive)} headline metric(s);"
        f" about {needed} repeats a side would decide at the noise observed (num_repeats: auto decides for you)"
    )
  if comparison.matched_nothing:
    console.print(
        "[bold red]no benchmark of this run is in the baseline: nothing was compared[/bold red]"
        " (a key hashes generator, options, mesh and checkpoint config; --fail_on_regression exits 3)"
    )
  for line in comparison.unmatched:
    console.print(f"unmatched: {escape(line)}", highlight=False)
  for side, missing in (("baseline only", comparison.only_in_baseline), ("run only", comparison.only_in_current)):
    for kind, names in missing.items():
      if names:
        console.print(f"{kind} in the {side}: " + escape(", ".join(names)))
  counts = {v: sum(r.verdict == v for r in comparison.rows) for v in Verdict}
  summary = ", ".join(f"{n} {v.value}" for v, n in counts.items() if n)
  if comparison.headline_regressions:
    summary += f"; [bold red]{len(comparison.headline_regressions)} headline regression(s)[/bold red]"
  elif comparison.no_regression:
    summary += "; [green]no regression[/green] (every headline metric equivalent or better)"
  console.print(summary)
