"""Summary statistics of one metric's samples."""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Sequence


@dataclasses.dataclass(frozen=True)
class Summary:
  """Statistics of a list of samples.

  Attributes:
    n: how many samples.
    mean: arithmetic mean.
    std: sample standard deviation (n - 1 in the denominator; 0 for one sample).
    min: smallest sample.
    max: largest sample.
    median: middle value (mean of the two middle values for even n).
  """

  n: int
  mean: float
  std: float
  min: float
  max: float
  median: float

  def to_dict(self) -> dict[str, float | int]:
    """The JSON form, as in summary.json: `{"n": ..., "mean": ..., ...}`."""
    return dataclasses.asdict(self)


def summarize(values: Sequence[float]) -> Summary:
  """Summarizes samples; NaN samples are dropped first.

  Args:
    values: the samples (at least one finite or infinite number).

  Returns:
    The `Summary` of the samples.

  Raises:
    ValueError: when no sample is left.

  Example:
    >>> summarize([1.0, 2.0, 4.0]).median
    2.0
  """
  kept = [float(v) for v in values if not math.isnan(float(v))]
  if not kept:
    raise ValueError("summarize() needs at least one sample that is not NaN")
  return Summary(
      n=len(kept),
      mean=statistics.fmean(kept),
      std=statistics.stdev(kept) if len(kept) > 1 else 0.0,
      min=min(kept),
      max=max(kept),
      median=statistics.median(kept),
  )
