"""The end-of-run console tables: the verdict first, then (with -v) one table per benchmark, then the suite."""

from __future__ import annotations

from typing import Any, Sequence

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from ckptbench.api import BenchmarkSummary, RunRecord, SuiteSummary
from ckptbench.api import Tag, is_judged
from ckptbench.analysis import stability_warnings
from ckptbench.analysis import (
    VerdictTable,
    build_verdict,
    console_legend,
    judgement,
    median_text,
    ratio_text,
    rule_marks,
)
from ckptbench.views._effects_view import print_effects
from ckptbench.views._floor_view import print_floor
from ckptbench.views._terminal import make_console, markup_text, print_sentences


def _fmt(number: float | None, digits: int = 4) -> str:
  return "" if number is None else f"{number:.{digits}g}"


def benchmark_table(bench: BenchmarkSummary, all_metrics: bool = False) -> Table:
  """The table of one summary.json benchmark entry: operation, metric, mean ± std, min, max, unit (the metrics a
  suite is judged on, or every one)."""
  status = f"[red]{bench.failed}/{bench.runs} failed[/red]" if bench.failed else f"{bench.runs} runs"
  table = Table(title=f"{markup_text(bench.name)}  ({status})", title_justify="left", title_style="bold")
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
    if not all_metrics and not is_judged(tag):  # the rest: TensorBoard, the report, --all_metrics
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
  table = Table(title=f"suite {markup_text(summary.suite)}", title_justify="left", title_style="bold")
  for column in ("benchmarks", "runs", "passed", "failed"):
    table.add_column(column, justify="right")
  table.add_row(str(len(summary.benchmarks)), str(runs), str(runs - failed), f"[red]{failed}[/red]" if failed else "0")
  return table


_JUDGEMENT_STYLE = {"better": "green", "worse": "bold red", "inconclusive": "yellow"}


def verdict_table(table: VerdictTable, title: str, variants: Sequence[Any] | None = None) -> Table:
  """The variants side by side: a row per headline metric, a column per variant (all, or `variants`)."""
  variants = table.variants if variants is None else variants
  out = Table(title=f"{markup_text(title)}  (reference: {markup_text('; '.join(table.reference_labels()))})",
              title_justify="left", title_style="bold")
  out.add_column("metric")
  out.add_column("unit")
  for variant in variants:
    out.add_column(markup_text(variant.label), justify="right", overflow="fold")
  marks = rule_marks(table)  # which rule decided each row, where the rows follow different rules
  for metric in table.metrics:
    label = f"{metric.label} {marks[metric.tag]}" if metric.tag in marks else metric.label
    row = [markup_text(label), markup_text(metric.unit)]
    for variant in variants:
      cell = table.cell(metric.tag, variant.key)
      if cell is None:
        row.append("-")
        continue
      ratio = ratio_text(cell, table.is_reference(variant.key))
      style = _JUDGEMENT_STYLE.get(judgement(cell.verdict))
      row.append(markup_text(median_text(cell)) + "\n" + (f"[{style}]{markup_text(ratio)}[/]" if style else markup_text(ratio)))
    out.add_row(*row)
  return out


def verdict_tables(table: VerdictTable, title: str, width: int) -> list[Table]:
  """The verdict in as few tables as fit in `width` columns: each the reference and some of the others.

  One table with a column per variant is clearest; with many variants (or long
  labels) it would be folded past reading, so the other variants are split into
  groups, each table repeating the reference's column.
  """
  reference = [v for v in table.variants if table.is_reference(v.key)]
  others = [v for v in table.variants if not table.is_reference(v.key)]
  for per_table in range(len(others), 0, -1):
    groups = [others[i : i + per_table] for i in range(0, len(others), per_table)] or [[]]
    titles = [title] if len(groups) == 1 else [f"{title} ({i}/{len(groups)})" for i in range(1, len(groups) + 1)]
    tables = [verdict_table(table, t, reference + group) for t, group in zip(titles, groups)]
    if per_table == 1 or all(_natural_width(t) <= width for t in tables):
      return tables
  return [verdict_table(table, title)]  # no variant but the reference


def _natural_width(table: Table) -> int:
  """The width `table` takes unfolded."""
  console = Console(width=100_000)
  return Measurement.get(console, console.options, table).maximum


def print_verdict(table: VerdictTable, title: str, console: Console, verbose: bool = False) -> None:
  """The verdict, then the legend: what the table uses, each rule once (`verbose`: all of it)."""
  for part in verdict_tables(table, title, console.width):
    console.print(part)
  for prefix, text in console_legend(table, verbose):
    print_sentences(console, "[yellow]! outliers:[/yellow] " if prefix.startswith("!") else markup_text(prefix), text)


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
  verdict = build_verdict(records, summary.reference, summary.verdicts) if records else None
  if verdict is not None:
    print_verdict(verdict, f"verdict: {summary.suite}", console, verbose=detail)
  print_effects(summary, console)
  print_floor(summary, console)
  for line in stability_warnings(records or ()):
    print_sentences(console, "[yellow]warning:[/yellow] ", line)
  for bench in summary.benchmarks:
    # A benchmark that measured nothing (every run failed early) gets its error lines, not an empty table.
    if (detail or all_metrics or verdict is None) and bench.metrics:
      console.print(benchmark_table(bench, all_metrics))
    for error in bench.errors:
      console.print(
          f"  [red]{markup_text(bench.name)} repeat {error.repeat}, host {error.host}:[/red]"
          f" {markup_text(error.text)}",
          markup=True, highlight=False,
      )
  console.print(suite_table(summary))
