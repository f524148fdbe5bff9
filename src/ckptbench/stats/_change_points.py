"""Change points in a series of runs: where a metric's level moved, and by how much.

Two steps, as Hunter/Apache Otava do it (find candidates, then keep only those a test
confirms), with other parts:

1. Candidates: PELT (ruptures) over the log of the run medians, so a change is a ratio
   whatever the metric's scale, with a BIC-style penalty on the robust noise level of the
   series (the median absolute difference of successive runs: a step moves one difference,
   not the estimate). Each segment holds at least `min_runs` runs, so one odd run is never a
   segment of its own.
2. Confirmation: for each candidate, the ratio of the runs' median after it to before it (up
   to `window` runs each side), with Welch's t interval on the runs' log medians, which
   carries the spread between runs (on a shared machine larger than the spread within one,
   and holding it), so day-to-day noise alone confirms nothing. (A two-level bootstrap, runs
   then their samples, was taken beside it, the wider of the two: on 1,050 planted series it
   changed no decision, counts the within-run spread twice, and took 85% of the time.) The
   split was chosen where the series moved most, so an interval at that split alone is too
   hopeful; the scan statistic (the largest pooled t over every split of the runs around it,
   as E-Divisive tests its splits) must also reject "no change" at SCAN_ALPHA, against its
   distribution over series of as many normal log medians (`scan_critical_values`). Shuffling the runs
   instead has a floor (2/252 on a 5|5 split) that left a step unconfirmed until about six
   runs a side; this has none. A change stands when both say so and the ratio moves by at
   least `threshold`. Candidates whose sides do not differ even at EDGE_ALPHA are dropped one
   at a time (the least evidence first) and the rest tested again against their new
   neighbours; those between stay segment edges, reported as no change. Welch's interval
   with two runs on a side has about one degree of freedom: a step is confirmed from about
   three runs after it (docs/history.md has the rates).

Apache Otava 0.8.0 (E-Divisive means) pins numpy 2.2 and scipy < 1.17, which JAX here
cannot run with; PELT with this test is what docs/history.md compares it with.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Sequence

import numpy as np

from ckptbench.stats._defaults import DEFAULT_THRESHOLD
import ckptbench.stats._scan_table as _scan_table
from ckptbench.stats._direction import Direction
from ckptbench.stats._runs import run_levels

CHANGE_LEVEL = 0.95  # each change's interval; the scan test below carries the error control
# The scan test's error rate, per boundary tested. Measured (runs 8% apart by chance, 5% within;
# 1,000 series each): at 0.002, 0.9% of A/A series of 14 runs have a change (0.6% a worse newest
# one), and a 1.5x step after 10 runs is confirmed at 3 runs after it 87 times in 100; at 0.005,
# 1.7% and 96 in 100.
SCAN_ALPHA = 0.002
# A boundary whose sides differ at this level (and whose interval excludes 1) stays a segment
# edge even when it is not a confirmed change: three slow runs at the start of a history must
# not be pooled with the runs before a real step, which would hide the step.
EDGE_ALPHA = 0.05
MIN_RUNS = 2
WINDOW = 30
_NULL_DRAWS = 20000  # per series length the table lacks: 40 draws beyond SCAN_ALPHA
_PENALTY_FACTOR = 3.0  # times sigma^2 log(n): candidates only, the test decides
_MIN_SIGMA = 1e-3  # a series of identical values still has a finite penalty (0.1% as log)


@dataclasses.dataclass(frozen=True)
class ChangePoint:
  """A confirmed change: `index` is the first run after it.

  `ratio` is the median run after over before (up to `window` runs each side), `low`/`high`
  its interval at `level`; `worse` follows the metric's direction.
  """

  index: int
  ratio: float
  low: float
  high: float
  worse: bool
  before_runs: int
  after_runs: int


def _candidates(log_medians: np.ndarray, min_runs: int) -> list[int]:
  import ruptures  # noqa: PLC0415  (only change detection needs it)

  n = len(log_medians)
  if n < 2 * min_runs:
    return []
  diffs = np.diff(log_medians)
  sigma = 1.4826 * float(np.median(np.abs(diffs - np.median(diffs)))) / math.sqrt(2.0)
  sigma = max(sigma, _MIN_SIGMA)
  penalty = _PENALTY_FACTOR * sigma**2 * math.log(n)
  # PELT with the linear kernel is PELT with the l2 cost, in ruptures' C code: 0.2 s for 10,000
  # runs where its Python `Pelt(model="l2")` takes minutes.
  algo = ruptures.KernelCPD(kernel="linear", min_size=min_runs, jump=1).fit(log_medians.reshape(-1, 1))
  return [int(b) for b in algo.predict(pen=penalty)[:-1]]  # the last "breakpoint" is n


def segment_ratio(
    before: Sequence[Sequence[float]], after: Sequence[Sequence[float]], *, level: float = CHANGE_LEVEL
) -> tuple[float, float, float]:
  """median(run medians after) / median(run medians before) with Welch's interval on the log run medians.

  Example:
    >>> r, low, high = segment_ratio([[1.0, 1.1], [1.0, 0.9], [1.0, 1.0]], [[2.0, 2.1], [2.0, 1.9], [2.0, 2.0]])
    >>> round(r, 2), low > 1
    (2.0, True)
  """
  log_medians = run_levels([*before, *after])[0]
  b = len(before)
  ratio = math.exp(float(np.median(log_medians[b:])) - float(np.median(log_medians[:b])))
  return (ratio, *_welch_interval(log_medians[:b], log_medians[b:], level))


def _welch_interval(before: np.ndarray, after: np.ndarray, level: float) -> tuple[float, float]:
  """exp of Welch's interval on the difference of mean log run medians (unbounded with one run a side)."""
  import scipy.special  # noqa: PLC0415  (slow to import; only change detection needs it)

  a, b = before, after
  if len(a) < 2 or len(b) < 2:
    return 0.0, math.inf
  va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
  if va + vb == 0.0:
    diff = float(b.mean() - a.mean())
    return math.exp(diff), math.exp(diff)
  dof = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
  half = float(scipy.special.stdtrit(dof, 0.5 + level / 2.0)) * math.sqrt(va + vb)  # scipy.stats.t.ppf
  diff = float(b.mean() - a.mean())
  return math.exp(diff - half), math.exp(diff + half)


def change_points(
    samples: Sequence[Sequence[float]],
    direction: Direction,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    level: float = CHANGE_LEVEL,
    min_runs: int = MIN_RUNS,
    window: int = WINDOW,
) -> list[ChangePoint]:
  """The confirmed changes of a series of runs, each run given by its samples (oldest first).

  Args:
    samples: per run, its finite positive samples (at least one).
    direction: which way is worse; NEUTRAL series have no changes.
    threshold: the smallest relative move that counts (0.10: 10%).
    level: the confidence level of each change's interval.
    min_runs: the fewest runs a segment holds.
    window: the most runs each side a change is measured on.

  Example:
    >>> runs = [[1.0, 1.01, 0.99]] * 6 + [[1.5, 1.51, 1.49]] * 6
    >>> [(c.index, round(c.ratio, 2), c.worse) for c in change_points(runs, Direction.LOWER)]
    [(6, 1.5, True)]
  """
  if direction is Direction.NEUTRAL or len(samples) < 2 * min_runs:
    return []
  if any(len(run) == 0 or not all(v > 0 and math.isfinite(v) for v in run) for run in samples):
    raise ValueError("change_points: every run needs finite positive samples")
  return level_changes(run_levels(samples)[0], direction, threshold=threshold, level=level, min_runs=min_runs,
                       window=window)  # fmt: skip


def level_changes(
    log_medians: np.ndarray,
    direction: Direction,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    floor: float = 0.0,
    level: float = CHANGE_LEVEL,
    min_runs: int = MIN_RUNS,
    window: int = WINDOW,
) -> list[ChangePoint]:
  """`change_points` of runs given by the logs of their medians (`run_levels`); a change moves
  the level by at least `floor` too, in the metric's unit (`absolute_floor`: 8 MiB of memory)."""
  if direction is Direction.NEUTRAL or len(log_medians) < 2 * min_runs:
    return []
  bounds = _candidates(log_medians, min_runs)
  tests: dict[tuple[int, int, int], _Boundary] = {}  # a boundary's test, by its runs
  while True:
    edges = [0, *bounds, len(log_medians)]
    spans = {edges[i]: (max(edges[i - 1], edges[i] - window), edges[i], min(edges[i + 1], edges[i] + window))
             for i in range(1, len(edges) - 1)}  # fmt: skip
    for span in spans.values():
      if span not in tests:
        tests[span] = _test(log_medians, span, level, min_runs)
    tested = {b: tests[span] for b, span in spans.items()}
    merge = [(t.p_single, -abs(math.log(t.ratio)), b) for b, t in tested.items() if not t.edge]
    if not merge:
      break
    bounds.remove(max(merge)[2])  # the least evidence first: the largest p-value, then the smallest move
  changes = []
  for b, t in tested.items():
    beyond = t.ratio >= 1.0 + threshold or t.ratio <= 1.0 / (1.0 + threshold)
    if not (t.edge and t.scan and beyond and t.before * abs(t.ratio - 1.0) >= floor):
      continue
    worse = t.ratio > 1 if direction is Direction.LOWER else t.ratio < 1
    edges = [0, *bounds, len(log_medians)]
    i = edges.index(b)
    changes.append(ChangePoint(b, t.ratio, t.low, t.high, worse, min(b - edges[i - 1], window), min(edges[i + 1] - b, window)))
  return changes


@dataclasses.dataclass(frozen=True)
class _Boundary:
  """A boundary tested on the runs around it: the ratio and its interval; whether the scan test
  rejects "no change" at SCAN_ALPHA (`scan`); whether it stays a segment edge (its interval
  excludes 1 and the scan test rejects at EDGE_ALPHA); the best split's own t-test p-value,
  which orders the merging (the least evidence first); and the level before it."""

  ratio: float
  low: float
  high: float
  scan: bool
  edge: bool
  p_single: float
  before: float


def largest_split_t(x: np.ndarray, min_runs: int) -> np.ndarray:
  """Per row of `x` (series of log medians), the largest pooled |t| over its splits."""
  m = x.shape[1]
  k = np.arange(min_runs, m - min_runs + 1)
  cs, cs2 = np.cumsum(x, axis=1), np.cumsum(x * x, axis=1)
  total, total2 = cs[:, -1:], cs2[:, -1:]
  n1, n2 = k, m - k
  mean1, mean2 = cs[:, k - 1] / n1, (total - cs[:, k - 1]) / n2
  squares = cs2[:, k - 1] - n1 * mean1**2 + (total2 - cs2[:, k - 1]) - n2 * mean2**2
  pooled = np.maximum(squares / (m - 2), 1e-12)
  return np.max(np.abs(mean2 - mean1) / np.sqrt(pooled * (1.0 / n1 + 1.0 / n2)), axis=1)


def scan_critical_values(runs: int, min_runs: int = MIN_RUNS) -> tuple[float, float]:
  """The scan statistic's critical values over series of `runs` normal log medians with no change:
  exceeded with probability SCAN_ALPHA, and EDGE_ALPHA.

  The pooled t does not depend on the series' level or spread, so under "no change" with normal
  log medians its distribution is the same for every series of that length: drawn once
  (`_scan_table.py`, measurements/scan_critical_values.py), else here. Shuffling the runs instead
  (as E-Divisive does) cannot give a p-value below 1 / (number of orderings): 2/252 on a 5|5
  split, above the cut-off, so a change was confirmed only with about six runs a side.

  Example:
    >>> scan, edge = scan_critical_values(10)
    >>> 5.0 < scan < 7.0 and 3.0 < edge < scan
    True
  """
  if (min_runs, SCAN_ALPHA, EDGE_ALPHA) == (_scan_table.MIN_RUNS, _scan_table.SCAN_ALPHA, _scan_table.EDGE_ALPHA):
    if runs in _scan_table.CRITICAL:
      return _scan_table.CRITICAL[runs]
  return _drawn_critical_values(runs, min_runs)


@functools.lru_cache(maxsize=None)
def _drawn_critical_values(runs: int, min_runs: int) -> tuple[float, float]:
  rng = np.random.default_rng(runs * 1000 + min_runs)
  stats = largest_split_t(rng.standard_normal((_NULL_DRAWS, runs)), min_runs)
  return tuple(float(q) for q in np.quantile(stats, [1.0 - SCAN_ALPHA, 1.0 - EDGE_ALPHA]))


def _test(log_medians: np.ndarray, span: tuple[int, int, int], level: float, min_runs: int) -> _Boundary:
  """The boundary at `b` tested over runs `start:end`."""
  import scipy.special  # noqa: PLC0415  (slow to import; only change detection needs it)

  start, b, end = span
  before, after = log_medians[start:b], log_medians[b:end]
  ratio = math.exp(float(np.median(after)) - float(np.median(before)))
  low, high = _welch_interval(before, after, level)
  runs = end - start
  if runs < 2 * min_runs or runs < 3:
    return _Boundary(ratio, low, high, False, False, 1.0, math.exp(float(np.median(before))))
  observed = largest_split_t(log_medians[None, start:end], min_runs)[0]
  scan_at, edge_at = scan_critical_values(runs, min_runs)
  p_single = 2.0 * float(scipy.special.stdtr(runs - 2, -observed))  # scipy.stats.t.sf, without its 0.4 ms a call
  edge = bool((low > 1.0 or high < 1.0) and observed > edge_at)
  return _Boundary(ratio, low, high, bool(observed > scan_at), edge, p_single, math.exp(float(np.median(before))))
