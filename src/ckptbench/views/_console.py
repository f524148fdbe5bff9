"""The end-of-run console tables: the verdict first, then (with -v) one table per benchmark, then the suite."""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ckptbench.api import BenchmarkSummary, RunRecord, SuiteSummary
from ckptbench.api import Tag
from ckptbench.analysis import (
    BETTER,
    LARGE,
    LEGEND,
    TOO_FEW,
    WORSE,
    VerdictTable,
    build_verdict,
    interval_note,
    judgement,
    median_text,
    outlier_lines,
    ratio_text,
)

# Logs and CI output are read in wide windows; rich would otherwise fold tables at 80 columns.
_WIDTH_WHEN_NOT_A_TERMINAL = 160


def make_console() -> Console:
  """A stdout console: the terminal's width, or a wide fixed width when piped (unless COLUMNS is set)."""
  if sys.stdout.isatty() or "COLUMNS" in os.environ:
    return Console()
  return Console(width=_WIDTH_WHEN_NOT_A_TERMINAL)


def is_headline(tag: Tag, unit: str) -> bool:
  """The metrics a per-benchmark table shows: `Tag.is_headline`, each throughput once.

  A throughput row is an operation's own total bandwidth: the `save` block
  holds copies of its halves' rates, the background half repeats the save's,
  and `save_blocking_gbps` (bytes over the time the caller was blocked) is no
  bandwidth. Everything else (breakdowns, roofline shares, counters) is in
  TensorBoard and the report.
  """
  if tag.namespace == "4_throughput":
    return tag.metric.endswith("_total_gbps") and not tag.op.endswith(("_blocking", "_background"))
  return tag.is_headline(unit)


def _fmt(number: float | None, digits: int = 4) -> str:
  return "" if number is None else f"{number:.{digits}g}"


def benchmark_table(bench: BenchmarkSummary, all_metrics: bool = False) -> Table:
  """The table of one summary.json benchmark entry: operation, metric, mean ± std, min, max, unit."""
  status = f"[red]{bench.failed}/{bench.runs} failed[/red]" if bench.failed else f"{bench.runs} runs"
  table = Table(title=f"{escape(bench.name)}  ({status})", title_justify="left", title_style="bold")
  table.add_column("operation")
  table.add_column("metric", overflow="fold")
  table.add_column("mean ± std", justify="right")
  table.add_column("min", justify="right")
  table.add_column("max", justify="right")
  table.add_column("unit")
  metrics = bench.metrics
  multi_host = any(s.hosts for s in metrics.values())
  if multi_host:  # the host whose mean was worst (summary.json's `hosts` block)
    table.add_column("slowest host", justify="right")
  for tag, stats in metrics.items():
    parts = Tag.parse(tag)
    if not all_metrics and not is_headline(parts, stats.unit):
      continue
    mean = f"{_fmt(stats.mean)} ± {_fmt(stats.std, 2)}"
    row = [parts.op, parts.metric, mean, _fmt(stats.min), _fmt(stats.max), stats.unit]
    if multi_host:
      hosts = stats.hosts
      row.append(f"{_fmt(hosts.slowest_value)} (host {hosts.slowest_host})" if hosts else "")
    table.add_row(*row)
  return table


def suite_table(summary: SuiteSummary) -> Table:
  """Benchmarks, runs, passed and failed of the whole suite."""
  runs, failed = summary.runs, summary.failed
  table = Table(title=f"suite {escape(summary.suite)}", title_justify="left", title_style="bold")
  for column in ("benchmarks", "runs", "passed", "failed"):
    table.add_column(column, justify="right")
  table.add_row(str(len(summary.benchmarks)), str(runs), str(runs - failed), f"[red]{failed}[/red]" if failed else "0")
  return table


_JUDGEMENT_STYLE = {BETTER: "green", WORSE: "bold red", LARGE: "yellow", TOO_FEW: "yellow"}


def verdict_table(table: VerdictTable, title: str) -> Table:
  """The variants side by side: a row per headline metric, a column per variant."""
  by_key = {v.key: v for v in table.variants}
  out = Table(title=f"{escape(title)}  (reference: {escape(by_key[table.reference].label)})",
              title_justify="left", title_style="bold")
  out.add_column("metric")
  out.add_column("unit")
  for variant in table.variants:
    out.add_column(escape(variant.label), justify="right", overflow="fold")
  for metric in table.metrics:
    row = [escape(metric.label), escape(metric.unit)]
    for variant in table.variants:
      cell = table.cell(metric.tag, variant.key)
      if cell is None:
        row.append("-")
        continue
      ratio = ratio_text(cell)
      style = _JUDGEMENT_STYLE.get(judgement(cell.comparison))
      row.append(escape(median_text(cell)) + "\n" + (f"[{style}]{escape(ratio)}[/]" if style else escape(ratio)))
    out.add_row(*row)
  return out


def effects_table(table: VerdictTable) -> Table | None:
  """Main effect of each swept option (several axes only): typical ratio to the reference's value."""
  if not table.effects:
    return None
  out = Table(title="main effect of each option (geometric mean ratio over variants differing in it alone)",
              title_justify="left", title_style="bold")
  out.add_column("option", overflow="fold")
  out.add_column("pairs", justify="right")
  for metric in table.metrics:
    out.add_column(escape(metric.label), justify="right", overflow="fold")
  for effect in table.effects:
    row = [escape(f"{effect.axis}={effect.level} vs {effect.reference_level}"), str(effect.pairs)]
    row += [f"{effect.ratios[m.tag]:.2f}x" if m.tag in effect.ratios else "-" for m in table.metrics]
    out.add_row(*row)
  return out


def print_verdict(table: VerdictTable, title: str, console: Console) -> None:
  """The verdict, the main effects, then the legend and any outlying repeats."""
  console.print(verdict_table(table, title))
  effects = effects_table(table)
  if effects is not None:
    console.print(effects)
  console.print(escape(interval_note(table)), highlight=False)
  console.print(escape(LEGEND), highlight=False)
  for line in outlier_lines(table):
    console.print(f"[yellow]! outlier:[/yellow] {escape(line)}", highlight=False)


def print_suite_tables(
    summary: SuiteSummary,
    console: Console | None = None,
    all_metrics: bool = False,
    records: Sequence[RunRecord] | None = None,
    detail: bool = False,
) -> None:
  """Prints the verdict, the failures (one line each) and the suite summary.

  Args:
    summary: summary.json, typed.
    console: where to print; default `make_console()` (stdout).
    all_metrics: in the per-benchmark tables, show every namespace.
    records: the results.jsonl records; the verdict table needs their samples.
      Without them the per-benchmark tables are printed instead.
    detail: also print a table per benchmark (`ckptbench run -v`).

  Example:
    >>> out = read_outputs("out")
    >>> print_suite_tables(out.summary, records=out.results)
  """
  console = console or make_console()
  verdict = build_verdict(records, summary.reference) if records else None
  if verdict is not None:
    print_verdict(verdict, f"verdict: {summary.suite}", console)
  for bench in summary.benchmarks:
    # A benchmark that measured nothing (every run failed early) gets its error lines, not an empty table.
    if (detail or all_metrics or verdict is None) and bench.metrics:
      console.print(benchmark_table(bench, all_metrics))
    for error in bench.errors:
      console.print(
          f"  [red]{escape(bench.name)} repeat {error.repeat}, host {error.host}:[/red]"
          f" {escape(error.text)}",
          markup=True, highlight=False,
      )
  console.print(suite_table(summary))
