"""A history's answers as files: the JSON document, a Markdown summary for a CI job, and the
newest run in Bencher Metric Format (BMF)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Sequence

from ckptbench._escape import markdown_text
from ckptbench.history._analysis import Change, Series
from ckptbench.history._entry import HistoryEntry


def _finite(x: float) -> float | None:
  return x if math.isfinite(x) else None


def history_document(series: Sequence[Series], entries: Sequence[HistoryEntry]) -> dict[str, Any]:
  """`{"runs": n, "series": [...], "changes": [...]}`: every series with its points, every change."""
  docs = []
  for s in series:
    doc = dataclasses.asdict(s)
    doc.pop("changes")
    doc["environment_changes"] = [{"index": i, "changed": list(c)} for i, c in s.environment_changes]
    docs.append(doc)
  changes = [{**dataclasses.asdict(c), "high": _finite(c.high), "low": _finite(c.low)} for s in series for c in s.changes]
  return {"runs": len(entries), "series": docs, "changes": changes}


def change_text(change: Change) -> str:
  also = f"; also changed then: {', '.join(change.also_changed)}" if change.also_changed else ""
  return (f"{change.suite} | {change.benchmark} | {change.metric}: {change.direction} from {change.label}"
          f" ({change.ratio:.3f}x, interval {change.low:.3f}-{change.high:.3f};"
          f" {change.before_runs} runs before, {change.after_runs} after){also}")  # fmt: skip


def summary_markdown(
    series: Sequence[Series], entries: Sequence[HistoryEntry], failing: Sequence[Change], unjudged: Sequence[str] = ()
) -> str:
  """A CI job summary: the gate's answer first (with what it could not judge), then every change, then the
  newest value of each series. Every name and label is literal text (`markdown_text`): no `|` breaks a
  table, no HTML renders."""
  md = markdown_text
  newest = entries[-1]
  lines = [f"## ckptbench history: {len(entries)} runs, newest {md(newest.label)} ({md(newest.time)})", ""]
  if failing:
    lines += ["**Worse since:**", ""] + [f"- {md(change_text(c))}" for c in failing] + [""]
  elif not unjudged:
    lines += ["No headline metric's newest segment is worse than the one before it.", ""]
  if unjudged:
    lines += ["**Not judged:**", ""] + [f"- {md(line)}" for line in unjudged] + [""]
  changes = [c for s in series for c in s.changes]
  if changes:
    lines += ["| suite | benchmark | metric | from | direction | ratio | interval | also changed |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {md(c.suite)} | {md(c.benchmark)} | {md(c.metric)} | {md(c.label)} | {c.direction} | {c.ratio:.3f} |"
              f" {c.low:.3f}-{c.high:.3f} | {md(', '.join(c.also_changed))} |" for c in changes]  # fmt: skip
    lines.append("")
  lines += ["| suite | benchmark | metric | machine | runs | newest median | changes |", "|---|---|---|---|---|---|---|"]
  lines += [f"| {md(s.suite)} | {md(s.benchmark)} | {md(s.metric)} | {md(s.machine)} | {len(s.medians)} |"
            f" {s.medians[-1]:.4g} {md(s.unit)} | {len(s.changes) if not s.note else md(s.note)} |" for s in series]  # fmt: skip
  return "\n".join(lines) + "\n"


def bencher_metric_format(entry: HistoryEntry) -> dict[str, Any]:
  """One run as Bencher Metric Format: `{"<suite> <benchmark>": {"<metric>": {"value", "lower_value", "upper_value"}}}`."""
  doc: dict[str, dict[str, dict[str, float]]] = {}
  for p in entry.points:
    doc.setdefault(f"{entry.suite} {p.benchmark}", {})[p.metric] = {"value": p.median, "lower_value": p.low, "upper_value": p.high}
  return doc
