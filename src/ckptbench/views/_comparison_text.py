"""A baseline comparison as a console table, regressions first."""

from __future__ import annotations

import math
import sys

from rich.console import Console
from rich.table import Table

from ckptbench.analysis import verdict_clauses
from ckptbench.api import judged_text
from ckptbench.api import VerdictRecord, threshold_text
from ckptbench.results import Comparison
from ckptbench.views._terminal import print_sentences
from ckptbench.stats import Verdict
from ckptbench.views._terminal import markup_text

_LOG_WIDTH = 160
# asv's marks: + worse, - better; ours add ? (inconclusive) and = (shown equivalent).
_VERDICT_STYLE = {
    Verdict.WORSE: ("+", "bold red"),
    Verdict.BETTER: ("-", "green"),
    Verdict.INCONCLUSIVE: ("?", "yellow"),
    Verdict.EQUIVALENT: ("=", ""),
    Verdict.NOT_JUDGED: ("", "dim"),
}


def _fmt(value: float | None, unit: str = "") -> str:
  if value is None or (isinstance(value, float) and math.isnan(value)):
    return "-"
  text = f"{value:.3g}" if abs(value) < 1e5 else f"{value:.3e}"
  return f"{text} {unit}".rstrip()


def _bound(value: float | None) -> str:
  return "?" if value is None else f"{value:.2f}"


def print_comparison(
    comparison: Comparison, console: Console | None = None, show_all: bool = False, repeated_until_decided: bool = False
) -> None:  # fmt: skip
  """Prints the comparison as a table, regressions first.

  Unchanged non-headline rows and neutral rows are counted in one line
  unless `show_all`; comparison.json always holds every row. `repeated_until_decided`: the runs
  were `num_repeats: auto`'s, so an inconclusive metric is one the time budget left undecided.
  """
  # Off a terminal (CI logs), a wide table keeps metric names on one line.
  console = console or Console(width=None if sys.stdout.isatty() else _LOG_WIDTH)
  if comparison.refused is not None:  # one line: nothing was judged, and why
    console.print(f"[bold red]baseline {markup_text(comparison.baseline_label)}: {markup_text(comparison.refused)}"
                  "[/bold red] (--fail_on_regression exits 3)", highlight=False, soft_wrap=True)
    return
  for warning in comparison.warnings:
    console.print(f"[yellow]warning:[/yellow] {markup_text(warning)}")
  table, hidden = _comparison_table(comparison, show_all)
  if comparison.rows:
    console.print(table)
  print_sentences(
      console, "", f"+ worse, - better, = equivalent, ? inconclusive; * headline: {judged_text()}, what"
      " --fail_on_regression gates" + (f"; {hidden} other rows hidden (--all shows them)" if hidden else ""),
  )
  for clause in verdict_clauses(comparison.threshold):
    print_sentences(console, "", clause)
  print_sentences(console, "rule: ", comparison.rule)
  _print_notes(comparison, console, repeated_until_decided)


def _comparison_table(comparison: Comparison, show_all: bool) -> tuple[Table, int]:
  """The table of the rows shown (regressions, improvements, headline metrics) and how many were hidden."""
  table = Table(
      title=f"Comparison with baseline {markup_text(comparison.baseline_label)}"
      f" (threshold {threshold_text(comparison.threshold)}, alpha {comparison.alpha:g}; intervals: the rule below)"
  )
  table.add_column("", no_wrap=True)
  table.add_column("benchmark", overflow="fold")
  table.add_column("metric", overflow="fold")
  for column in ("baseline", "current", "ratio", "interval", "n"):
    table.add_column(column, justify="right", no_wrap=True)
  hidden = 0
  for row in comparison.rows:
    quiet = row.verdict == Verdict.NOT_JUDGED or (
        not row.judged and row.verdict not in (Verdict.WORSE, Verdict.BETTER)
    )
    if quiet and not show_all:
      hidden += 1
      continue
    mark, style = _VERDICT_STYLE[row.verdict]
    table.add_row(
        mark,
        markup_text(row.name or row.benchmark),
        markup_text(row.metric) + (" *" if row.judged else ""),
        _fmt(row.reference_median, row.unit or ""),
        _fmt(row.current_median, row.unit or ""),
        "-" if row.ratio is None else f"{row.ratio:.2f}x",
        "-" if row.ratio is None else f"{_bound(row.low)}-{_bound(row.high)}",
        f"{row.n_reference}/{row.n_current}",
        style=style,
    )
  return table, hidden


def _counts(rows: list[VerdictRecord]) -> str:
  counts = {v: sum(r.verdict == v for r in rows) for v in Verdict}
  return ", ".join(f"{n} {v.value}" for v, n in counts.items() if n) or "none"


def _print_notes(comparison: Comparison, console: Console, repeated_until_decided: bool) -> None:
  """What the table cannot say: repeats a decision needs, nothing matched and why, what one side lacks, the counts."""
  needed = comparison.repeats_needed()
  if needed:
    remedy = ("the time budget ended num_repeats: auto before deciding (a larger --time_budget lets it)"
              if repeated_until_decided else "num_repeats: auto decides for you")
    console.print(
        f"[yellow]inconclusive:[/yellow] {len(comparison.headline_inconclusive)} headline metric(s);"
        f" about {needed} repeats a side would decide at the noise observed ({remedy})"
    )
  if comparison.matched_nothing:
    console.print(
        "[bold red]no benchmark of this run is in the baseline: nothing was compared[/bold red]"
        " (a key hashes generator, options, mesh and checkpoint config; --fail_on_regression exits 3)"
    )
  for line in comparison.unmatched:
    console.print(f"unmatched: {markup_text(line)}", highlight=False)
  for side, missing in (("baseline only", comparison.only_in_baseline), ("run only", comparison.only_in_current)):
    for kind, names in missing.items():
      if names:
        console.print(f"{kind} in the {side}: " + markup_text(", ".join(names)))
  summary = "headline: " + _counts([r for r in comparison.rows if r.judged])
  others = [r for r in comparison.rows if not r.judged]
  if others:
    summary += "; other rows (shown, never gated): " + _counts(others)
  if comparison.headline_regressions:
    summary += f"; [bold red]{len(comparison.headline_regressions)} headline regression(s)[/bold red]"
  elif comparison.no_regression:
    summary += "; [green]no regression[/green] (every headline metric equivalent or better)"
  console.print(summary)
