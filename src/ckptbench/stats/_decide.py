"""The four-word verdict: better, worse, equivalent or inconclusive. Pure statistics.

The rule, on the effect of the current variant against its reference (the log
of the ratio for times and throughputs; the difference for memory, whose
values sit near zero):
- `worse` / `better`: the two-sided confidence interval of the effect (level
  1 - alpha) excludes no change and the estimate lies beyond the threshold, the
  bad / good way (as asv decides);
- `equivalent`: two one-sided tests at alpha each (TOST, Schuirmann 1987) show
  the effect above -threshold and below +threshold; that is, the two-sided
  interval at level 1 - 2 alpha (the equivalence interval, narrower) lies
  within +-threshold;
- `inconclusive`: neither; `repeats_needed` says how many repeats at least a
  decision would take at the spread observed.
The two cannot both hold: `worse` / `better` put the estimate beyond the
threshold, `equivalent` puts it (inside its interval) within.

The estimate and its interval are Hodges-Lehmann's, distribution-free and
robust to the odd slow repeat a shared machine produces: paired (the median of
the Walsh averages of per-round differences, interval from the Wilcoxon
signed-rank distribution) when the samples come in interleaved rounds, else
unpaired (the median of all pairwise differences, interval from the
Mann-Whitney distribution). Both distributions are exact (counted, not
approximated).

Repeated looks: adaptive repeats look at the data after several rounds and stop
once every comparison is decided. Looking K times at level alpha would call a
verdict far more often than alpha; `Design` spends alpha over the looks, each
test by its own group-sequential split (Bonferroni across the looks, so the
bound holds whichever look the run stops at, with no approximation):
- worse / better (two-sided), O'Brien-Fleming-like: each early look spends a
  twentieth of alpha, enough to stop early on a clear difference, and the last
  look (the rounds' cap, or the time budget) all that is left, so a run that
  needs every round loses little precision to the looks before;
- equivalence (each one-sided test), Pocock-type (the same level at every
  early look): each early look spends a twelfth of alpha (0.417%: a 99.17%
  equivalence interval, against the two-sided 99.75%), the last what is left.
  Two equal variants show their equivalence at an early look instead of
  waiting for the budget's end. A twelfth is the most that keeps the last
  look's share at least the two-sided test's half share after all eight
  possible early looks (alpha / 3 >= (alpha - 8 alpha / 20) / 2), which the
  argument below needs.
Which look is last depends only on the clock (the rounds' total durations),
never on which variant was faster. Those shares are auto repeats' `Spending`;
the effects divide a look's share across their terms (Holm, stats._effects),
and `tune`'s race spends by the same `Design` with a `Spending` of its own,
divided over the tests its true best faces (stats._race).

Why any wrong verdict of a run (a false worse, better or equivalent) has
probability at most alpha: a wrong verdict at a look needs one end of an
interval on the wrong side of the truth, and a look's two intervals are order
statistics of the same sorted differences, the equivalence one inside the
two-sided one (beta_k >= alpha_k / 2 at every look). With no change at all only the
two-sided intervals can err: sum(alpha_k) = alpha. With a true change at or
beyond the threshold (say above +threshold), a false `equivalent` or `better`
both need the equivalence interval's upper end below the truth: at most
sum(beta_k) = alpha. With a change within the threshold, `equivalent` is
right and a wrong `better` needs the two-sided upper end below the truth: at
most sum(alpha_k) / 2. A fixed repeat count looks once: alpha two-sided, the
textbook TOST's 1 - 2 alpha interval for equivalence.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
from typing import Sequence

import numpy as np

from ckptbench.api import Verdict, threshold_text
from ckptbench.stats._defaults import DEFAULT_ALPHA, DEFAULT_THRESHOLD
from ckptbench.stats._direction import Direction

EARLY_LOOK_SHARE = 0.05  # of alpha, spent by each look before the last on worse / better
# Of alpha, spent by each look before the last on each test of equivalence: the most that leaves the
# last look, after all len(AUTO_LOOKS) - 1 = 8 early ones, at least the two-sided test's half (1/3 >= 0.3).
EQUIVALENCE_EARLY_SHARE = 1 / 12
_MAX_NEEDED = 10_000


@dataclasses.dataclass(frozen=True)
class Spending:
  """How the looks of a run share alpha: the share of it each look before the last spends on worse /
  better (two-sided) and on each one-sided test of equivalence; the last look spends what is left.

  Two instances: auto repeats' (`AUTO_SPENDING`: O'Brien-Fleming-like on worse / better, Pocock-type on
  equivalence, over `AUTO_LOOKS`) and the race's (stats._race.RACE_SPENDING: an equal share at each of its
  looks). Either way the shares of all looks sum to alpha and each look's equivalence share is at least
  half its two-sided one, which the module docstring's argument needs.
  """

  early_share: float
  equivalence_early_share: float


AUTO_SPENDING = Spending(EARLY_LOOK_SHARE, EQUIVALENCE_EARLY_SHARE)


@dataclasses.dataclass(frozen=True)
class Design:
  """How much of the error rate `alpha` this look spends.

  Attributes:
    alpha: the chance, over the whole run, of any wrong verdict (a false worse, better or
      equivalent; the module docstring says why both tests may each spend it).
    early_looks: looks taken before this one (early look k after round `AUTO_LOOKS[k]`), each
      spending `spending.early_share` of alpha on worse / better and the Pocock-type share
      `spending.equivalence_early_share` on each test of equivalence.
    last: this look spends what is left (a fixed repeat count: its one look); an
      early look spends its shares only.
    spending: the shares of the looks (auto repeats', or the race's).
  """

  alpha: float = DEFAULT_ALPHA
  early_looks: int = 0
  last: bool = True
  spending: Spending = AUTO_SPENDING

  @property
  def spent(self) -> float:
    """The error rate this look's intervals may have."""
    share = self.alpha * self.spending.early_share
    return self.alpha - self.early_looks * share if self.last else share

  @property
  def level(self) -> float:
    """The confidence level of this look's two-sided intervals (worse / better)."""
    return 1 - self.spent

  @property
  def equivalence_spent(self) -> float:
    """The error rate of each of this look's two one-sided tests of equivalence: at an early look its
    share (Pocock-type: the same at every early look), at the last what that leaves of alpha."""
    share = self.alpha * self.spending.equivalence_early_share
    return self.alpha - self.early_looks * share if self.last else share

  @property
  def equivalence_level(self) -> float:
    """The level of the two-sided interval whose ends are those one-sided tests' bounds."""
    return 1 - 2 * self.equivalence_spent

  @property
  def looks(self) -> int:
    """Looks taken, this one included."""
    return self.early_looks + 1

  def ahead(self) -> Design:
    """The most lenient look that can still come: this one if it is the last, else the next as the last
    (any later last look spends less). What a look could decide is judged at that look's levels."""
    return self if self.last else dataclasses.replace(self, early_looks=self.early_looks + 1, last=True)

  def rule(self, threshold: float, paired: bool) -> str:
    """The rule in one line, as summary.json's `rule` and the legends state it."""
    how = "per-round (paired)" if paired else "unpaired"
    looks = ""
    if self.early_looks:
      looks = (f", alpha {self.alpha:g} spent over {self.looks} looks (worse/better: {self.spending.early_share:g} of"
               f" it at each early look; equivalence: 1/{round(1 / self.spending.equivalence_early_share)} of it at each)")
    tests = f"(two one-sided tests at {100 * self.equivalence_spent:.4g}% each) within +-{threshold_text(threshold)}"
    if f"{self.equivalence_level:.2%}" == f"{self.level:.2%}":  # an early look: one interval for both
      equivalent = f"equivalent: the same interval {tests}"
    else:
      equivalent = (f"equivalent: the {self.equivalence_level:.2%} interval {tests}; low/high: the"
                    f" {self.equivalence_level:.2%} interval for equivalent, the {self.level:.2%} one otherwise")
    return (f"Hodges-Lehmann {self.level:.2%} interval of the {how} ratio{looks}; worse/better: interval"
            f" excludes 1 and ratio beyond {threshold_text(threshold)}; {equivalent}")


@dataclasses.dataclass(frozen=True)
class Decision:
  """One comparison, current against reference.

  Attributes:
    verdict: one of the four words, or not judged.
    ratio: estimate of current / reference; None when it has no meaning (reference not positive).
    low: lower end of the ratio's interval (None: unbounded, too few samples): the
      equivalence interval for `equivalent`, the two-sided one otherwise.
    high: upper end.
    n: rounds paired, or the smaller sample when unpaired.
    paired: whether per-round ratios were used.
    level: the confidence level of that interval.
    repeats_needed: for inconclusive, the fewest repeats that could decide it at the spread observed,
      at the levels of the most lenient look to come (`Design.ahead`).
  """

  verdict: Verdict
  ratio: float | None
  low: float | None
  high: float | None
  n: int
  paired: bool
  level: float
  repeats_needed: int | None = None


@functools.lru_cache(maxsize=256)
def _signed_rank_cdf(n: int) -> tuple[float, ...]:
  """P(T+ <= t) for t = 0..n(n+1)/2: Wilcoxon's signed-rank statistic under no change."""
  counts = np.zeros(n * (n + 1) // 2 + 1)
  counts[0] = 1.0
  for rank in range(1, n + 1):
    counts[rank:] = counts[rank:] + counts[:-rank].copy()
  return tuple(np.cumsum(counts) / 2.0**n)


@functools.lru_cache(maxsize=256)
def _rank_sum_cdf(m: int, n: int) -> tuple[float, ...]:
  """P(U <= u) for u = 0..m*n: Mann-Whitney's U under no change (a Gaussian binomial, exact ints)."""
  counts = [1] + [0] * (m * n)  # the coefficients of prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)
  for i in range(1, m + 1):
    for u in range(len(counts) - 1, n + i - 1, -1):
      counts[u] -= counts[u - n - i]
    for u in range(i, len(counts)):
      counts[u] += counts[u - i]
  total = math.comb(m + n, m)
  cumulative, out = 0, []
  for c in counts:
    cumulative += c
    out.append(cumulative / total)
  return tuple(out)


def _rank(cdf: Sequence[float], alpha: float) -> int:
  """The largest k with P(statistic <= k - 1) <= alpha / 2; 0 when none (no interval)."""
  k = 0
  while k < len(cdf) and cdf[k] <= alpha / 2:
    k += 1
  return k


def _spread(ref: np.ndarray, cur: np.ndarray, paired: bool) -> tuple[np.ndarray, Sequence[float]]:
  """The sorted differences whose median is the estimate, with the exact null distribution whose
  quantiles pick an interval's ends among them: the Walsh averages of the per-round differences and
  the signed-rank distribution (paired), else all pairwise differences and Mann-Whitney's."""
  if paired:
    d = cur - ref
    i, j = np.triu_indices(len(d))
    return np.sort((d[i] + d[j]) / 2), _signed_rank_cdf(len(d))
  return np.sort((cur[None, :] - ref[:, None]).ravel()), _rank_sum_cdf(len(ref), len(cur))


def _bounds(spread: np.ndarray, cdf: Sequence[float], alpha: float) -> tuple[float, float]:
  """The two-sided interval at level 1 - alpha (alpha / 2 each side); -inf/inf: too few samples."""
  k = _rank(cdf, alpha)
  if k == 0:
    return -math.inf, math.inf
  return float(spread[k - 1]), float(spread[len(spread) - k])


def effect_interval(
    reference: Sequence[float], current: Sequence[float], paired: bool, level: float
) -> tuple[float, float, float]:
  """Hodges-Lehmann estimate of current - reference and its interval (-inf/inf: too few samples).

  Example:
    >>> effect_interval([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2.0, 3.0, 4.0, 5.0, 6.0, 7.0], True, 0.9)
    (1.0, 1.0, 1.0)
  """
  spread, cdf = _spread(np.asarray(reference, float), np.asarray(current, float), paired)
  return (float(np.median(spread)), *_bounds(spread, cdf, 1 - level))


def min_rounds(alpha: float, paired: bool) -> int:
  """The fewest repeats a side whose interval is bounded at this alpha."""
  n = 2
  while _rank(_signed_rank_cdf(n) if paired else _rank_sum_cdf(n, n), alpha) == 0:
    n += 1
  return n


@dataclasses.dataclass(frozen=True)
class Intervals:
  """One look's two intervals of the effect: worse / better's and equivalence's (narrower or equal)."""

  two_sided: tuple[float, float]
  equivalence: tuple[float, float]

  @classmethod
  def at(cls, spread: np.ndarray, cdf: Sequence[float], design: Design) -> Intervals:
    return cls(_bounds(spread, cdf, design.spent), _bounds(spread, cdf, 2 * design.equivalence_spent))


def repeats_to_decide(
    n: int, estimate: float, intervals: Intervals, margin: float, design: Design, paired: bool
) -> int:
  """The fewest repeats that could decide at `design`'s levels, the spread shrinking as 1/sqrt(n): at
  least this many.

  The quickest way out is the nearer one: beyond the margin, the two-sided
  interval has to shed no-change (half-width below the estimate); within it, the
  equivalence interval (the narrower) has to fit in +-margin (half-width below
  the margin, were the estimate to settle at no change).
  """
  beyond = abs(estimate) > margin
  low, high = intervals.two_sided if beyond else intervals.equivalence
  if not math.isfinite(low) or not math.isfinite(high):
    alpha = design.spent if beyond else 2 * design.equivalence_spent
    return max(min_rounds(alpha, paired), n + 1)
  half = (high - low) / 2
  room = abs(estimate) if beyond else margin
  if room <= 0:
    return _MAX_NEEDED
  return int(min(_MAX_NEEDED, max(n + 1, math.ceil(n * (half / room) ** 2))))


def decide(
    reference: Sequence[float],
    current: Sequence[float],
    direction: Direction,
    *,
    paired: bool,
    threshold: float = DEFAULT_THRESHOLD,
    design: Design = Design(),
    floor: float = 0.0,
) -> Decision:
  """The verdict of `current` against `reference` (see the module docstring).

  Args:
    reference: the reference's samples (with `paired`, one per round, in round order).
    current: the current samples, the same rounds when `paired`.
    direction: which way is better; neutral metrics are not judged.
    paired: compare per-round ratios (interleaved rounds) instead of two samples.
    threshold: the relative change that matters (0.1 = 10%).
    design: the error rate and the looks sharing it.
    floor: changes this small in absolute units never count (memory: 8 MiB);
      with a floor the effect is the difference, else the log of the ratio.

  Raises:
    ValueError: paired samples of different lengths, a negative threshold.

  Example:
    >>> ref = [1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 1.02, 0.98, 1.01, 0.99]
    >>> decide(ref, [1.3 * v for v in ref], Direction.LOWER, paired=True).verdict
    <Verdict.WORSE: 'worse'>
  """
  if threshold < 0:
    raise ValueError(f"Invalid value for threshold={threshold}; it must be >= 0 (0.1 = 10%)")
  ref, cur = _finite(reference, current, paired)
  n = min(len(ref), len(cur))
  if direction == Direction.NEUTRAL or n == 0:
    return _unjudged(ref, cur, direction, paired, design)
  ref_median = statistics.median(ref)
  logs = floor == 0 and min(ref + cur) > 0
  if logs:
    x_ref, x_cur, margin = np.log(ref), np.log(cur), math.log1p(threshold)
  else:
    x_ref, x_cur, margin = np.asarray(ref), np.asarray(cur), max(floor, threshold * abs(ref_median))
  spread, cdf = _spread(x_ref, x_cur, paired)
  estimate = float(np.median(spread))
  intervals = Intervals.at(spread, cdf, design)
  verdict = verdict_of(estimate, intervals, margin, direction)
  needed = None
  if verdict == Verdict.INCONCLUSIVE:  # at the levels of the most lenient look to come
    ahead = design.ahead()
    needed = repeats_to_decide(n, estimate, Intervals.at(spread, cdf, ahead), margin, ahead, paired)
  if verdict == Verdict.EQUIVALENT:  # report the interval the verdict was decided on
    (low, high), level = intervals.equivalence, design.equivalence_level
  else:
    (low, high), level = intervals.two_sided, design.level
  ratio, r_low, r_high = _as_ratios(estimate, low, high, logs, ref_median, floor)
  return Decision(verdict, ratio, r_low, r_high, n, paired, level, needed)


def _finite(reference: Sequence[float], current: Sequence[float], paired: bool) -> tuple[list[float], list[float]]:
  """The finite samples of each side; paired, a round with a value missing on either side drops out whole."""
  if paired and len(reference) != len(current):
    raise ValueError(f"paired samples need one value per round on both sides, got {len(reference)} and {len(current)}")
  if paired:
    pairs = [(float(r), float(c)) for r, c in zip(reference, current) if math.isfinite(r) and math.isfinite(c)]
    return [r for r, _ in pairs], [c for _, c in pairs]
  ref = [float(v) for v in reference if math.isfinite(float(v))]
  cur = [float(v) for v in current if math.isfinite(float(v))]
  return ref, cur


def verdict_of(estimate: float, intervals: Intervals, margin: float, direction: Direction) -> Verdict:
  """Equivalence on its interval, worse / better on the two-sided one (never both: see the module docstring)."""
  eq_low, eq_high = intervals.equivalence
  if -margin <= eq_low and eq_high <= margin:
    return Verdict.EQUIVALENT
  low, high = intervals.two_sided
  if (low > 0 or high < 0) and abs(estimate) > margin:
    worse = (estimate > 0) == (direction == Direction.LOWER)
    return Verdict.WORSE if worse else Verdict.BETTER
  return Verdict.INCONCLUSIVE


def _as_ratios(estimate: float, low: float, high: float, logs: bool, ref_median: float, floor: float):
  """The effect and its interval as ratios to the reference (None: unbounded, or no meaning:
  a reference within the floor of zero, such as a few MiB of memory added)."""
  if logs:
    to_ratio = math.exp
  elif ref_median > max(floor, 0.0):
    to_ratio = lambda v: 1 + v / ref_median  # noqa: E731
  else:
    return None, None, None
  return tuple(to_ratio(v) if math.isfinite(v) else None for v in (estimate, low, high))


def _unjudged(
    ref: Sequence[float], cur: Sequence[float], direction: Direction, paired: bool, design: Design
) -> Decision:
  """A neutral metric (shown, not judged), or a side without samples (inconclusive: the equivalence
  interval, the narrower, is the first that more repeats bound)."""
  ratio = None
  if ref and cur and statistics.median(ref) > 0:
    ratio = statistics.median(cur) / statistics.median(ref)
  if direction == Direction.NEUTRAL:
    return Decision(Verdict.NOT_JUDGED, ratio, None, None, min(len(ref), len(cur)), paired, design.level)
  needed = min_rounds(2 * design.ahead().equivalence_spent, paired)
  return Decision(Verdict.INCONCLUSIVE, ratio, None, None, 0, paired, design.level, needed)
