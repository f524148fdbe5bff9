"""A confidence interval of the median that assumes nothing about the distribution. Pure.

Order statistics: the true median lies between the k-th smallest and the k-th
largest of n samples with probability 1 - 2 P(Binomial(n, 1/2) < k). The
largest k that keeps this at or above the wanted level gives the interval.
With fewer than 6 samples no k reaches 95%, so the interval is the whole
range and its real coverage (1 - 2^(1-n): 75% for 3 samples, 94% for 5) is
returned with it, never a made-up 95%.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Sequence

from ckptbench.stats._compare import CONFIDENCE_LEVEL


@dataclasses.dataclass(frozen=True)
class MedianInterval:
  """The median of samples and an interval around it.

  Attributes:
    median: the sample median.
    low: lower end of the interval.
    high: upper end of the interval.
    coverage: the probability that the interval holds the true median.
    n: number of finite samples.
  """

  median: float
  low: float
  high: float
  coverage: float
  n: int


def _below(k: int, n: int) -> float:
  """P(Binomial(n, 1/2) < k)."""
  return sum(math.comb(n, i) for i in range(k)) / 2.0**n


def median_interval(samples: Sequence[float], level: float = CONFIDENCE_LEVEL) -> MedianInterval | None:
  """The median with its distribution-free interval; None without a finite sample.

  Example:
    >>> m = median_interval([1.0, 3.0, 2.0])
    >>> (m.median, m.low, m.high, m.coverage)
    (2.0, 1.0, 3.0, 0.75)
  """
  values = sorted(float(v) for v in samples if math.isfinite(float(v)))
  n = len(values)
  if n == 0:
    return None
  k = 1
  while k + 1 <= n // 2 and 1 - 2 * _below(k + 1, n) >= level:
    k += 1
  coverage = 1 - 2 * _below(k, n) if n > 1 else 0.0
  return MedianInterval(statistics.median(values), values[k - 1], values[n - k], coverage, n)


def ratio_interval(
    numerators: Sequence[float], denominators: Sequence[float], level: float = CONFIDENCE_LEVEL
) -> MedianInterval | None:
  """The median of the pairwise ratios `numerators[i] / denominators[i]`, with its interval (as
  `median_interval`); None without a pair of finite values and a positive denominator.

  Example:
    >>> m = ratio_interval([1.0, 1.0, 1.0], [2.0, 4.0, 1.0])  # a floor's times over a variant's
    >>> (m.median, m.low, m.high, m.coverage)
    (0.5, 0.25, 1.0, 0.75)
  """
  if len(numerators) != len(denominators):
    raise ValueError(f"ratio_interval needs pairs, got {len(numerators)} and {len(denominators)} values")
  ratios = [a / b for a, b in zip(numerators, denominators) if math.isfinite(a) and math.isfinite(b) and b > 0]
  return median_interval(ratios, level)
