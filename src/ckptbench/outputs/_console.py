"""The end-of-run console tables: one compact table per benchmark and a suite summary."""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ckptbench.api._tags import Tag
from ckptbench.outputs._read import error_text, metric_value



# Logs and CI output are read in wide windows; rich would otherwise fold tables at 80 columns.
_WIDTH_WHEN_NOT_A_TERMINAL = 160


def make_console() -> Console:
  """A stdout console: the terminal's width, or a wide fixed width when piped (unless COLUMNS is set)."""
  if sys.stdout.isatty() or "COLUMNS" in os.environ:
    return Console()
  return Console(width=_WIDTH_WHEN_NOT_A_TERMINAL)


def _fmt(value: Any, digits: int = 4) -> str:
  number = metric_value(value)
  return "" if number is None else f"{number:.{digits}g}"


def benchmark_table(bench: dict[str, Any], all_metrics: bool = False) -> Table:
  """The table of one summary.json benchmark entry: operation, metric, mean ± std, min, max, unit."""
  runs, failed = int(bench.get("runs") or 0), int(bench.get("failed") or 0)
  status = f"[red]{failed}/{runs} failed[/red]" if failed else f"{runs} runs"
  table = Table(title=f"{escape(str(bench.get('name', '')))}  ({status})", title_justify="left", title_style="bold")
  table.add_column("operation")
  table.add_column("metric", overflow="fold")
  table.add_column("mean ± std", justify="right")
  table.add_column("min", justify="right")
  table.add_column("max", justify="right")
  table.add_column("unit")
  metrics = bench.get("metrics") or {}
  multi_host = any(isinstance(s, dict) and s.get("hosts") for s in metrics.values())
  if multi_host:  # the host whose mean was worst (summary.json's `hosts` block)
    table.add_column("slowest host", justify="right")
  for tag, stats in metrics.items():
    parts = Tag.parse(tag)
    if not isinstance(stats, dict) or (not all_metrics and not parts.is_headline(str(stats.get("unit", "")))):
      continue
    mean = f"{_fmt(stats.get('mean'))} ± {_fmt(stats.get('std'), 2)}"
    row = [parts.op, parts.metric, mean, _fmt(stats.get("min")), _fmt(stats.get("max"))]
    row.append(str(stats.get("unit", "")))
    if multi_host:
      hosts = stats.get("hosts") or {}
      row.append(f"{_fmt(hosts.get('slowest_value'))} (host {hosts['slowest_host']})" if hosts else "")
    table.add_row(*row)
  return table


def suite_table(summary: dict[str, Any]) -> Table:
  """Benchmarks, runs, passed and failed of the whole suite."""
  benches = [b for b in summary.get("benchmarks") or [] if isinstance(b, dict)]
  runs = sum(int(b.get("runs") or 0) for b in benches)
  failed = sum(int(b.get("failed") or 0) for b in benches)
  table = Table(title=f"suite {escape(str(summary.get('suite', '')))}", title_justify="left", title_style="bold")
  for column in ("benchmarks", "runs", "passed", "failed"):
    table.add_column(column, justify="right")
  table.add_row(str(len(benches)), str(runs), str(runs - failed), f"[red]{failed}[/red]" if failed else "0")
  return table


def print_suite_tables(summary: dict[str, Any], console: Console | None = None, all_metrics: bool = False) -> None:
  """Prints a table per benchmark, the failures (one line each) and the suite summary.

  Args:
    summary: the content of summary.json.
    console: where to print; default `make_console()` (stdout).
    all_metrics: show every namespace, not only time, throughput and memory.

  Example:
    >>> print_suite_tables(json.loads(pathlib.Path("out/summary.json").read_text()))
  """
  console = console or make_console()
  benches = [b for b in summary.get("benchmarks") or [] if isinstance(b, dict)]
  for bench in benches:
    console.print(benchmark_table(bench, all_metrics))
    for error in bench.get("errors") or []:
      console.print(
          f"  [red]repeat {error.get('repeat')}, host {error.get('host', 0)}:[/red] {escape(error_text(error))}",
          markup=True, highlight=False,
      )
  console.print(suite_table(summary))
