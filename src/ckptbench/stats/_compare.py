"""Is a metric better, worse or the same as in the baseline? Pure statistics.

The rule follows asv: a change is called only when it is both large (the
ratio of medians passes `threshold`) and statistically significant (a
two-sided Mann-Whitney U test on the raw samples gives p < `alpha`).

Why alpha = 0.01 and not asv's 0.002: with 5 repeats a side, the smallest
p-value Mann-Whitney U can reach is 2 / C(10, 5) = 0.0079, so at 0.002 no
5-vs-5 comparison could ever be significant. At 0.01, 5 vs 5 is significant
only when every current sample lies beyond every baseline sample, which is
the chance 2 / 252 under no change; the threshold then removes most of what
is left. `benchmarks/baseline_aa.py` and `baseline_ab.py` measure both error
rates. When the sample sizes cannot reach p < alpha at all, the verdict is
"not enough samples" instead of a silent "unchanged".
"""

from __future__ import annotations

import dataclasses
import enum
import math
import statistics
from typing import Mapping, Sequence

import numpy as np

from ckptbench.stats._direction import Direction

DEFAULT_THRESHOLD = 0.10
DEFAULT_ALPHA = 0.01
CONFIDENCE_LEVEL = 0.95
_BOOTSTRAP_RESAMPLES = 2000
_EXACT_SPLITS_MAX = 5_000


class Verdict(str, enum.Enum):
  """The outcome of comparing one metric with its baseline."""

  IMPROVED = "improved"
  UNCHANGED = "unchanged"
  REGRESSED = "regressed"
  NOT_ENOUGH_SAMPLES = "not enough samples"
  NOT_JUDGED = "not judged"  # neutral metrics: counts, sizes, inventory


@dataclasses.dataclass(frozen=True)
class MetricComparison:
  """One metric, baseline against current.

  Attributes:
    direction: which way is better.
    baseline: median of the baseline samples.
    current: median of the current samples.
    ratio: current / baseline; None when the baseline median is not positive.
    ci_low: lower end of the bootstrap confidence interval of `ratio`.
    ci_high: upper end of that interval.
    p_value: two-sided Mann-Whitney U p-value; None without samples.
    verdict: improved, unchanged, regressed, not enough samples, not judged.
    n_baseline: number of baseline samples.
    n_current: number of current samples.
  """

  direction: Direction
  baseline: float
  current: float
  ratio: float | None
  ci_low: float | None
  ci_high: float | None
  p_value: float | None
  verdict: Verdict
  n_baseline: int
  n_current: int


def min_p_value(n_baseline: int, n_current: int) -> float:
  """The smallest two-sided Mann-Whitney U p-value these sample sizes allow.

  Example:
    >>> round(min_p_value(5, 5), 4)
    0.0079
  """
  if n_baseline < 1 or n_current < 1:
    return 1.0
  return min(1.0, 2.0 / math.comb(n_baseline + n_current, n_baseline))


def per_repeat_across_hosts(
    values_by_host: Mapping[int, Mapping[int, float]], direction: Direction
) -> list[float]:
  """One sample per repeat from every host's value: the worst host's.

  The slowest host bounds a collective save, and the hungriest host is the one
  that runs out of memory, so a lower-better metric takes the maximum over
  hosts, a higher-better one the minimum, and a neutral one the mean.

  Args:
    values_by_host: `{host: {repeat: value}}`.
    direction: the metric's direction.

  Returns:
    The samples, ordered by repeat.

  Example:
    >>> per_repeat_across_hosts({0: {0: 1.0, 1: 2.0}, 1: {0: 3.0}}, Direction.LOWER)
    [3.0, 2.0]
  """
  repeats = sorted({r for by_repeat in values_by_host.values() for r in by_repeat})
  reduce = {Direction.LOWER: max, Direction.HIGHER: min}.get(direction, statistics.fmean)
  samples = []
  for repeat in repeats:
    values = [v[repeat] for v in values_by_host.values() if repeat in v]
    samples.append(float(reduce(values)))
  return samples


def _median_ratio(baseline, current, axis=-1):
  base, cur = np.median(baseline, axis=axis), np.median(current, axis=axis)
  # A resample whose baseline median is 0: equal medians are a ratio of 1, others infinite.
  return np.where(base == cur, 1.0, cur / base)


def _ratio_interval(
    baseline: np.ndarray, current: np.ndarray, seed: int
) -> tuple[float | None, float | None]:
  if len(baseline) < 2 or len(current) < 2:
    return None, None
  import scipy.stats  # noqa: PLC0415  (scipy takes ~1 s to import; only comparisons need it)

  with np.errstate(all="ignore"):  # resamples whose baseline median is 0 give inf
    result = scipy.stats.bootstrap(
        (baseline, current),
        _median_ratio,
        n_resamples=_BOOTSTRAP_RESAMPLES,
        vectorized=True,
        paired=False,
        confidence_level=CONFIDENCE_LEVEL,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
  low, high = (float(v) for v in result.confidence_interval)
  return (low if math.isfinite(low) else None), (high if math.isfinite(high) else None)


def median_ratio(
    baseline: Sequence[float], current: Sequence[float], *, seed: int = 0
) -> tuple[float | None, float | None, float | None]:
  """median(current) / median(baseline) with its bootstrap 95% interval.

  Returns:
    (ratio, low, high); the ratio is None when the baseline median is not
    positive, the interval None with fewer than two samples a side.

  Example:
    >>> median_ratio([1.0, 1.0, 1.0], [2.0, 2.0, 2.0])
    (2.0, 2.0, 2.0)
  """
  base, cur = _without_nan(baseline), _without_nan(current)
  if len(base) == 0 or len(cur) == 0 or not np.median(base) > 0:
    return None, None, None
  low, high = _ratio_interval(base, cur, seed)
  return float(np.median(cur) / np.median(base)), low, high


def _p_value(baseline: np.ndarray, current: np.ndarray) -> float:
  import scipy.stats  # noqa: PLC0415

  if np.all(baseline == baseline[0]) and np.all(current == baseline[0]):
    return 1.0  # identical constant samples: no evidence of any change
  # With ties, scipy's "auto" falls back to the normal approximation, too
  # coarse at 5 vs 5 (complete separation gives 0.012, not 0.008); small tied
  # samples get the exact null distribution by enumerating every split.
  method = "auto"
  tied = len(np.unique(np.concatenate([baseline, current]))) < len(baseline) + len(current)
  splits = math.comb(len(baseline) + len(current), len(baseline))
  if tied and min(len(baseline), len(current)) >= 2 and splits <= _EXACT_SPLITS_MAX:
    method = scipy.stats.PermutationMethod(n_resamples=_EXACT_SPLITS_MAX)
  result = scipy.stats.mannwhitneyu(current, baseline, alternative="two-sided", method=method)
  return float(result.pvalue)


def compare_samples(
    baseline: Sequence[float],
    current: Sequence[float],
    direction: Direction,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    alpha: float = DEFAULT_ALPHA,
    min_abs_change: float = 0.0,
    seed: int = 0,
) -> MetricComparison:
  """Compares the samples of one metric, current run against baseline.

  A regression needs all of: a judged direction; sample sizes that can reach
  p < alpha; p < alpha; the median worse by more than the factor
  1 + threshold (for higher-better metrics, baseline / current > 1 + threshold,
  so a 10% slower save regresses its time and its throughput alike); and an
  absolute change above `min_abs_change`. Improvements mirror it.

  Args:
    baseline: raw baseline samples (NaN dropped).
    current: raw current samples (NaN dropped).
    direction: from `metric_direction`.
    threshold: the relative change that matters (0.10 = 10%).
    alpha: significance level of the Mann-Whitney U test.
    min_abs_change: changes of the median this small are never called.
    seed: seed of the bootstrap, so a comparison is reproducible.

  Returns:
    The `MetricComparison`.

  Raises:
    ValueError: for a negative threshold or an alpha outside (0, 1).

  Example:
    >>> compare_samples([1.0, 1.1, 0.9, 1.0, 1.05], [1.5, 1.6, 1.4, 1.55, 1.5],
    ...                 Direction.LOWER).verdict
    <Verdict.REGRESSED: 'regressed'>
  """
  _check_limits(threshold, alpha)
  base, cur = _without_nan(baseline), _without_nan(current)
  n_base, n_cur = len(base), len(cur)
  if n_base == 0 or n_cur == 0:
    return MetricComparison(
        direction, math.nan, math.nan, None, None, None, None, Verdict.NOT_ENOUGH_SAMPLES, n_base, n_cur
    )
  base_median, cur_median = float(np.median(base)), float(np.median(cur))
  ratio = cur_median / base_median if base_median > 0 else None
  if direction == Direction.NEUTRAL:  # shown, never judged: no test, no interval
    return MetricComparison(
        direction, base_median, cur_median, ratio, None, None, None, Verdict.NOT_JUDGED, n_base, n_cur
    )
  ci_low, ci_high = _ratio_interval(base, cur, seed) if ratio is not None else (None, None)
  p_value = _p_value(base, cur)
  verdict = _significance(n_base, n_cur, p_value, alpha) or _judge(
      base_median, cur_median, direction, threshold, min_abs_change
  )
  return MetricComparison(
      direction, base_median, cur_median, ratio, ci_low, ci_high, p_value,
      verdict, n_base, n_cur,
  )


def _significance(n_base: int, n_cur: int, p_value: float, alpha: float) -> Verdict | None:
  """The verdict when the test alone decides: samples too few to ever reach p < alpha, or p >= alpha."""
  if min_p_value(n_base, n_cur) >= alpha:
    return Verdict.NOT_ENOUGH_SAMPLES
  return Verdict.UNCHANGED if p_value >= alpha else None


def _check_limits(threshold: float, alpha: float) -> None:
  if threshold < 0:
    raise ValueError(f"Invalid value for threshold={threshold}; it must be >= 0 (0.1 = 10%)")
  if not 0 < alpha < 1:
    raise ValueError(f"Invalid value for alpha={alpha}; it must lie in (0, 1)")


def _without_nan(samples: Sequence[float]) -> np.ndarray:
  return np.asarray([float(v) for v in samples if not math.isnan(float(v))])


def _judge(
    base: float, cur: float, direction: Direction, threshold: float, min_abs_change: float
) -> Verdict:
  """The verdict the effect size alone gives (significance is checked apart)."""
  if abs(cur - base) <= min_abs_change or cur == base:
    return Verdict.UNCHANGED
  worse = cur > base if direction == Direction.LOWER else cur < base
  if base > 0 and cur > 0:
    # How many times worse (or better) the current median is, >= 1.
    factor = max(cur / base, base / cur)
    if factor <= 1 + threshold:
      return Verdict.UNCHANGED
  return Verdict.REGRESSED if worse else Verdict.IMPROVED
