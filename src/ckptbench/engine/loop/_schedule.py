"""The order runs happen in: warm-ups, repeats, optionally interleaved across benchmarks."""

from __future__ import annotations

import dataclasses
import random
from typing import Any, Hashable, Sequence, TypeVar

_B = TypeVar("_B")


@dataclasses.dataclass(frozen=True)
class ScheduledRun:
  benchmark_index: int
  repeat: int
  warmup: bool


def schedule_runs(
    num_benchmarks: int,
    num_repeats: int,
    num_warmups: int = 0,
    interleave: bool = False,
    rng: random.Random | None = None,
    groups: Sequence[Hashable] | None = None,
) -> list[ScheduledRun]:
  """Every run of a suite, in order.

  `groups` (one per benchmark, e.g. its mesh and data): with no warm-ups asked
  for, the first benchmark of each group gets one, so that the first compilation
  and allocation on a mesh is never a measurement.

  Back to back (default): each benchmark's warm-ups, then its repeats.
  Interleaved: all warm-ups first, then repeat 0 of every benchmark, then
  repeat 1 of every benchmark, ..., so slow drift of a shared machine spreads
  over all benchmarks instead of favouring the ones that ran first; with
  `rng`, each round in a fresh random order (so no benchmark always runs
  right after the same other one).
  """
  warmups = [[ScheduledRun(b, r, True) for r in range(num_warmups)] for b in range(num_benchmarks)]
  if groups is not None and num_warmups == 0:
    firsts = {}
    for b, group in enumerate(groups):
      firsts.setdefault(group, b)
    for b in firsts.values():
      warmups[b] = [ScheduledRun(b, 0, True)]
  repeats = [[ScheduledRun(b, r, False) for r in range(num_repeats)] for b in range(num_benchmarks)]
  if not interleave:
    return [run for b in range(num_benchmarks) for run in warmups[b] + repeats[b]]
  out = [run for b in range(num_benchmarks) for run in warmups[b]]
  for r in range(num_repeats):
    order = list(range(num_benchmarks))
    if rng is not None:
      rng.shuffle(order)
    out.extend(repeats[b][r] for b in order)
  return out


def pending(runs: Sequence[ScheduledRun], keys: Sequence[str], done: set[tuple[str, int]]) -> list[ScheduledRun]:
  """Drops runs already recorded (by benchmark key and repeat); warm-ups of finished benchmarks too."""
  repeats_left = {
      run.benchmark_index for run in runs
      if not run.warmup and (keys[run.benchmark_index], run.repeat) not in done
  }  # fmt: skip
  return [
      run for run in runs
      if run.benchmark_index in repeats_left and (run.warmup or (keys[run.benchmark_index], run.repeat) not in done)
  ]  # fmt: skip


def warmup_groups(plan: Any, config: Any) -> list[tuple[str, int, int]] | None:
  """Each planned benchmark's (generator, mesh, data) group when the suite warms up each mesh, else None.

  The generator is part of the group: another generator runs other code, whose
  first compilation the previous one's warm-up did not pay.
  """
  if not config.warmup_each_mesh_on():
    return None
  return benchmark_groups(plan)


def benchmark_groups(plan: Any) -> list[tuple[str, int, int]]:
  """Each planned benchmark's (generator, mesh, data): benchmarks that share a first compilation and allocation."""
  return [(b.generator_path, b.mesh_index, b.checkpoint_index) for b in plan.benchmarks]
