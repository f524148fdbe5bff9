"""Which repeats of a benchmark lie far from the others? Pure statistics.

The modified z-score of Iglewicz and Hoaglin (1993): the distance of a sample
from the median in units of the median absolute deviation (MAD), scaled by
0.6745 so that it matches a z-score for normal data. A sample with a modified
z beyond 3.5 is an outlier. Unlike Tukey's fences (quartiles need about 8
samples to mean much) it works from 3 samples, the common repeat count: with
repeat times 2.43, 1.05 and 1.06 s the first has a modified z of about 90.

The usual cut-off of 3.5 suits 15 samples or more. With fewer, the MAD rests
on one or two gaps and large scores come by chance (3.5 flags 10% of normal
samples when n = 3), so the cut-off grows for small n: each is the 99th
percentile of |modified z| over normal samples of that size (simulated, 40,000
sets each), so about 1 sample in 100 of well-behaved repeats is flagged.

When more than half the samples are equal the MAD is 0; the mean absolute
deviation (scaled by 0.7979) stands in for it, as the authors advise, and when
that is 0 too every sample is equal and none is an outlier.
"""

from __future__ import annotations

import math
import statistics
from typing import Sequence

OUTLIER_Z = 3.5
MIN_SAMPLES = 3
_SMALL_SAMPLE_Z = {3: 36.8, 4: 7.8, 5: 9.1, 6: 5.6, 7: 5.7, 8: 4.5, 9: 4.6, 10: 4.1, 11: 4.1, 12: 3.8, 13: 3.8, 14: 3.6}
_MAD_SCALE = 0.6745
_MEAN_AD_SCALE = 0.7979


def modified_z_scores(samples: Sequence[float]) -> list[float]:
  """The modified z-score of every sample (0 for all when they cannot be told apart).

  Example:
    >>> [round(z) for z in modified_z_scores([2.43, 1.05, 1.06])]
    [92, -1, 0]
  """
  values = [float(v) for v in samples]
  finite = [v for v in values if math.isfinite(v)]
  if len(finite) < MIN_SAMPLES:
    return [0.0] * len(values)
  median = statistics.median(finite)
  deviations = [abs(v - median) for v in finite]
  mad = statistics.median(deviations)
  if mad > 0:
    scale = mad / _MAD_SCALE
  else:
    mean_ad = statistics.fmean(deviations)
    if mean_ad == 0:
      return [0.0] * len(values)
    scale = mean_ad / _MEAN_AD_SCALE
  return [(v - median) / scale if math.isfinite(v) else 0.0 for v in values]


def outlier_threshold(n: int) -> float:
  """The |modified z| beyond which one of `n` samples is an outlier (3.5 from 15 samples).

  Example:
    >>> outlier_threshold(3), outlier_threshold(20)
    (36.8, 3.5)
  """
  return _SMALL_SAMPLE_Z.get(n, OUTLIER_Z if n >= 15 else math.inf)


def outlier_indices(samples: Sequence[float]) -> list[int]:
  """Positions of the samples whose modified z-score exceeds `outlier_threshold` in size.

  Example:
    >>> outlier_indices([2.43, 1.05, 1.06, 1.04])
    [0]
  """
  n = sum(1 for v in samples if math.isfinite(float(v)))
  return [i for i, z in enumerate(modified_z_scores(samples)) if abs(z) > outlier_threshold(n)]
