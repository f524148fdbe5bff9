"""Is a metric better, worse, equivalent or inconclusive against a baseline? Pure statistics.

Two samples from different runs (a baseline and the current run) cannot be
paired by round, so `compare_samples` applies the four-word rule of
`stats._decide` to them unpaired (Hodges-Lehmann shift of the log values, with
the exact Mann-Whitney interval). `median_ratio` is the plain bootstrap
interval some benchmarks report beside their own figures.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Mapping, Sequence

import numpy as np

from ckptbench.stats._decide import DEFAULT_ALPHA, DEFAULT_THRESHOLD, Design, Verdict, decide
from ckptbench.stats._direction import Direction

CONFIDENCE_LEVEL = 1 - DEFAULT_ALPHA
_BOOTSTRAP_RESAMPLES = 2000


@dataclasses.dataclass(frozen=True)
class MetricComparison:
  """One metric, baseline against current.

  Attributes:
    direction: which way is better.
    baseline: median of the baseline samples.
    current: median of the current samples.
    ratio: the Hodges-Lehmann estimate of current / baseline; None when it has no meaning.
    ci_low: lower end of its interval (None: unbounded, too few samples).
    ci_high: upper end.
    verdict: better, worse, equivalent, inconclusive or not judged.
    n_baseline: number of baseline samples.
    n_current: number of current samples.
    level: the interval's confidence level.
    repeats_needed: for inconclusive, about how many repeats a side would decide.
  """

  direction: Direction
  baseline: float
  current: float
  ratio: float | None
  ci_low: float | None
  ci_high: float | None
  verdict: Verdict
  n_baseline: int
  n_current: int
  level: float = CONFIDENCE_LEVEL
  repeats_needed: int | None = None


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


def compare_samples(
    baseline: Sequence[float],
    current: Sequence[float],
    direction: Direction,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    design: Design = Design(),
    min_abs_change: float = 0.0,
) -> MetricComparison:
  """Compares the samples of one metric, current run against baseline, unpaired.

  Args:
    baseline: raw baseline samples (NaN dropped).
    current: raw current samples (NaN dropped).
    direction: from `metric_direction`.
    threshold: the relative change that matters (0.10 = 10%).
    design: the error rate and how many looks share it.
    min_abs_change: changes this small in absolute units never count (memory).

  Returns:
    The `MetricComparison`.

  Example:
    >>> compare_samples([1.0, 1.1, 0.9, 1.0, 1.05], [1.5, 1.6, 1.4, 1.55, 1.5],
    ...                 Direction.LOWER).verdict
    <Verdict.WORSE: 'worse'>
  """
  base = [float(v) for v in baseline if not math.isnan(float(v))]
  cur = [float(v) for v in current if not math.isnan(float(v))]
  decision = decide(base, cur, direction, paired=False, threshold=threshold, design=design, floor=min_abs_change)
  return MetricComparison(
      direction,
      statistics.median(base) if base else math.nan,
      statistics.median(cur) if cur else math.nan,
      decision.ratio, decision.low, decision.high, decision.verdict, len(base), len(cur),
      decision.level, decision.repeats_needed,
  )


def _without_nan(samples: Sequence[float]) -> np.ndarray:
  return np.asarray([float(v) for v in samples if not math.isnan(float(v))])
