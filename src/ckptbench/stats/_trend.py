"""Trends over a series: how fast a quantity grows per event (memory per save). Pure math."""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence


@dataclasses.dataclass(frozen=True)
class Slope:
  """A robust slope with its 95% interval.

  Attributes:
    per_step: change of the value per unit of x (the Theil-Sen median of pairwise slopes).
    low: lower end of the 95% interval.
    high: upper end of the 95% interval.
    n: number of points.
  """

  per_step: float
  low: float
  high: float
  n: int


def theil_sen_slope(values: Sequence[float], x: Sequence[float] | None = None) -> Slope:
  """The Theil-Sen slope of `values` against `x` (default 0, 1, 2, ...).

  Robust to a few outliers (a garbage collection, one slow save), unlike least
  squares, so a real leak shows as a slope and a single spike does not.

  Raises:
    ValueError: with fewer than three points.

  Example:
    >>> theil_sen_slope([100.0, 102.0, 104.0, 150.0, 108.0]).per_step
    2.0
  """
  if len(values) < 3:
    raise ValueError(f"a slope needs at least 3 points, got {len(values)}")
  import scipy.stats  # noqa: PLC0415  (scipy takes ~1 s to import)

  xs = list(range(len(values))) if x is None else list(x)
  result = scipy.stats.theilslopes(list(values), xs, alpha=0.95)
  slope, _, low, high = (float(v) for v in result)
  return Slope(slope, low if math.isfinite(low) else slope, high if math.isfinite(high) else slope, len(values))
