"""A run's plan: what runs, how often, in which order and against what, decided once, frozen and passed down."""

from __future__ import annotations

import dataclasses
import random
from typing import Any, Hashable, Mapping, Sequence

from ckptbench.config import Suite
from ckptbench.engine.loop._rounds import Repeats, resolve_repeats
from ckptbench.engine.loop._schedule import ScheduledRun, pending, schedule_runs, warmup_groups
from ckptbench.engine._select import select
from ckptbench.engine._settings import RunSettings
from ckptbench.engine._simdevice import run_backend_name
from ckptbench.engine._sweep import Plan, expand


@dataclasses.dataclass(frozen=True)
class RunPlan:
  """Everything the engine decides before OUT is created; the runner, the rounds and the looks read it.

  Attributes:
    plan: the benchmarks (the sweep expanded for the devices, the selection applied) and what was left out.
    repeats: a fixed count, auto rounds or driven rounds; warm-ups, interleaving, the time budget.
    groups: each benchmark's warm-up group (`warmup_groups`), or None.
    reference: the swept option values of the reference variant every verdict compares with (the
      suite's, else the plan's first benchmark's: records of shuffled rounds are in no plan order).
    baseline_path: the baseline the run is compared with (the flag's, else the suite's), or None.
    threshold: the relative change that counts (`--threshold`).
    backend: the backend as the manifest records it (a baseline from another is not compared).
    decide_on: what auto repeats wait for: "verdicts", or "effects" (`RunSettings.decide_on`).
  """

  plan: Plan
  repeats: Repeats
  groups: Sequence[Hashable] | None
  reference: Mapping[str, Any] | None
  baseline_path: str | None
  threshold: float
  backend: str
  decide_on: str = "verdicts"

  @property
  def keys(self) -> list[str]:
    return [b.key for b in self.plan.benchmarks]

  def schedule(self, done: set[tuple[str, int]], rng: random.Random) -> list[ScheduledRun]:
    """The runs of a fixed count still to do (`done`: (key, repeat) already recorded), in their order;
    auto rounds run the same count at most, in rounds of their own."""
    runs = schedule_runs(len(self.plan.benchmarks), self.repeats.count, self.repeats.warmups,
                         self.repeats.interleaved, rng=rng, groups=self.groups)  # fmt: skip
    return pending(runs, self.keys, done)


def build_run_plan(suite: Suite, settings: RunSettings, device_count: int) -> RunPlan:
  """The run's plan for `device_count` devices."""
  plan = select(expand(suite, device_count), settings.select)
  baseline_path = settings.baseline_path or suite.config.baseline_path
  reference = suite.config.reference
  if reference is None and plan.benchmarks:
    reference = plan.benchmarks[0].describe()["varying"]
  return RunPlan(
      plan=plan,
      repeats=resolve_repeats(suite, settings, len(plan.benchmarks), baseline_path),
      groups=warmup_groups(plan, suite.config),
      reference=reference or None,
      baseline_path=baseline_path,
      threshold=settings.regression_threshold,
      backend=run_backend_name(suite.config.simdevice),
      decide_on=settings.decide_on,
  )
