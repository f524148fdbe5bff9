"""A history read as series: per suite, machine, benchmark variant and headline metric, the
runs in time order, their confirmed changes (`stats.change_points`) and what else changed then,
and each run judged on arrival against its current segment (`stats.arrival_tests`): the runs
flagged worse, each pending, confirmed or withdrawn by the changes found since."""

from __future__ import annotations

import dataclasses
import fnmatch
from typing import Sequence

from ckptbench.api import is_host_memory_tag
from ckptbench.errors import CkptbenchError
from ckptbench.history._entry import HistoryEntry, Point
from ckptbench.history._cache import AnalysisCache, SeriesAnalysis
from ckptbench.stats import DEFAULT_THRESHOLD, PENDING_RUNS, ArrivalTest, Direction, absolute_floor, metric_direction


@dataclasses.dataclass(frozen=True)
class _AtRun:
  """Something said of one run of a series: `index` is the run's place in it."""

  suite: str
  benchmark: str
  metric: str
  machine: str
  label: str
  time: str
  index: int


@dataclasses.dataclass(frozen=True)
class Change(_AtRun):
  """A confirmed change of one series: the run is the first after it."""

  direction: str  # "worse" | "better"
  ratio: float
  low: float
  high: float
  before_runs: int
  after_runs: int
  also_changed: tuple[str, ...]  # versions or host that changed at that run


@dataclasses.dataclass(frozen=True)
class Arrival(_AtRun):
  """A run judged on arrival (with the `runs` - 1 runs before it, when together they are worse) against
  the `reference_runs` runs of its segment before them.

  `state`: "passed" (not worse), or for a run flagged worse: "pending" (fewer than
  `stats.PENDING_RUNS` runs since, and no change confirmed at it), "confirmed" (a worse change
  confirmed at it or next to it) or "withdrawn" (enough runs since, and none confirmed)."""

  ratio: float
  low: float
  high: float
  reference_runs: int
  state: str
  runs: int = 1


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
  flagged: tuple[Arrival, ...] = ()  # runs flagged worse on arrival, oldest first
  newest: Arrival | None = None  # the newest run judged on arrival; None when it could not be (too few runs)
  note: str = ""  # why the series was not tested, when it was not

  @property
  def newest_change_is_worse(self) -> Change | None:
    """The newest segment is worse than the one before it."""
    return self.changes[-1] if self.changes and self.changes[-1].direction == "worse" else None

  @property
  def newest_is_worse(self) -> Arrival | None:
    """The newest run is worse than its segment, on arrival."""
    return self.newest if self.newest is not None and self.newest.state != "passed" else None


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
    entries: Sequence[HistoryEntry],
    *,
    select: Sequence[str] = (),
    threshold: float = DEFAULT_THRESHOLD,
    cache: AnalysisCache | None = None,
) -> list[Series]:
  """The series of `entries` (oldest first) with their changes and their runs judged on arrival.

  Args:
    select: `-k` patterns: a glob over the benchmark name or metric, else a substring of
      either, a key prefix, or the suite's name; any one keeps a series.
    threshold: the smallest relative change that counts.
    cache: the statistics of series already analysed with these runs (the history's index,
      `load_cache`); what is computed here is added to it.

  Raises:
    CkptbenchError: when patterns match no series.
  """
  grouped: dict[tuple[str, str, str, str], list[tuple[HistoryEntry, Point]]] = {}
  host_memory = {}  # by metric: asked once, not once per point (10,000 series of 30 runs are 300,000 points)
  for entry in entries:
    machine = entry.environment.machine
    for point in entry.points:
      if not select or _selected(point, entry.suite, select):
        if point.metric not in host_memory:
          host_memory[point.metric] = is_host_memory_tag(point.metric)
        # Host memory from a memory pass and from inside the timed runs are different readings: never one series.
        way = entry.environment.host_memory if host_memory[point.metric] else ""
        grouped.setdefault((entry.suite, machine + way, point.key, point.metric), []).append((entry, point))
  if not grouped:
    raise CkptbenchError(f"-k {' -k '.join(select)} matches no series of the history")
  cache = cache if cache is not None else AnalysisCache()
  differences: dict[tuple[str, str], tuple[str, ...]] = {}  # by pair of entries: every series of a run shares them
  return [_series(key, runs, threshold, cache, differences) for key, runs in sorted(grouped.items())]


def _series(
    key: tuple[str, str, str, str], runs: list[tuple[HistoryEntry, Point]], threshold: float, cache: AnalysisCache,
    differences: dict[tuple[str, str], tuple[str, ...]],
) -> Series:
  first_entry, first = runs[0]
  direction = metric_direction(first.metric, first.unit)
  environment_changes = []
  for i in range(1, len(runs)):
    earlier, entry = runs[i - 1][0], runs[i][0]
    pair = (earlier.name, entry.name)
    if pair not in differences:
      differences[pair] = tuple(entry.environment.differences(earlier.environment))
    if differences[pair]:
      environment_changes.append((i, differences[pair]))
  found = cache.analysis("\x1f".join(key), [e.name for e, _ in runs], [p.samples for _, p in runs], direction, threshold,
                         absolute_floor(first.unit))  # fmt: skip
  note = "" if found is not None else "not tested: a sample is not positive (changes are ratios)"
  found = found or SeriesAnalysis((), (), None)
  by_index = dict(environment_changes)
  changes = tuple(
      Change(first_entry.suite, first.benchmark, first.metric, first_entry.environment.machine,
             runs[c.index][0].label, runs[c.index][0].time, c.index, "worse" if c.worse else "better",
             c.ratio, c.low, c.high, c.before_runs, c.after_runs, by_index.get(c.index, ()))  # fmt: skip
      for c in found.changes
  )

  def arrival(test: ArrivalTest) -> Arrival:
    entry = runs[test.index][0]
    return Arrival(first_entry.suite, first.benchmark, first.metric, first_entry.environment.machine, entry.label,
                   entry.time, test.index, test.ratio, test.low, test.high, test.reference_runs,
                   _state(test, len(runs), changes), test.runs)  # fmt: skip

  return Series(
      suite=first_entry.suite, benchmark=first.benchmark, key=first.key, metric=first.metric, unit=first.unit,
      machine=first_entry.environment.machine, direction=Direction(direction).value,
      labels=tuple(e.label for e, _ in runs), times=tuple(e.time for e, _ in runs),
      medians=tuple(p.median for _, p in runs), lows=tuple(p.low for _, p in runs),
      highs=tuple(p.high for _, p in runs), environment_changes=tuple(environment_changes),
      changes=changes, flagged=tuple(arrival(t) for t in found.flagged),
      newest=arrival(found.newest) if found.newest is not None else None, note=note,
  )  # fmt: skip


def _state(test: ArrivalTest, runs: int, changes: Sequence[Change]) -> str:
  if not test.worse:
    return "passed"
  if any(c.direction == "worse" and abs(c.index - test.index) <= 1 for c in changes):
    return "confirmed"
  return "pending" if runs - 1 - test.index < PENDING_RUNS else "withdrawn"
