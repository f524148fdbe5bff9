"""Readings repeated until their figure is precise, and the verdict on two figures: the memory pass's rule.

A memory pass (engine/memory/_pass.py) reads host memory with glibc's thresholds fixed, and some of
its readings repeat exactly: the 128 MiB OCDBT save read 105.5-106.0 MiB in 40 runs. Others move with
what the machine does meanwhile (how many read buffers are live at once): the same load read 164-192
MiB, the non-OCDBT save 27-53 MiB (measurements/memory_rule.py). So the pass does not repeat a benchmark
a fixed number of times: it stops once, for each judged host-memory tag of the benchmark, the figure
(the mean of its readings) is known to within `TARGET_RELATIVE` of itself or `TARGET_MIB`, the larger:
at least `MIN_READINGS` readings, and the figure's error (`figure_error`: Student's t at one-sided
95%, n - 1 degrees of freedom, times the readings' standard error) within that target. At most
`memory_readings_cap` readings (engine/memory/_pass_choices.py): a tag still short of the target there
is compared all the same, with the error its readings give.

Two benchmarks' readings are compared by Welch's t on the difference of their means (each side's
spread and count, Welch-Satterthwaite degrees of freedom), at one look: `worse` / `better` when the
two-sided 95% interval of the difference excludes no change and the difference lies beyond the
threshold (8 MiB at least, as every memory verdict); `equivalent` when the 90% interval (two one-sided
tests at 5% each) lies within +-threshold; else `inconclusive`, with the readings a side that would
decide at the spread observed. The error shrinks as 1/sqrt(readings), so more readings decide what
fewer leave open. Readings that repeat exactly have no spread: their difference is then decided by
its size alone.

The target is a quarter of the smallest margin a comparison has (8 MiB, or 10% of the figure), so
two figures at their targets leave half the margin to a difference still called `equivalent`. The
stop reads the spread it stops on, which makes that spread read small more often than it is; the
error rates of the whole (the stop, then the verdict), measured by simulation and on real readings
(measurements/memory_rule.py), are on docs/performance.md, *Host-memory verdicts*.
"""

from __future__ import annotations

import math
import statistics
from typing import Sequence

from ckptbench.api import Verdict, threshold_text
from ckptbench.stats._decide import Decision
from ckptbench.stats._defaults import DEFAULT_ALPHA, MIN_READINGS
from ckptbench.stats._direction import Direction

TARGET_RELATIVE = 0.025
TARGET_MIB = 2.0
_MAX_NEEDED = 10_000


def _t_quantile(probability: float, degrees: float) -> float:
  import scipy.special  # noqa: PLC0415  (slow to import; only verdicts on memory need it)

  return float(scipy.special.stdtrit(degrees, probability))


def figure_error(readings: Sequence[float]) -> float:
  """How far the figure (the readings' mean, MiB) may lie from the truth at one-sided 95%: Student's t
  with n - 1 degrees of freedom times the standard error; infinite below 2 readings.

  Example:
    >>> round(figure_error([106.0, 105.5, 106.0]), 2), figure_error([42.0])
    (0.49, inf)
  """
  n = len(readings)
  if n < 2:
    return math.inf
  return _t_quantile(1 - DEFAULT_ALPHA, n - 1) * statistics.stdev(readings) / math.sqrt(n)


def readings_settled(readings: Sequence[float], *, least: int = MIN_READINGS) -> bool:
  """Whether a tag's readings (MiB) give a figure precise enough to stop reading it (module docstring);
  `least`: the fewest readings (another than `MIN_READINGS` only where measurements/memory_rule.py weighs one).

  Example:
    >>> readings_settled([106.0, 105.9]), readings_settled([106.0, 105.9, 105.8]), readings_settled([38.3, 45.6, 54.8])
    (False, True, False)
  """
  if len(readings) < least:
    return False
  return figure_error(readings) <= max(TARGET_RELATIVE * abs(statistics.fmean(readings)), TARGET_MIB)


def decide_settled(
    reference: Sequence[float], current: Sequence[float], direction: Direction, *, threshold: float, floor: float
) -> Decision:
  """The verdict of two benchmarks' memory-pass readings (see the module docstring); the ratio and its
  interval are against the reference's figure (None where that is within the floor: a ratio to a few MiB
  has no meaning, as stats/_decide.py says).

  Example:
    >>> decide_settled([106.0, 105.9, 105.8], [35.1, 33.3, 34.0], Direction.LOWER, threshold=0.1, floor=8.0).verdict
    <Verdict.BETTER: 'better'>
    >>> decide_settled([], [35.1, 33.3], Direction.LOWER, threshold=0.1, floor=8.0).verdict
    <Verdict.INCONCLUSIVE: 'inconclusive'>
  """
  if not reference or not current:  # a side the pass read nothing for (its run failed): nothing to compare
    return Decision(Verdict.INCONCLUSIVE, None, None, None, 0, False, 1 - DEFAULT_ALPHA, MIN_READINGS)
  a, b = statistics.fmean(reference), statistics.fmean(current)
  difference = b - a
  margin = max(floor, threshold * abs(a))
  n = min(len(reference), len(current))
  if n < 2:  # no spread to read
    return Decision(Verdict.INCONCLUSIVE, _ratio(b, a, floor), None, None, n, False, 1 - DEFAULT_ALPHA, 2)
  error, degrees = _standard_error(reference, current)
  two_sided = _half_width(error, degrees, DEFAULT_ALPHA / 2)
  equivalence = _half_width(error, degrees, DEFAULT_ALPHA)
  needed = None
  if abs(difference) + equivalence <= margin:
    verdict, half, level = Verdict.EQUIVALENT, equivalence, 1 - 2 * DEFAULT_ALPHA
  else:
    half, level = two_sided, 1 - DEFAULT_ALPHA
    if abs(difference) > two_sided and abs(difference) > margin:
      verdict = Verdict.WORSE if (difference > 0) == (direction == Direction.LOWER) else Verdict.BETTER
    else:
      verdict, needed = Verdict.INCONCLUSIVE, _needed(n, difference, error, margin)
  low, high = difference - half, difference + half
  if _ratio(b, a, floor) is None:
    return Decision(verdict, None, None, None, n, False, level, needed)
  return Decision(verdict, b / a, 1 + low / a, 1 + high / a, n, False, level, needed)


def _ratio(b: float, a: float, floor: float) -> float | None:
  return b / a if a > max(floor, 0.0) else None


def _standard_error(reference: Sequence[float], current: Sequence[float]) -> tuple[float, float]:
  """The standard error of the difference of the means, and its Welch-Satterthwaite degrees of freedom."""
  parts = [statistics.variance(x) / len(x) for x in (reference, current)]
  total = sum(parts)
  if total == 0:
    return 0.0, math.inf
  degrees = total**2 / sum(p**2 / (len(x) - 1) for p, x in zip(parts, (reference, current)))
  return math.sqrt(total), degrees


def _half_width(error: float, degrees: float, alpha: float) -> float:
  return 0.0 if error == 0 else _t_quantile(1 - alpha, degrees) * error


def _needed(n: int, difference: float, error: float, margin: float) -> int:
  """The fewest readings a side that could decide, the error shrinking as 1/sqrt(n) (at least this many):
  beyond the margin the two-sided interval has to shed no change; within it the equivalence interval has to
  fit in +-margin, were the difference to settle at none."""
  room = abs(difference) if abs(difference) > margin else margin
  z = 1.96 if abs(difference) > margin else 1.645  # the t quantiles' limit: a lower bound
  if room <= 0:
    return _MAX_NEEDED
  return int(min(_MAX_NEEDED, max(n + 1, math.ceil(n * (z * error / room) ** 2))))


def settled_rule(threshold: float) -> str:
  """The rule in one line, as summary.json's `rule` and the legends state it (its first two clauses say what it is)."""
  return (f"memory pass: readings until the figure (their mean) is within {TARGET_RELATIVE:.1%} or {TARGET_MIB:g} MiB"
          f" ({MIN_READINGS} at least); Welch's t on the difference of the means: worse/better: its 95% interval"
          f" excludes 0 and it is beyond {threshold_text(threshold)} (8 MiB at least); equivalent: its 90% interval"
          f" (two one-sided tests at 5% each) within +-{threshold_text(threshold)}")
