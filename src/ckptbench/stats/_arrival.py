"""Each run judged on arrival: is it worse than the current segment of the series before it?

Change points (`_change_points.py`) need runs on both sides of a change, so a regression merged
today would be confirmed only nights later. A CI gate must answer the night it arrives, as
Bencher's and CodSpeed's threshold tests do: here, prediction tests of the newest runs' level
against the runs of their current segment.

- Two tests (`GROUPS`): the new run alone, and the new run with the two before it by their
  median, each group's runs in one segment. A step that lasts moves the median of its runs; one
  far run of a shared machine does not.
- The reference of a group: the runs since the last confirmed change before its first run (at
  most `window` of them), less the runs that were themselves flagged on arrival and are still
  pending (fewer than PENDING_RUNS runs since): a step not yet confirmed must not widen the
  reference the runs after it are judged against. The first run after a confirmed change is
  judged alone against the segment before the change, as it was when it arrived; the three
  runs' test waits for three runs after the change.
- The tests, on log run medians (a ratio whatever the scale), with s the reference's spread
  between runs (which on a shared machine exceeds the spread within one) and v a run's own
  variance: s^2, or more when the group's samples are noisier than that (their medians'
  variance, pi/2 var/n, the samples the new runs bring). The run alone: d = its log median - the
  reference's mean, half-width q1 sqrt(v + s^2/k). The three: d = their median - the reference's
  median, half-width q3 sqrt(v). Each critical value q is the largest of the statistic's
  (1 - alpha) quantiles, alpha the test's share (`GROUP_ALPHAS`: 0.5% the run alone, 0.1% the
  three), over normal runs (for the run alone, Student's t with k - 1 degrees of freedom) and
  over runs whose spread between them has heavy tails (Student's t, 3 degrees of freedom: the odd
  far run), drawn once per reference size (`_arrival_table.py`,
  measurements/arrival_critical_values.py). The run is flagged worse when either interval has
  its good end beyond 1 and its ratio beyond the threshold (and the level moves by at least
  `floor`, 8 MiB of memory), the verdicts' rule (docs/verdicts.md).
- At least MIN_REFERENCE_RUNS runs: with two, t has one degree of freedom and a quantile of 64.

Under normal or heavy-tailed log medians, the chance to flag a run with no change is at most
ARRIVAL_ALPHA (0.6%). The shares are set by the gate's total: on planted series with heavy tails
between runs (and the spread within each run that real runs have), the arrival tests flag 0.43-0.48%
of A/A runs and false changes of segmentation add 0.16-0.39%, so the gate fails 0.65-0.81% of them,
while a 1.5x step at 8% between runs fails it on its first run 43 times in 100 (docs/history.md).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Sequence

import numpy as np

from ckptbench.stats._defaults import DEFAULT_THRESHOLD
from ckptbench.stats._direction import Direction

# The newest runs judged, each test's share of a side: the newest alone, and the newest three by their
# median. Most goes to the run alone, the one test that can fail the night a regression lands; the
# median of three needs little: a step that lasts moves the median of its runs by its whole size
# (one far run of a shared machine does not), and the change points confirm it from its third run.
# Together they are as much as the gate's 1% on heavy-tailed A/A runs allows beside the false
# changes of segmentation (docs/history.md: the gate fails 0.81% of them at the thirtieth run).
GROUP_ALPHAS = {1: 0.005, 3: 0.001}
GROUPS = tuple(GROUP_ALPHAS)
ARRIVAL_ALPHA = sum(GROUP_ALPHAS.values())  # a side, the two tests together
MIN_REFERENCE_RUNS = 3
ARRIVAL_WINDOW = 30
# A flagged run stays out of the reference of the runs after it until this many have arrived: by
# then segmentation has confirmed the step (docs/history.md: 3 runs after a 1.5x step, most often)
# or it was one odd run, which rejoins the reference.
PENDING_RUNS = 3


@dataclasses.dataclass(frozen=True)
class ArrivalTest:
  """Run `index` judged with the `runs` - 1 runs before it against the `reference_runs` runs before
  them: `ratio` is their level (the geometric mean of their medians) over the reference's,
  `low`/`high` its prediction interval at the group's critical value; `worse` when the run is
  flagged (by the smallest group that flags it; else the run alone is shown)."""

  index: int
  ratio: float
  low: float
  high: float
  reference_runs: int
  worse: bool
  runs: int = 1


@functools.lru_cache(maxsize=None)
def _critical_values(group: int) -> np.ndarray:
  """Indexed by the reference's runs (0 to ARRIVAL_WINDOW): NaN below MIN_REFERENCE_RUNS."""
  from ckptbench.stats import _arrival_table  # noqa: PLC0415  (measurements/arrival_critical_values.py writes it)

  table = _arrival_table.CRITICAL[group]
  return np.array([math.nan] * _arrival_table.FIRST_REFERENCE + list(table))


@dataclasses.dataclass(frozen=True)
class Arrivals:
  """A series' runs flagged worse on arrival (oldest first) and its newest run's test (None when
  its reference has fewer than MIN_REFERENCE_RUNS runs). A run's test reads only the runs up to
  it: run j's is the newest's of the series cut after j."""

  flagged: tuple[ArrivalTest, ...]
  newest: ArrivalTest | None


def arrival_tests(
    log_medians: np.ndarray,
    within: np.ndarray,
    changes: Sequence[int],
    direction: Direction,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    floor: float = 0.0,
    window: int = ARRIVAL_WINDOW,
) -> Arrivals:
  """Every run judged on arrival against its current segment (a run whose reference has fewer
  than MIN_REFERENCE_RUNS runs is not judged).

  Args:
    log_medians, within: per run, from `run_levels`.
    changes: the indices of the series' confirmed changes (the first run after each).
    direction: which way is worse; NEUTRAL series flag nothing.
    floor: the smallest move that counts, in the metric's unit (`absolute_floor`: 8 MiB of memory).

  Example:
    >>> x = np.log([1.0, 1.05, 0.95, 1.02, 0.98, 1.04, 0.96, 1.0, 1.03, 0.97, 1.25, 1.225, 1.2625])
    >>> found = arrival_tests(x, np.zeros(13), [], Direction.LOWER)
    >>> [(t.index, t.runs) for t in found.flagged], found.newest.reference_runs, round(found.newest.ratio, 2)
    ([(10, 1), (11, 1), (12, 1)], 10, 1.26)
  """
  n = len(log_medians)
  starts = _reference_starts(n, changes, window)
  segments = np.zeros(n, dtype=int)  # where each run's own segment starts
  for c in sorted(changes):
    segments[c:] = c
  center = float(log_medians[0]) if n else 0.0
  x = log_medians - center  # sums of squares near zero, not near log(value)
  # Every test at once against its whole reference; then, one by one, the runs whose reference
  # holds a flagged run still pending.
  tests = {m: _judge_all(x, within, starts, segments, m, window, direction, threshold, floor, center) for m in GROUPS}
  flagged: list[int] = []
  shown = np.full(n, GROUPS[0])  # the test each run's record shows: the first that flags it
  any_worse = np.any([tests[m][3] for m in GROUPS], axis=0) if n else np.zeros(0, dtype=bool)
  for j in range(int(np.argmax(any_worse)) if any_worse.any() else n, n):  # none pending before the first flag
    pending = [i for i in flagged if j - i <= PENDING_RUNS and not _at_change(i, changes)]
    for m in GROUPS:
      first = j - m + 1
      if tests[m][4][j] and any(starts[first] <= i < first for i in pending):
        kept = np.array([i for i in range(starts[first], first) if i not in pending], dtype=int)
        again = _judge(x[first : j + 1][None, :], within[first : j + 1][None, :], x[kept][None, :],
                       np.array([len(kept)]), m, direction, threshold, floor, center)  # fmt: skip
        for row, value in zip(tests[m], (*again, [len(kept)])):
          row[j] = value[0]
    worse = [m for m in GROUPS if tests[m][3][j]]
    if worse:
      shown[j] = worse[0]
      flagged.append(j)

  def test(j: int) -> ArrivalTest:
    ratio, low, high, worse, k = tests[int(shown[j])]
    return ArrivalTest(j, float(ratio[j]), float(low[j]), float(high[j]), int(k[j]), bool(worse[j]), int(shown[j]))

  newest = test(n - 1) if n and tests[GROUPS[0]][4][n - 1] >= MIN_REFERENCE_RUNS else None
  return Arrivals(tuple(test(j) for j in flagged), newest)


def _judge_all(
    x: np.ndarray, within: np.ndarray, starts: np.ndarray, segments: np.ndarray, group: int, window: int,
    direction: Direction, threshold: float, floor: float, center: float,
) -> tuple[np.ndarray, ...]:
  """(ratio, low, high, worse, reference runs) of every run's test of `group` runs against its whole reference."""
  n = len(x)
  runs = np.arange(n)
  first = np.maximum(runs - group + 1, 0)
  # A group lies after its segment's change (the change's own run is judged alone, against the segment
  # before it, as it was when it arrived).
  whole = (runs - group + 1 >= 0) & ((group == 1) | (first > segments) | (segments == 0))
  k = np.where(whole, first - starts[first], 0)
  offset = window + group
  padded = np.concatenate([np.full(offset, np.nan), x])  # run i at i + offset
  columns = np.arange(-window, 0)
  reference = padded[first[:, None] + columns + offset]  # the `window` runs before each group's first
  reference[columns[None, :] < -k[:, None]] = np.nan  # only the k of its reference
  members = padded[runs[:, None] + np.arange(-group + 1, 1) + offset]
  member_within = np.concatenate([np.zeros(group), within])[runs[:, None] + np.arange(-group + 1, 1) + group]
  return (*_judge(members, member_within, reference, k, group, direction, threshold, floor, center), k)


def _reference_starts(n: int, changes: Sequence[int], window: int) -> np.ndarray:
  """Where each run's reference starts: the last confirmed change before it, at most `window` runs back."""
  starts = np.zeros(n, dtype=int)
  for c in sorted(changes):
    starts[c + 1 :] = c
  return np.maximum(starts, np.arange(n) - window)


def _at_change(i: int, changes: Sequence[int]) -> bool:
  """A flag next to a confirmed change is that change: its run is the new level, no longer pending."""
  return any(abs(c - i) <= 1 for c in changes)


def _judge(
    members: np.ndarray, within: np.ndarray, reference: np.ndarray, k: np.ndarray, group: int,
    direction: Direction, threshold: float, floor: float, center: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
  """(ratio, low, high, worse) of each row's group (`members`: log medians less `center`; `within`:
  their own variances) against its reference (a row of log medians, NaN where none: `k` of them).

  One run: its level against the reference's mean, the prediction interval's half-width the
  critical value times sqrt(v + s^2 / k). Three runs: their median against the reference's median,
  the half-width the critical value times sqrt(v) (the critical values carry the rest; `_arrival_table`).
  v: s^2, or the runs' own variance (on average) where larger."""
  critical = _critical_values(group)
  with np.errstate(all="ignore"):  # references too short: not judged
    present = ~np.isnan(reference)
    filled = np.where(present, reference, 0.0)
    mean = filled.sum(axis=1) / k
    spread = np.maximum(((filled * filled).sum(axis=1) - k * mean * mean) / (k - 1), 0.0)
    own = np.maximum(spread, within.mean(axis=1))
    q = critical[np.clip(k, 0, len(critical) - 1)]
    if group == 1:
      level, d = mean, members[:, 0] - mean
      half = q * np.sqrt(own + spread / k)
    else:
      ordered = np.sort(reference, axis=1)  # NaN last
      rows = np.arange(len(k))
      level = (ordered[rows, np.maximum((k - 1) // 2, 0)] + ordered[rows, k // 2]) / 2
      d = np.median(members, axis=1) - level
      half = q * np.sqrt(own)
    counted = (k >= MIN_REFERENCE_RUNS) & (np.exp(level + center) * np.abs(np.exp(d) - 1.0) >= floor)
  ratio, low, high = np.exp(d), np.exp(d - half), np.exp(d + half)
  if direction is Direction.LOWER:
    worse = counted & (low > 1.0) & (ratio >= 1.0 + threshold)
  elif direction is Direction.HIGHER:
    worse = counted & (high < 1.0) & (ratio <= 1.0 / (1.0 + threshold))
  else:
    worse = np.zeros(len(d), dtype=bool)
  return ratio, low, high, worse
