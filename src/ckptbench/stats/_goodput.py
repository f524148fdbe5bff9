"""Goodput of a training job that checkpoints every `interval` seconds of work. Pure math.

The model (exponential failures at rate 1/MTBF, as in Young 1974 and Daly 2006,
extended to asynchronous saves):

- The job computes `interval` seconds of useful work, then blocks `cost` seconds
  in the save call (the stall, plus any step slowdown the background write
  causes, if the caller folds it in), then computes again.
- An async save becomes durable `lag` seconds after its blocking part ends; a
  failure inside that window loses the previous segment too. When `lag` exceeds
  the interval, the next save waits for the previous one (as Orbax does), so a
  segment lasts `max(interval, lag) + cost`.
- After a failure the job spends `recovery` seconds restarting and restoring
  (a failure during recovery starts it again), then resumes from the latest
  durable checkpoint.

Treating the segments as a two-state Markov renewal process (no save pending,
save pending) gives the long-run goodput exactly:

    goodput = interval / (M * exp((recovery + lag) / M) * (exp(segment / M) - 1))

with M the MTBF and segment = max(interval, lag) + cost. With lag = 0 it is
Daly's exact expression. The interval maximising it depends on the cost and M
only (recovery and lag scale goodput, not its shape, while lag <= interval);
Young's sqrt(2 * cost * M) is its first-order approximation.
`simulate_goodput` runs the same job event by event for checking.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np


@dataclasses.dataclass(frozen=True)
class CheckpointCost:
  """What one checkpoint costs the job, in seconds.

  Attributes:
    blocking_s: time the training loop is stopped per save (plus step slowdown
      during the background write, when the caller adds it).
    lag_s: from the end of the blocking part until the save is durable; None
      when not measured.
    recovery_s: restart and restore after a failure; None when not measured.
  """

  blocking_s: float
  lag_s: float | None = 0.0
  recovery_s: float | None = None

  def __post_init__(self):
    for name in ("blocking_s", "lag_s", "recovery_s"):
      value = getattr(self, name)
      if value is not None and not (math.isfinite(value) and value >= 0):
        raise ValueError(f"Invalid value for {name}={value}; it must be a finite number >= 0")


def expected_goodput(interval_s: float, cost: CheckpointCost, mtbf_s: float) -> float:
  """Long-run fraction of wall time that becomes kept progress (see the module docstring).

  Raises:
    ValueError: for a non-positive interval or MTBF, or a cost without recovery_s or lag_s.

  Example:
    >>> round(expected_goodput(3600, CheckpointCost(60, 0, 300), 6 * 3600), 3)
    0.89
  """
  if not interval_s > 0 or not mtbf_s > 0:
    raise ValueError(f"interval ({interval_s}) and MTBF ({mtbf_s}) must be > 0")
  if cost.recovery_s is None:
    raise ValueError("goodput needs the recovery time (restart and restore after a failure)")
  if cost.lag_s is None:
    raise ValueError("goodput needs the lag from a save's return until it is durable")
  segment = max(interval_s, cost.lag_s) + cost.blocking_s
  # expm1 keeps precision when the segment is tiny against the MTBF.
  return interval_s / (
      mtbf_s * math.exp((cost.recovery_s + cost.lag_s) / mtbf_s) * math.expm1(segment / mtbf_s)
  )


def young_interval(blocking_s: float, mtbf_s: float) -> float:
  """Young's first-order optimum, sqrt(2 * cost * MTBF).

  Example:
    >>> young_interval(50, 10000)
    1000.0
  """
  return math.sqrt(2 * blocking_s * mtbf_s)


def optimal_interval(cost: CheckpointCost, mtbf_s: float) -> float:
  """The interval of work between saves that maximises `expected_goodput`.

  Maximising interval / (exp((max(interval, lag) + cost) / M) - 1) does not involve
  the recovery time, so it is defined even when recovery_s is None; nor the lag
  while the lag is shorter than the interval, so an unknown lag (None) is
  taken as such a lag.

  Raises:
    ValueError: for a non-positive MTBF, or a zero blocking cost (then saving
      continuously is free and no interval is optimal).
  """
  if not mtbf_s > 0:
    raise ValueError(f"MTBF must be > 0, got {mtbf_s}")
  if not cost.blocking_s > 0:
    raise ValueError("a blocking cost of 0 has no optimal interval (more saves are always better)")
  import scipy.optimize  # noqa: PLC0415  (scipy takes ~1 s to import)

  shape = dataclasses.replace(cost, recovery_s=0.0, lag_s=cost.lag_s or 0.0)

  def loss(log_interval: float) -> float:
    return -expected_goodput(math.exp(log_interval), shape, mtbf_s)

  # The optimum lies within a factor of a few of Young's estimate (or at the lag,
  # when saves are write-bound); search a wide bracket around both, in log space.
  guess = max(young_interval(cost.blocking_s, mtbf_s), shape.lag_s, 1e-9)
  low, high = math.log(guess) - 5, math.log(guess) + 5
  result = scipy.optimize.minimize_scalar(loss, bounds=(low, high), method="bounded",
                                          options={"xatol": 1e-9})
  return float(math.exp(result.x))


def simulate_goodput(
    interval_s: float,
    cost: CheckpointCost,
    mtbf_s: float,
    *,
    horizon_s: float,
    seed: int = 0,
) -> float:
  """Runs the modelled job event by event for `horizon_s` of wall time; returns its goodput.

  A direct simulation with the same assumptions as `expected_goodput` but none of
  its algebra: failures are drawn as exponential gaps, and progress is kept only
  up to the latest save whose blocking part ended at least `lag_s` before the
  failure.
  """
  if cost.recovery_s is None or cost.lag_s is None:
    raise ValueError("the simulation needs the recovery time and the lag")
  rng = np.random.default_rng(seed)
  segment = max(interval_s, cost.lag_s) + cost.blocking_s
  clock = 0.0
  durable_work = 0.0
  next_failure = rng.exponential(mtbf_s)
  while clock < horizon_s:
    # Recovery, restarted by every failure that lands inside it.
    while next_failure < clock + cost.recovery_s:
      clock = next_failure
      next_failure = clock + rng.exponential(mtbf_s)
    clock += cost.recovery_s
    # Segments from the durable checkpoint until the next failure.
    start, work = clock, durable_work
    saves_ended = int((next_failure - start) // segment)  # saves whose blocking part ended
    if start + saves_ended * segment >= horizon_s:
      saves_ended = int((horizon_s - start) // segment)
      last_end = start + saves_ended * segment
      durable = saves_ended if horizon_s - last_end >= cost.lag_s else saves_ended - 1
      durable_work = work + max(durable, 0) * interval_s
      break
    last_end = start + saves_ended * segment
    durable = saves_ended if next_failure - last_end >= cost.lag_s else saves_ended - 1
    durable_work = work + max(durable, 0) * interval_s
    clock = next_failure
    next_failure = clock + rng.exponential(mtbf_s)
  return durable_work / horizon_s
