"""What a verdict's words and marks mean, in words generated from the rule and the threshold asked for.

One legend: the console's verdict table, the report, the baseline comparison
table and the matrix page all state `verdict_clauses(threshold)`, with the
threshold the verdicts were decided at (`VerdictRecord.threshold`,
`Comparison.threshold`), never a constant. And the outlying repeats, summed up
in two sentences (how many, where, the worst) rather than a line per repeat.
"""

from __future__ import annotations

import collections
from typing import Iterable

from ckptbench.api import VerdictRecord, judged_text, threshold_text
from ckptbench.analysis._verdict import VerdictTable, number


def verdict_clauses(threshold: float | None) -> list[str]:
  """The four words at `threshold`, a clause each (every legend states these).

  Example:
    >>> verdict_clauses(0.25)[0]
    'worse / better: the interval of the ratio excludes 1 and the ratio is beyond 25% (as asv decides)'
  """
  at = threshold_text(threshold)
  return [
      f"worse / better: the interval of the ratio excludes 1 and the ratio is beyond {at} (as asv decides)",
      f"equivalent: the narrower equivalence interval (two one-sided tests) lies within +-{at}",
      "inconclusive: neither (more repeats would decide)",
  ]


def thresholds(verdicts: Iterable[VerdictRecord]) -> list[float | None]:
  """The thresholds `verdicts` were decided at (one, as a run decides them)."""
  return list(dict.fromkeys(v.threshold for v in verdicts))


def table_legend(table: VerdictTable) -> list[str]:
  """The verdict table's legend, a clause per line: the words at the verdicts' threshold, the interval, the mark."""
  found = thresholds(c.verdict for c in table.cells.values() if c.verdict is not None) or [None]
  if len(found) > 1:  # never from one run; say so rather than pick one
    clauses = [f"at threshold {threshold_text(t)}: " + "; ".join(verdict_clauses(t)) for t in found]
  else:
    clauses = verdict_clauses(found[0])
  return [
      *clauses,
      "[low-high] after a ratio: Hodges-Lehmann interval of the ratio (per round when rounds interleave), the"
      " equivalence interval for equivalent, the two-sided one otherwise (levels: the rule below)",
      f"judged: {judged_text()} (the same metrics --fail_on_regression gates)",
      "! a repeat lies far from the others (modified z-score; about 1 in 100 normal repeats is flagged)",
  ]


def rules(table: VerdictTable) -> list[str]:
  """The rules the table's verdicts were decided by, as summary.json states them, in the order of the rows
  that use them (the timed runs' rule; the memory pass's for host memory)."""
  return list(dict.fromkeys(
      c.verdict.rule for m in table.metrics for v in table.variants
      for c in [table.cell(m.tag, v.key)] if c is not None and c.verdict is not None
  ))  # fmt: skip


def rule_marks(table: VerdictTable) -> dict[str, str]:
  """{metric tag: the marks of the rules its row was decided by, e.g. "(2)"}; none where one rule decided all."""
  numbered = {rule: i for i, rule in enumerate(rules(table), 1)}
  if len(numbered) < 2:
    return {}
  marks = {}
  for metric in table.metrics:
    used = dict.fromkeys(c.verdict.rule for v in table.variants
                         for c in [table.cell(metric.tag, v.key)] if c is not None and c.verdict is not None)  # fmt: skip
    if used:
      marks[metric.tag] = "(" + ",".join(str(numbered[r]) for r in used) + ")"
  return marks


def short_rule(rule: str) -> str:
  """A rule's first clause, what it is, without its looks' shares and its verdict clauses (the console's
  legend; `-v` and the report state it whole).

  Example:
    >>> short_rule("Hodges-Lehmann 96.25% interval of the per-round (paired) ratio, alpha 0.05 spent over 6 looks"
    ...            " (worse/better: 0.05 of it at each early look; ...); worse/better: ...")
    'Hodges-Lehmann 96.25% interval of the per-round (paired) ratio, over 6 looks'
  """
  head, looks, rest = rule.partition(", alpha ")
  if looks:
    count = rest.split(" looks", 1)[0].rsplit(" ", 1)[-1]
    return f"{head}, over {count} looks" if count.isdigit() else head
  clauses = rule.split("; ")
  return "; ".join(clauses[:2]) if rule.startswith("memory pass") else clauses[0]


def console_legend(table: VerdictTable, verbose: bool = False) -> list[tuple[str, str]]:
  """The console's lines under the verdict table, as (prefix, text): the words at the verdicts' threshold,
  each rule once (marked as the rows that follow it), and the outlying repeats summed up, when there are
  any. `verbose` (`-v`) adds what the intervals are, what is judged, and each rule whole."""
  found = thresholds(c.verdict for c in table.cells.values() if c.verdict is not None)
  lines: list[tuple[str, str]] = [("", interval_note(table))]
  if verbose or len(found) > 1:
    lines += [("", clause) for clause in table_legend(table)]
  elif found:  # (no verdicts: no words in the table)
    at = threshold_text(found[0])
    lines.append(("", f"worse / better: the ratio's interval excludes 1 and the ratio is beyond {at}; equivalent:"
                      f" the interval lies within +-{at}; inconclusive: neither"))  # fmt: skip
  marks = rules(table)
  for i, rule in enumerate(marks, 1):
    prefix = f"({i}) rule: " if len(marks) > 1 else "rule: "
    lines.append((prefix, rule if verbose else short_rule(rule)))
  outliers = outlier_summary(table)
  if outliers:
    lines.append(("! outliers: ", outliers if verbose else outliers.split(". The worst: ")[0] + "."))
  if not verbose:
    lines.append(("", "-v: what each interval is, what is judged, the rules whole and the worst outlier"))
  return lines


def interval_note(table: VerdictTable) -> str:
  """What the intervals are, with the coverage the repeat counts really give."""
  coverages = sorted({c.interval.coverage for c in table.cells.values() if c.interval.n > 1})
  if not coverages:
    return "one repeat per variant: no interval (num_repeats: auto repeats until decided)"
  low, high = coverages[0], coverages[-1]
  cover = f"{low:.0%}" if low == high else f"{low:.0%} to {high:.0%}"
  return (f"[low, high]: distribution-free interval of the median over repeats, coverage {cover}"
          " (the full range below 6 repeats)")


_PLACES_NAMED = 4


def outlier_summary(table: VerdictTable) -> str | None:
  """The outlying repeats in two sentences, how many and where, then the worst; None when there are none.

  Example: `5 of 80 times lie far from their variant's others: save time 4, load time 1, in
  use_ocdbt=True (3), use_ocdbt=False (2). The worst: use_ocdbt=True, save time of repeat 7: 1.2 s
  against a median of 0.5 s (modified z +9.1).`
  """
  found = table.outliers()
  if not found:
    return None
  flagged_metrics = {m.tag for _, m, _ in found}
  times = sum(len(c.samples) for (tag, _), c in table.cells.items() if tag in flagged_metrics)
  by_metric = collections.Counter(m.label for _, m, _ in found)
  by_variant = collections.Counter(v.label for v, _, _ in found)
  metrics = ", ".join(f"{label} {n}" for label, n in by_metric.items())
  variants = ", ".join(f"{label} ({n})" for label, n in by_variant.most_common(_PLACES_NAMED))
  if len(by_variant) > _PLACES_NAMED:
    variants += f" and {len(by_variant) - _PLACES_NAMED} more variants"
  variant, metric, worst = max(found, key=lambda item: abs(item[2].z))
  median = table.cell(metric.tag, variant.key).interval.median
  return (
      f"{len(found)} of {times} times lie far from their variant's others: {metrics}, in {variants}."
      f" The worst: {variant.label}, {metric.label} of repeat {worst.repeat}: {number(worst.value)} {metric.unit}"
      f" against a median of {number(median)} {metric.unit} (modified z {worst.z:+.1f})."
  )


def outlier_lines(table: VerdictTable) -> list[str]:
  """One line per outlying repeat (the report's full list): which variant, metric and repeat, against the median."""
  lines = []
  for variant, metric, outlier in table.outliers():
    median = table.cell(metric.tag, variant.key).interval.median
    lines.append(
        f"{variant.label}: {metric.label} of repeat {outlier.repeat} is {number(outlier.value)} {metric.unit}"
        f" against a median of {number(median)} (modified z {outlier.z:+.1f})"
    )
  return lines
