"""Readings repeated until they agree, and the verdict on the figures they give: the memory pass's rule.

A memory pass (engine/memory/_pass.py) reads host memory with glibc's thresholds fixed, and some of
its readings repeat exactly: the 128 MiB OCDBT save read 105.5-106.0 MiB in 40 runs. Others move with
what the machine does meanwhile (how many read buffers are live at once): the same load read 164-192
MiB, the non-OCDBT save 27-53 MiB (measurements/memory_rule.py, 28 Nov 2026, load average 14-20). So the
pass does not repeat a benchmark a fixed number of times; it stops once, for each judged host-memory
tag of the benchmark, two readings in a row have agreed, within `AGREE_RELATIVE` of their mean or
`AGREE_MIB` (the larger), and at 6 readings at most (`engine.memory._pass_choices`).

The figure is the median of the readings taken. Its error, measured (measurements/memory_rule.py: 4
runs of 10 readings of the quick start's two variants, each sequence stopped by this rule in 300
random orders): within `ERROR_RELATIVE` of the median of all 10 or `ERROR_MIB`, the larger, in 97.0%
of 4,800 stops; by benchmark and operation 92.8% (the non-OCDBT save) to 100% (the OCDBT save). A tag
took 3.2 readings on average; 19% of them reached the cap unsettled.

Two settled figures are compared as measurements with that error, not as samples: the interval of
the difference is the difference of the figures plus or minus both errors (a figure's low end never
below 0: memory added is never negative); `worse` / `better` when
it excludes no change and the difference lies beyond the threshold (8 MiB at least, as every
memory verdict); `equivalent` when it lies within +-threshold; else `inconclusive`. The price of
fewer readings: a change smaller than both errors (12 MiB at least; 16% between two large figures)
is never decided, where 6 readings a side could decide a steady 10%. A benchmark that reached the
cap unsettled is compared by the statistical rule (stats/_decide.py) instead.
"""

from __future__ import annotations

import statistics
from typing import Sequence

from ckptbench.api import Verdict, threshold_text
from ckptbench.stats._decide import Decision
from ckptbench.stats._direction import Direction

AGREE_RELATIVE = 0.05
AGREE_MIB = 2.0
ERROR_RELATIVE = 0.08
ERROR_MIB = 6.0
# The share of measured stops whose figure lay within the error (97% over all, 93% for the noisiest
# operation): the interval's level as the verdicts record it.
ERROR_COVERAGE = 0.95


def readings_agree(readings: Sequence[float]) -> bool:
  """Whether two readings in a row (in the order taken, MiB) agreed (see the module docstring): a tag that
  has settled stays settled while the benchmark's other tags take more readings.

  Example:
    >>> readings_agree([117.7, 105.9, 98.0]), readings_agree([38.3, 45.6, 54.8])
    (True, False)
  """
  return any(abs(a - b) <= max(AGREE_RELATIVE * abs(a + b) / 2, AGREE_MIB) for a, b in zip(readings, readings[1:]))


def figure_error(figure: float) -> float:
  """The error of a settled figure, in its units (MiB): `ERROR_RELATIVE` of it or `ERROR_MIB`."""
  return max(ERROR_RELATIVE * abs(figure), ERROR_MIB)


def decide_settled(
    reference: Sequence[float], current: Sequence[float], direction: Direction, *, threshold: float, floor: float
) -> Decision:
  """The verdict of two settled benchmarks' readings (see the module docstring); the ratio and its
  interval are against the reference's figure.

  Example:
    >>> decide_settled([106.0, 105.9], [35.1, 33.3], Direction.LOWER, threshold=0.1, floor=8.0).verdict
    <Verdict.BETTER: 'better'>
  """
  a, b = statistics.median(reference), statistics.median(current)
  (a_low, a_high), (b_low, b_high) = _bounds(reference, a), _bounds(current, b)
  difference, low, high = b - a, b_low - a_high, b_high - a_low
  margin = max(floor, threshold * abs(a))
  if -margin <= low and high <= margin:
    verdict = Verdict.EQUIVALENT
  elif (low > 0 or high < 0) and abs(difference) > margin:
    verdict = Verdict.WORSE if (difference > 0) == (direction == Direction.LOWER) else Verdict.BETTER
  else:
    verdict = Verdict.INCONCLUSIVE
  n = min(len(reference), len(current))
  if a <= max(floor, 0.0):  # a ratio to a few MiB has no meaning (as stats/_decide.py says)
    return Decision(verdict, None, None, None, n, False, ERROR_COVERAGE)
  return Decision(verdict, b / a, 1 + low / a, 1 + high / a, n, False, ERROR_COVERAGE)


def _bounds(readings: Sequence[float], figure: float) -> tuple[float, float]:
  """The figure plus or minus its error; never below 0 where no reading is (memory added is never negative)."""
  error = figure_error(figure)
  low = figure - error
  return (max(low, 0.0) if min(readings) >= 0 else low), figure + error


def settled_rule(threshold: float) -> str:
  """The rule in one line, as summary.json's `rule` and the legends state it (its first two clauses say what it is)."""
  return (f"memory pass: readings until two in a row agree (within {AGREE_RELATIVE:.0%} or {AGREE_MIB:g} MiB); each"
          f" figure, their median, +-{ERROR_RELATIVE:.0%} or {ERROR_MIB:g} MiB ({ERROR_COVERAGE:.0%} of measured"
          f" stops); worse/better: the difference +- both errors excludes 0 and is beyond {threshold_text(threshold)}"
          f" (8 MiB at least); equivalent: it lies within +-{threshold_text(threshold)}")
