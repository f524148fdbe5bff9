"""How many repeats a run makes: a fixed count, or rounds until decided (`num_repeats: auto`).

Auto repeats run rounds: every benchmark once per round, in a fresh random
order each round (randomised multiple interleaved trials, Abedi and Brecht,
ICPE 2017), so slow drift of a shared machine hits every variant alike and
the per-round ratio cancels it. After the rounds in `AUTO_LOOKS` the run looks
at its headline comparisons (each variant against the reference, and the
baseline when one is given) and stops once all are decided, once those left
could not be decided within the budget (each needs more than four times the
rounds the budget can still give, the spread shrinking as 1/sqrt(n) at best, at
the levels of the last look to come), or when
the next round would end past the time budget (then that look is the last). Each look's
intervals are at the level `Design` spends on it (a small share early, the rest
at the last look), so looking early does not inflate false alarms.

`ckptbench matrix` runs the same rounds across environments: each environment's
run is driven (`RunSettings.driven_rounds`): after its warm-ups it prints
`DRIVEN_READY`, runs one round each time standard input says `round` (printing
`DRIVEN_ROUND_DONE r`), and ends when told `stop <early looks> last|early <why>`,
its own verdicts at the look the matrix stopped at.

A memory pass (engine/memory/_pass.py) runs rounds too, until each benchmark's host-memory figures
are precise enough (`settled_rounds`; the rule: stats/_settled.py).
"""

from __future__ import annotations

import dataclasses
import random
import time
from typing import Any, Callable, Sequence

from ckptbench.api import RunRecord, is_host_memory_tag, judged_as, timed_runs
from ckptbench.config import Suite
from ckptbench.engine.loop._schedule import ScheduledRun
from ckptbench.engine._settings import RunSettings
from ckptbench.stats import AUTO_LOOKS, RACE_LOOKS, Design, readings_settled


DRIVEN_READY = "ckptbench-driven-ready"
DRIVEN_ROUND_DONE = "ckptbench-driven-round-done"


@dataclasses.dataclass(frozen=True)
class Repeats:
  """The run's repeats, resolved from the suite and the flags.

  Attributes:
    auto: rounds until decided (else `count` repeats).
    count: the repeats of a fixed run; the most rounds of an auto one.
    warmups: warm-up runs per benchmark, first.
    interleaved: rounds of every benchmark, in a random order each round.
    budget_s: auto: no round is started that would end past this many seconds of the run.
    driven: another process says when each round runs and when to stop (`matrix`).
    until_settled: a memory pass: rounds until each benchmark's figures are precise, `count` at most.
  """

  auto: bool
  count: int
  warmups: int
  interleaved: bool
  budget_s: float | None = None
  driven: bool = False
  until_settled: bool = False

  def describe(self, done: RepeatsDone, seconds: float) -> dict[str, Any]:
    """summary.json's `repeats`."""
    design = done.design
    return {
        "mode": "auto" if self.auto else "fixed", "rounds": done.rounds, "interleaved": self.interleaved,
        "paired": self.interleaved, "looks": design.looks, "alpha": design.alpha, "level": design.level,
        "equivalence_level": design.equivalence_level, "last_look": design.last, "time_budget_s": self.budget_s,
        "stopped": done.stopped, "seconds": round(seconds, 3), "driven": self.driven,
    }  # fmt: skip


@dataclasses.dataclass(frozen=True)
class RepeatsDone:
  """How the repeats ended.

  Attributes:
    interrupted: stopped by the user (Ctrl-C, SIGTERM).
    rounds: rounds (auto) or repeats (fixed) run.
    stopped: why: decided, time budget, most rounds, undecidable in the budget, interrupted, fixed (driven:
      the driver's reason).
    design: the error rate the verdicts spend: the look the run stopped at.
  """

  interrupted: bool
  rounds: int
  stopped: str
  design: Design = Design()


def resolve_repeats(suite: Suite, settings: RunSettings, num_benchmarks: int, baseline_path: str | None) -> Repeats:
  """The repeats of this run (see `SuiteConfig.repeats`); driven rounds (`matrix`) always compare."""
  cfg = suite.config
  compares = num_benchmarks > 1 or bool(baseline_path) or settings.driven_rounds
  repeats = cfg.repeats(compares)
  warmups, interleaved = cfg.warmups(repeats), cfg.interleaved(repeats)
  if settings.memory_pass_repeats:  # a memory pass (engine/memory/_pass.py): rounds until settled, its count at most
    return Repeats(False, settings.memory_pass_repeats, 0, True, until_settled=True)
  if settings.driven_rounds:  # the driver decides; the most rounds bound the disk check
    count = AUTO_LOOKS[-1] if repeats == "auto" else int(repeats)
    return Repeats(repeats == "auto", count, cfg.warmups("auto"), True, driven=True)  # each environment warms up
  if settings.race is not None:  # a race runs rounds until decided, whatever the suite's count
    return Repeats(True, RACE_LOOKS[-1], cfg.warmups("auto"), True, time_budget(suite, settings.time_budget_s))
  if repeats == "auto":
    budget = time_budget(suite, settings.time_budget_s)
    return Repeats(True, AUTO_LOOKS[-1], warmups, True, budget)
  return Repeats(False, int(repeats), warmups, interleaved)


def time_budget(suite: Suite, asked: float | None) -> float:
  """The time budget of auto repeats: the flag's, else the suite's, else the default."""
  return suite.config.time_budget(asked)


def round_order(num_benchmarks: int, rng: random.Random) -> list[int]:
  """The benchmarks of one round, in a fresh random order."""
  order = list(range(num_benchmarks))
  rng.shuffle(order)
  return order


class RoundClock:
  """When to look, and whether another round fits in the budget, from its creation, by `now`:
  `time.perf_counter`, or a run's own clock that leaves out its waits for its memory pass's warm-ups
  (engine/memory/_gate.py)."""

  def __init__(self, repeats: Repeats, now: Callable[[], float] = time.perf_counter):
    self._repeats, self._now = repeats, now
    self._started = self._round_started = now()
    self._longest_round = 0.0
    self._rounds, self._round_seconds = 0, 0.0

  def round_started(self) -> None:
    self._round_started = self._now()

  def round_ended(self) -> None:
    took = self._now() - self._round_started
    self._longest_round = max(self._longest_round, took)
    self._rounds, self._round_seconds = self._rounds + 1, self._round_seconds + took

  def rounds_reachable(self, rounds_done: int) -> int:
    """About how many rounds the run will have by the end of its budget (its most rounds at most)."""
    if self._repeats.budget_s is None or not self._rounds:
      return self._repeats.count
    left = self._repeats.budget_s - (self._now() - self._started)
    mean = self._round_seconds / self._rounds
    return min(self._repeats.count, rounds_done + max(0, int(left / mean)))

  def next_round_fits(self) -> bool:
    if self._repeats.budget_s is None:
      return True
    return self._now() - self._started + self._longest_round <= self._repeats.budget_s

  def is_look(self, rounds_done: int) -> bool:
    """A look after the scheduled rounds, and always when the next round will not run."""
    return rounds_done in AUTO_LOOKS or rounds_done >= self._repeats.count or not self.next_round_fits()


def fixed_runs(todo, execute, stop, count: int) -> RepeatsDone:
  """Runs `todo` in order until done or stopped; one look at the end."""
  for run in todo:
    if stop.requested:
      return RepeatsDone(True, count, "interrupted")
    execute(run)
  return RepeatsDone(False, count, "fixed")


def settled_rounds(
    keys: Sequence[str], groups: Sequence[object], count: int, rng: random.Random,
    execute: Callable[[ScheduledRun], None], stop, records: Sequence[RunRecord],
) -> RepeatsDone:  # fmt: skip
  """A memory pass's runs: one warm-up per group of benchmarks (generator, mesh, data: its first
  allocations and compilation), then rounds of the benchmarks not yet settled, each round in a fresh
  random order, until every benchmark is settled or has `count` readings.

  Args:
    keys: each benchmark's key.
    groups: each benchmark's group.
    count: the most readings of a benchmark.
    execute: runs one scheduled run, appending its records to `records`.
    stop: the user's stop request.
    records: the run's records so far, growing as runs end.
  """
  warmed: set[object] = set()
  for b, group in enumerate(groups):
    if group not in warmed:
      warmed.add(group)
      if stop.requested:
        return RepeatsDone(True, 0, "interrupted")
      execute(ScheduledRun(b, 0, True))
  open_ = list(range(len(groups)))
  rounds = 0
  while open_ and rounds < count:
    for b in round_order(len(open_), rng):
      if stop.requested:
        return RepeatsDone(True, rounds, "interrupted")
      execute(ScheduledRun(open_[b], rounds, False))
    rounds += 1
    open_ = [b for b in open_ if not _settled([r for r in timed_runs(records) if r.key == keys[b]], rounds)]
  return RepeatsDone(False, rounds, "settled" if not open_ else "most rounds")


def _settled(mine: Sequence[RunRecord], rounds: int) -> bool:
  """A benchmark (its records `mine`) failed, or each of its judged host-memory tags has readings whose
  figure is precise enough (stats/_settled.py)."""
  if any(r.failed for r in mine):
    return True
  readings: dict[str, list[float]] = {}
  for r in sorted(mine, key=lambda r: r.repeat):
    for tag, entry in r.metrics.items():
      if is_host_memory_tag(tag) and judged_as(tag) is not None:
        readings.setdefault(tag, []).append(entry.value)
  return rounds >= 2 and all(readings_settled(values) for values in readings.values())
