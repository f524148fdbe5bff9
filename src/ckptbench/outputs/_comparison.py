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
from ckptbench.outputs._results import write_json_atomic
from ckptbench.outputs._unmatched import unmatched_reasons
from ckptbench.stats import (
    DEFAULT_ALPHA,
    DEFAULT_THRESHOLD,
    Direction,
    Verdict,
    absolute_floor,
    compare_samples,
)

_LOG_WIDTH = 160
# Manifest fields that identify the machine; a difference makes timings incomparable.
_MACHINE_FIELDS = ("hostname", "platform", "cpu_count", "backend", "device_kind", "device_count", "process_count")
_VERDICT_ORDER = {
    Verdict.REGRESSED: 0,
    Verdict.IMPROVED: 1,
    Verdict.NOT_ENOUGH_SAMPLES: 2,
    Verdict.UNCHANGED: 3,
    Verdict.NOT_JUDGED: 4,
}
# asv's marks: + worse, - better; ours add ? (too few samples to tell).
_VERDICT_STYLE = {
    Verdict.REGRESSED: ("+", "bold red"),
    Verdict.IMPROVED: ("-", "green"),
    Verdict.NOT_ENOUGH_SAMPLES: ("?", "yellow"),
    Verdict.UNCHANGED: ("", ""),
    Verdict.NOT_JUDGED: ("", "dim"),
}


def compare_documents(
    baseline: Baseline,
    current: Baseline,
    threshold: float = DEFAULT_THRESHOLD,
    alpha: float = DEFAULT_ALPHA,
) -> Comparison:
  """Compares two baseline documents (see `build_baseline`), metric by metric."""
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
      rows.append(_row(name, key, tag, base_metrics[tag], cur_metrics[tag], threshold, alpha))
  rows.sort(key=lambda r: (_VERDICT_ORDER[r.verdict], not r.headline, r.benchmark, r.metric))
  return Comparison(
      baseline_label=baseline.label,
      threshold=threshold,
      alpha=alpha,
      rows=tuple(rows),
      only_in_baseline=only_base,
      only_in_current=only_cur,
      warnings=tuple(_machine_warnings(baseline.manifest, current.manifest)),
      unmatched=tuple(unmatched_reasons(base_benchmarks, cur_benchmarks)),
  )


def _row(name, key, tag, base: Mapping[str, Any], cur: Mapping[str, Any], threshold, alpha):
  unit = cur["unit"]
  direction = Direction(cur["direction"])
  result = compare_samples(
      base["across_hosts"]["values"],
      cur["across_hosts"]["values"],
      direction,
      threshold=threshold,
      alpha=alpha,
      min_abs_change=absolute_floor(unit),
  )
  return ComparisonRow(
      benchmark=name, key=key, metric=tag, unit=unit, headline=bool(cur.get("headline")),
      **{f.name: getattr(result, f.name) for f in dataclasses.fields(result)},
  )


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
    alpha: float = DEFAULT_ALPHA,
) -> Comparison:
  """Compares the finished run in `out_dir` with a baseline; writes OUT/comparison.json.

  Args:
    baseline_file: a file written by `capture_baseline`.
    out_dir: the run's output directory (its results.jsonl; warmup runs ignored).
    threshold: the relative change that counts as a regression (0.1 = 10%).
    alpha: significance level of the Mann-Whitney U test.

  Returns:
    The `Comparison`; `comparison.exit_code(fail_on_regression=True)` gives 3
    when a headline metric regressed.

  Raises:
    CkptbenchError: when either side cannot be read.

  Example:
    >>> c = compare_to_baseline("baselines/3f9a.json", "out")  # doctest: +SKIP
    >>> [r.metric for r in c.headline_regressions]  # doctest: +SKIP
    ['save_0_basics/time_s']
  """
  baseline = load_baseline(baseline_file)
  current = build_baseline(*read_run(out_dir), label="current")
  comparison = compare_documents(baseline, current, threshold=threshold, alpha=alpha)
  write_json_atomic(pathlib.Path(out_dir) / "comparison.json", comparison.to_json())
  return comparison


def _large(row: ComparisonRow, threshold: float) -> bool:
  if row.ratio is None or row.ratio <= 0:
    return False
  return max(row.ratio, 1 / row.ratio) > 1 + threshold


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
      f" (threshold {comparison.threshold:.0%}, alpha {comparison.alpha:g})"
  )
  table.add_column("", no_wrap=True)
  table.add_column("benchmark", overflow="fold")
  table.add_column("metric", overflow="fold")
  for column in ("baseline", "current", "ratio", "95% CI", "p", "n"):
    table.add_column(column, justify="right", no_wrap=True)
  hidden = 0
  for row in comparison.rows:
    # By default: every regression and improvement, and the headline metrics.
    quiet = row.verdict == Verdict.NOT_JUDGED or (
        not row.headline and row.verdict not in (Verdict.REGRESSED, Verdict.IMPROVED)
    )
    if quiet and not show_all:
      hidden += 1
      continue
    mark, style = _VERDICT_STYLE[row.verdict]
    if row.verdict == Verdict.UNCHANGED and _large(row, comparison.threshold):
      mark = "~"  # as asv: beyond the threshold, but not significant
    table.add_row(
        mark,
        escape(row.benchmark),
        escape(row.metric) + (" *" if row.headline else ""),
        _fmt(row.baseline, row.unit),
        _fmt(row.current, row.unit),
        "-" if row.ratio is None else f"{row.ratio:.2f}x",
        "-" if row.ci_low is None and row.ci_high is None else f"{_bound(row.ci_low)}-{_bound(row.ci_high)}",
        "-" if row.p_value is None else f"{row.p_value:.3f}",
        f"{row.n_baseline}/{row.n_current}",
        style=style,
    )
  if comparison.rows:
    console.print(table)
  console.print(
      "+ regressed, - improved, ~ large change but not significant, ? too few samples to tell,"
      " * headline (time, throughput, peak memory)"
      + (f"; {hidden} other rows hidden (--all shows them)" if hidden else "")
  )
  if any(r.verdict == Verdict.NOT_ENOUGH_SAMPLES for r in comparison.rows):
    console.print(
        f"too few samples: with these repeat counts no change can reach p < {comparison.alpha:g};"
        " run 5 or more repeats on each side (num_repeats)"
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
  console.print(
      ", ".join(f"{n} {v.value}" for v, n in counts.items() if n)
      + (f"; [bold red]{len(comparison.headline_regressions)} headline regression(s)[/bold red]"
         if comparison.headline_regressions else "")
  )
