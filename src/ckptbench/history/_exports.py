"""A history's answers as files: the JSON document, a Markdown summary for a CI job, and the
newest run in Bencher Metric Format (BMF), as pyperf's JSON and as github-action-benchmark's list."""

from __future__ import annotations

import dataclasses
import math
import pathlib
from typing import Any, Sequence

from ckptbench._escape import markdown_text
from ckptbench.history._analysis import Arrival, Change, Series
from ckptbench.history._entry import HistoryEntry
from ckptbench.results import BenchmarkExport, MetricSeries, pyperf_metadata, unique_names, write_github_action_benchmark, write_pyperf
from ckptbench.stats import MIN_REFERENCE_RUNS


def _finite(x: float) -> float | None:
  return x if math.isfinite(x) else None


def _finite_ends(record: Change | Arrival) -> dict[str, Any]:
  return {**dataclasses.asdict(record), "high": _finite(record.high), "low": _finite(record.low)}


def history_document(
    series: Sequence[Series], entries: Sequence[HistoryEntry], unjudged: Sequence[str] = ()
) -> dict[str, Any]:
  """`{"runs": n, "series": [...], "changes": [...], "flagged": [...], "newest": [...], "unjudged": [...]}`:
  every series with its points, every change, every run flagged worse on arrival with its state,
  each series' newest run as judged on arrival, and what the gate could not judge (`history.unjudged`)."""
  docs = []
  for s in series:
    doc = dataclasses.asdict(s)
    for name in ("changes", "flagged", "newest"):
      doc.pop(name)
    doc["environment_changes"] = [{"index": i, "changed": list(c)} for i, c in s.environment_changes]
    docs.append(doc)
  return {
      "runs": len(entries),
      "series": docs,
      "changes": [_finite_ends(c) for s in series for c in s.changes],
      "flagged": [_finite_ends(a) for s in series for a in s.flagged],
      "newest": [_finite_ends(s.newest) for s in series if s.newest is not None],
      "unjudged": list(unjudged),
  }


def change_text(change: Change) -> str:
  also = f"; also changed then: {', '.join(change.also_changed)}" if change.also_changed else ""
  return (f"{change.suite} | {change.benchmark} | {change.metric}: {change.direction} from {change.label}"
          f" ({change.ratio:.3f}x, interval {change.low:.3f}-{change.high:.3f};"
          f" {change.before_runs} runs before, {change.after_runs} after){also}")  # fmt: skip


_STATES = {
    "pending": "worse on arrival, pending confirmation",
    "confirmed": "worse on arrival, confirmed by a change",
    "withdrawn": "worse on arrival, withdrawn (no change followed)",
    "passed": "not worse on arrival",
}


def arrival_text(arrival: Arrival) -> str:
  return (f"{arrival.suite} | {arrival.benchmark} | {arrival.metric}: {arrival.label} {_STATES[arrival.state]}"
          f" ({'' if arrival.runs == 1 else f'with the {arrival.runs - 1} run(s) before it: '}{arrival.ratio:.3f}x"
          f" its segment's {arrival.reference_runs} runs,"
          f" interval {arrival.low:.3f}-{arrival.high:.3f})")  # fmt: skip


def failing_text(failing: Arrival | Change) -> str:
  return arrival_text(failing) if isinstance(failing, Arrival) else change_text(failing)


def summary_markdown(
    series: Sequence[Series], entries: Sequence[HistoryEntry], failing: Sequence[Arrival | Change],
    unjudged: Sequence[str] = (),
) -> str:
  """A CI job summary: the gate's answer first (with what it could not judge, `unjudged`), then the
  runs flagged on arrival and every change, then the newest value of each series. Every name and
  label is literal text (`markdown_text`): no `|` breaks a table, no HTML renders."""
  md = markdown_text
  newest = entries[-1]
  lines = [f"## ckptbench history: {len(entries)} runs, newest {md(newest.label)} ({md(newest.time)})", ""]
  if failing:
    lines += ["**Worse:**", ""] + [f"- {md(failing_text(f))}" for f in failing] + [""]
  elif not unjudged:
    lines += [f"{gate_passed(series)}.", ""]
  if unjudged:
    lines += ["**Not judged:**", ""] + [f"- {md(line)}" for line in unjudged] + [""]
  flagged = [a for s in series for a in s.flagged]
  if flagged:
    lines += ["| suite | benchmark | metric | run | state | ratio | interval | runs before |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {md(a.suite)} | {md(a.benchmark)} | {md(a.metric)} | {md(a.label)} | {a.state} | {a.ratio:.3f} |"
              f" {a.low:.3f}-{a.high:.3f} | {a.reference_runs} |" for a in flagged]  # fmt: skip
    lines.append("")
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


def gate_passed(series: Sequence[Series]) -> str:
  """The gate's answer when nothing fails it, saying how many newest runs could not be judged."""
  unjudged = sum(1 for s in series if s.newest is None)
  text = "no headline metric's newest run is worse than its segment, and no newest segment is worse than the one before it"
  if unjudged:
    text += (f"; the newest run of {unjudged} of {len(series)} series could not be judged on arrival (fewer than"
             f" {MIN_REFERENCE_RUNS} runs before it in its segment)")  # fmt: skip
  return text


def bencher_metric_format(entry: HistoryEntry) -> dict[str, Any]:
  """One run as Bencher Metric Format: `{"<suite> <benchmark>": {"<metric>": {"value", "lower_value", "upper_value"}}}`."""
  doc: dict[str, dict[str, dict[str, float]]] = {}
  for p in entry.points:
    doc.setdefault(f"{entry.suite} {p.benchmark}", {})[p.metric] = {"value": p.median, "lower_value": p.low, "upper_value": p.high}
  return doc


def entry_series(entry: HistoryEntry) -> list[MetricSeries]:
  """A run's headline metrics as the history keeps them (its samples; no warm-ups)."""
  names = unique_names((p.key, p.benchmark) for p in entry.points)
  return [MetricSeries(names[p.key], p.metric, p.unit, p.samples) for p in entry.points]


def write_entry_pyperf(entry: HistoryEntry, path: pathlib.Path) -> BenchmarkExport:
  """One run (the newest, as `--bmf` writes it) as a pyperf file: `write_pyperf` of its headline metrics."""
  env = entry.environment
  metadata = pyperf_metadata(suite=entry.suite, date=entry.time, versions=env.versions, hostname=env.host,
                             ckptbench_label=entry.label, jax_backend=env.backend, device_kind=env.device_kind,
                             device_count=env.device_count)  # fmt: skip
  return write_pyperf(entry_series(entry), metadata, path)


def write_entry_github_action_benchmark(entry: HistoryEntry, path: pathlib.Path, bigger_is_better: bool = False) -> BenchmarkExport:
  """One run as github-action-benchmark's list of one direction: `write_github_action_benchmark` of its headline metrics."""
  return write_github_action_benchmark(entry_series(entry), entry.suite, path, bigger_is_better)
