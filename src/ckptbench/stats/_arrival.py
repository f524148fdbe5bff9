"""Each run judged on arrival: is it worse than the current segment of the series before it?

Change points (`_change_points.py`) need runs on both sides of a change, so a regression merged
today would be confirmed only nights later. A CI gate must answer the night it arrives, as
Bencher's and CodSpeed's threshold tests do: here, a prediction test of the new run's level
against the runs of its current segment.

- The reference: the runs since the last confirmed change before the new run (at most `window`
  of them), less the runs that were themselves flagged on arrival and are still pending (fewer
  than PENDING_RUNS runs since): a step not yet confirmed must not widen the reference the runs
  after it are judged against. The first run after a confirmed
  change is judged against the segment before the change, as it was when it arrived.
- The test, on log run medians (a ratio whatever the scale): d = log median(new) - mean of the
  reference's log medians, whose spread s carries the spread between runs (which on a shared
  machine exceeds the spread within one) and their own within-run noise. Under "no change" d has
  variance v + s^2/k with v the new run's own variance: s^2, or more when the new run's samples
  are noisier than that (their median's variance, pi/2 var/n, the samples the new run brings).
  Student's t with k - 1 degrees of freedom gives the (1 - 2 alpha) prediction interval; the run
  is flagged worse when the interval's good end is beyond 1 and the ratio beyond the threshold
  (and the level moves by at least `floor`, 8 MiB of memory), the verdicts' rule
  (docs/verdicts.md) at alpha a side.
- At least MIN_REFERENCE_RUNS runs: with two, t has one degree of freedom and a quantile of 64.

Under normal log medians the chance to flag a run with no change is at most alpha (0.25%); the
figures measured on planted series are in docs/history.md.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Sequence

import numpy as np

from ckptbench.stats._defaults import DEFAULT_THRESHOLD
from ckptbench.stats._direction import Direction

# A side. At 0.005, A/A runs whose spread between runs has heavy tails (Student's t, 3 degrees of
# freedom, 8% standard deviation) failed the gate 1.2-1.9% of the time (normal: 0.4-0.9%); at
# 0.0025, 1.1-1.5% (normal: 0.2-0.6%), for a 1.5x step found on its first run 78 times in 100
# instead of 88 (docs/history.md).
ARRIVAL_ALPHA = 0.0025
MIN_REFERENCE_RUNS = 3
ARRIVAL_WINDOW = 30
# A flagged run stays out of the reference of the runs after it until this many have arrived: by
# then segmentation has confirmed the step (docs/history.md: 3 runs after a 1.5x step, most often)
# or it was one odd run, which rejoins the reference.
PENDING_RUNS = 3


@dataclasses.dataclass(frozen=True)
class ArrivalTest:
  """One run judged against the `reference_runs` runs before it: `ratio` is its median over their
  level (the geometric mean of their medians), `low`/`high` the (1 - 2 alpha) prediction interval
  of that ratio; `worse` when the run is flagged."""

  index: int
  ratio: float
  low: float
  high: float
  reference_runs: int
  worse: bool


@functools.lru_cache(maxsize=None)
def _t_quantiles(alpha: float, most: int) -> tuple[float, ...]:
  import scipy.special  # noqa: PLC0415  (slow to import; only the tests of a history need it)

  return (math.nan, *(float(q) for q in scipy.special.stdtrit(np.arange(1, most + 1), 1.0 - alpha)))


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
    alpha: float = ARRIVAL_ALPHA,
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
    >>> x = np.log([1.0, 1.02, 0.98, 1.01, 0.99, 1.5])
    >>> found = arrival_tests(x, np.zeros(6), [], Direction.LOWER)
    >>> [t.index for t in found.flagged], found.newest.reference_runs, round(found.newest.ratio, 1)
    ([5], 5, 1.5)
  """
  n = len(log_medians)
  quantiles = np.array(_t_quantiles(alpha, window))
  starts = _reference_starts(n, changes, window)
  center = float(log_medians[0]) if n else 0.0
  x = log_medians - center  # sums of squares near zero, not near log(value)
  sums, squares = np.concatenate([[0.0], np.cumsum(x)]), np.concatenate([[0.0], np.cumsum(x * x)])
  k = np.arange(n) - starts
  # Every run at once against its whole reference; then, one by one, the runs whose reference
  # holds a flagged run still pending.
  judged = _judge(x, within, sums[:-1] - sums[starts], squares[:-1] - squares[starts], k, quantiles, direction,
                  threshold, floor, center)  # fmt: skip
  first = next((j for j in range(n) if judged[3][j]), n)
  flagged = [first]
  for j in range(first + 1, n):
    pending = [i for i in flagged if starts[j] <= i and j - i <= PENDING_RUNS and not _at_change(i, changes)]
    if pending:
      kept = np.array([i for i in range(starts[j], j) if i not in pending], dtype=int)
      again = _judge(x[j : j + 1], within[j : j + 1], x[kept].sum(keepdims=True), (x[kept] ** 2).sum(keepdims=True),
                     np.array([len(kept)]), quantiles, direction, threshold, floor, center)  # fmt: skip
      for row, value in zip(judged, again):
        row[j] = value[0]
      k[j] = len(kept)
    if judged[3][j]:
      flagged.append(j)
  ratio, low, high, worse = judged

  def test(j: int) -> ArrivalTest:
    return ArrivalTest(j, float(ratio[j]), float(low[j]), float(high[j]), int(k[j]), bool(worse[j]))

  newest = test(n - 1) if n and k[n - 1] >= MIN_REFERENCE_RUNS else None
  return Arrivals(tuple(test(j) for j in flagged if j < n), newest)


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
    x: np.ndarray, within: np.ndarray, total: np.ndarray, squares: np.ndarray, k: np.ndarray, quantiles: np.ndarray,
    direction: Direction, threshold: float, floor: float, center: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
  """(ratio, low, high, worse) of runs `x` (log medians less `center`) against references of `k`
  runs with these sums."""
  with np.errstate(all="ignore"):
    mean = total / k
    spread = np.maximum((squares - k * mean * mean) / (k - 1), 0.0)
    d = x - mean
    half = quantiles[np.clip(k - 1, 0, len(quantiles) - 1)] * np.sqrt(np.maximum(spread, within) + spread / k)
    counted = (k >= MIN_REFERENCE_RUNS) & (np.exp(mean + center) * np.abs(np.exp(d) - 1.0) >= floor)
  ratio, low, high = np.exp(d), np.exp(d - half), np.exp(d + half)
  if direction is Direction.LOWER:
    worse = counted & (low > 1.0) & (ratio >= 1.0 + threshold)
  elif direction is Direction.HIGHER:
    worse = counted & (high < 1.0) & (ratio <= 1.0 / (1.0 + threshold))
  else:
    worse = np.zeros(len(x), dtype=bool)
  return ratio, low, high, worse
