"""A history read as series: per suite, machine, benchmark variant and headline metric, the
runs in time order, their confirmed changes (`stats.change_points`) and what else changed then."""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from typing import Sequence

from ckptbench.api import is_host_memory_tag
from ckptbench.errors import CkptbenchError
from ckptbench.history._entry import HistoryEntry, Point
from ckptbench.history._store import History
from ckptbench.stats import DEFAULT_THRESHOLD, Direction, change_points, metric_direction


@dataclasses.dataclass(frozen=True)
class Change:
  """A confirmed change of one series: `label` is the first run after it."""

  suite: str
  benchmark: str
  metric: str
  machine: str
  label: str
  time: str
  index: int  # of the first run after it, in the series
  direction: str  # "worse" | "better"
  ratio: float
  low: float
  high: float
  before_runs: int
  after_runs: int
  also_changed: tuple[str, ...]  # versions or host that changed at that run


@dataclasses.dataclass(frozen=True)
class Series:
  suite: str
  benchmark: str
  key: str
  metric: str
  unit: str
  machine: str
  direction: str
  labels: tuple[str, ...]
  times: tuple[str, ...]
  medians: tuple[float, ...]
  lows: tuple[float, ...]
  highs: tuple[float, ...]
  environment_changes: tuple[tuple[int, tuple[str, ...]], ...]  # (run index, what changed there)
  changes: tuple[Change, ...]
  note: str = ""  # why the series was not tested, when it was not

  @property
  def newest_change_is_worse(self) -> Change | None:
    """The gate: the newest segment is worse than the one before it."""
    return self.changes[-1] if self.changes and self.changes[-1].direction == "worse" else None


def _selected(point: Point, suite: str, patterns: Sequence[str]) -> bool:
  if not patterns:
    return True
  for pattern in patterns:
    if any(c in pattern for c in "*?["):
      if fnmatch.fnmatchcase(point.benchmark, pattern) or fnmatch.fnmatchcase(point.metric, pattern):
        return True
    elif pattern in point.benchmark or point.key.startswith(pattern) or pattern in point.metric or pattern == suite:
      return True
  return False


def analyse(
    entries: Sequence[HistoryEntry], *, select: Sequence[str] = (), threshold: float = DEFAULT_THRESHOLD
) -> list[Series]:
  """The series of `entries` (oldest first) with their changes.

  Args:
    select: `-k` patterns: a glob over the benchmark name or metric, else a substring of
      either, a key prefix, or the suite's name; any one keeps a series.
    threshold: the smallest relative change that counts.

  Raises:
    CkptbenchError: when patterns match no series.
  """
  grouped: dict[tuple[str, str, str, str], list[tuple[HistoryEntry, Point]]] = {}
  for entry in entries:
    for point in entry.points:
      if _selected(point, entry.suite, select):
        # Host memory from a memory pass and from inside the timed runs are different readings: never one series.
        way = entry.environment.host_memory if is_host_memory_tag(point.metric) else ""
        grouped.setdefault((entry.suite, entry.environment.machine + way, point.key, point.metric), []).append(
            (entry, point))
  if not grouped:
    raise CkptbenchError(f"-k {' -k '.join(select)} matches no series of the history")
  return [_series(runs, threshold) for _, runs in sorted(grouped.items())]


def _series(runs: list[tuple[HistoryEntry, Point]], threshold: float) -> Series:
  first_entry, first = runs[0]
  direction = metric_direction(first.metric, first.unit)
  environment_changes = []
  for i in range(1, len(runs)):
    changed = runs[i][0].environment.differences(runs[i - 1][0].environment)
    if changed:
      environment_changes.append((i, tuple(changed)))
  samples = [p.samples for _, p in runs]
  note, found = "", []
  if any(not (v > 0 and math.isfinite(v)) for s in samples for v in s) or any(not s for s in samples):
    note = "not tested: a sample is not positive (changes are ratios)"
  else:
    found = change_points(samples, direction, threshold=threshold)
  by_index = dict(environment_changes)
  changes = tuple(
      Change(first_entry.suite, first.benchmark, first.metric, first_entry.environment.machine,
             runs[c.index][0].label, runs[c.index][0].time, c.index, "worse" if c.worse else "better",
             c.ratio, c.low, c.high, c.before_runs, c.after_runs, by_index.get(c.index, ()))  # fmt: skip
      for c in found
  )
  return Series(
      suite=first_entry.suite, benchmark=first.benchmark, key=first.key, metric=first.metric, unit=first.unit,
      machine=first_entry.environment.machine, direction=Direction(direction).value,
      labels=tuple(e.label for e, _ in runs), times=tuple(e.time for e, _ in runs),
      medians=tuple(p.median for _, p in runs), lows=tuple(p.low for _, p in runs),
      highs=tuple(p.high for _, p in runs), environment_changes=tuple(environment_changes),
      changes=changes, note=note,
  )  # fmt: skip


def gate(series: Sequence[Series]) -> list[Change]:
  """The changes that fail `--fail_on_change`: per series, a newest segment worse than the one before."""
  return [c for s in series if (c := s.newest_change_is_worse) is not None]


def unjudged(history: History, series: Sequence[Series]) -> list[str]:
  """What the gate could not judge, one line each: the entries skipped as unreadable, the series not tested.

  A gate over a history with any of these never passes (`ckptbench history --fail_on_change` exits 5).
  """
  lines = [f"skipped an unreadable entry: {why}" for why in history.skipped]
  return lines + [f"{s.suite} | {s.benchmark} | {s.metric} on {s.machine}: {s.note}" for s in series if s.note]
