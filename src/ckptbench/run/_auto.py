"""The rounds of `num_repeats: auto` (see run/_rounds.py for the design)."""

from __future__ import annotations

import time
from typing import Callable, Sequence

from ckptbench.analysis import build_baseline, compare_documents, load_baseline, sweep_verdicts, undecided
from ckptbench.api import RunRecord
from ckptbench.config import Suite
from ckptbench.distributed import Coordinator
from ckptbench.views import RunProgress
from ckptbench.run._rounds import Repeats, RoundClock, round_order
from ckptbench.run._schedule import ScheduledRun
from ckptbench.run._settings import RunSettings
from ckptbench.run._stop import StopRequest


def auto_rounds(
    repeats: Repeats,
    keys: Sequence[str],
    done: set[tuple[str, int]],
    rng,
    execute: Callable[[ScheduledRun], None],
    stop: StopRequest,
    records: list[RunRecord],
    suite: Suite,
    settings: RunSettings,
    coordinator: Coordinator,
    progress: RunProgress,
) -> tuple[bool, int, str]:
  """Warm-ups, then rounds until decided, the budget is spent or the last look passed.

  Returns:
    (interrupted, rounds run, why it stopped: decided, time budget, most rounds, interrupted).
  """
  clock = RoundClock(repeats, time.perf_counter())
  for b in range(len(keys)):
    for w in range(repeats.warmups):
      if stop.requested:
        return True, 0, "interrupted"
      execute(ScheduledRun(b, w, True))
  rounds = 0
  while rounds < repeats.count:
    clock.round_started()
    for b in round_order(len(keys), rng):
      if stop.requested:  # a partial round has no pair; the statistics leave it out
        return True, rounds, "interrupted"
      if (keys[b], rounds) not in done:
        execute(ScheduledRun(b, rounds, False))
    clock.round_ended()
    rounds += 1
    if not clock.is_look(rounds):
      continue
    # Process 0 decides for everyone: timings (the budget) differ between processes.
    mine = _look(rounds, clock, records, suite, settings, repeats) if coordinator.process_index == 0 else None
    reason, line = coordinator.allgather_json(mine)[0]
    progress.note(line)
    if reason:
      return False, rounds, reason
  return False, rounds, "most rounds"


def _look(
    rounds: int, clock: RoundClock, records: list[RunRecord], suite: Suite, settings: RunSettings, repeats: Repeats
) -> tuple[str | None, str]:
  """(why to stop or None, a line saying what this look found)."""
  open_ = open_comparisons(records, suite, settings, repeats)
  line = f"after {rounds} rounds: {len(open_)} headline comparison(s) undecided"
  if not open_:
    return "decided", line + ": every one decided"
  if rounds >= repeats.count:
    return "most rounds", line + f" ({rounds} rounds is the most auto repeats run)"
  if not clock.next_round_fits():
    return "time budget", line + f" (time budget {repeats.budget_s:g} s spent; --time_budget_s gives more)"
  return None, line + ": " + ", ".join(open_[:3]) + (" ..." if len(open_) > 3 else "")


def open_comparisons(records: list[RunRecord], suite: Suite, settings: RunSettings, repeats: Repeats) -> list[str]:
  """The headline comparisons not yet decided: each variant against the reference, and the baseline's."""
  design = repeats.design
  threshold = settings.regression_threshold
  verdicts = sweep_verdicts(records, suite.config.reference, paired=True, design=design, threshold=threshold)
  open_ = [f"{v.metric} ({', '.join(f'{k}={x}' for k, x in v.variant.items())})" for v in undecided(verdicts)]
  baseline_path = settings.baseline_path or suite.config.baseline_path
  if baseline_path:
    current = build_baseline(records, {}, label="current")
    comparison = compare_documents(load_baseline(baseline_path), current, threshold=threshold, design=design)
    open_ += [f"{r.metric} ({r.benchmark}) against the baseline" for r in comparison.headline_inconclusive]
  return open_
