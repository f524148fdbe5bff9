"""The rounds of `num_repeats: auto` (see run/_rounds.py for the design)."""

from __future__ import annotations

import time
from typing import Callable, Sequence

from ckptbench.analysis import build_baseline, compare_documents, load_baseline, sweep_verdicts, undecided
from ckptbench.api import RunRecord
from ckptbench.config import Suite
from ckptbench.distributed import Coordinator
from ckptbench.stats import Design
from ckptbench.views import RunProgress
from ckptbench.run._rounds import Repeats, RepeatsDone, RoundClock, round_order
from ckptbench.run._simdevice import run_backend_name
from ckptbench.run._schedule import ScheduledRun
from ckptbench.run._settings import RunSettings
from ckptbench.run._stop import StopRequest

# A comparison needing more than this many times the rounds the budget allows no longer holds the
# run. Its repeats_needed is counted at the levels of the most lenient look to come (`Design.ahead`),
# not the early look's own; still, the width of an interval from 10-33 rounds is itself noisy (at 2,
# judged at the early look's level, the trials here gave up after 15 rounds on a 20% difference that
# 33-75 rounds decide), so the factor stays generous: giving up early only costs decisions, never errors.
_FUTILE = 4


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
) -> RepeatsDone:
  """Warm-ups, then rounds until decided, the budget is spent or the last look passed."""
  clock = RoundClock(repeats, time.perf_counter())
  for b in range(len(keys)):
    for w in range(repeats.warmups):
      if stop.requested:
        return RepeatsDone(True, 0, "interrupted")
      execute(ScheduledRun(b, w, True))
  rounds, early_looks = 0, 0
  while rounds < repeats.count:
    clock.round_started()
    for b in round_order(len(keys), rng):
      if stop.requested:  # a partial round has no pair; the statistics leave it out
        return RepeatsDone(True, rounds, "interrupted", Design(early_looks=early_looks))
      if (keys[b], rounds) not in done:
        execute(ScheduledRun(b, rounds, False))
    clock.round_ended()
    rounds += 1
    if not _agreed_look(clock, rounds, coordinator):
      continue
    # The last look spends what is left of alpha; whether a look is last depends on the clock alone.
    design = Design(early_looks=early_looks, last=rounds >= repeats.count or not clock.next_round_fits())
    # Process 0 decides for everyone: timings (the budget) differ between processes.
    mine = _look(rounds, design, clock, records, suite, settings, repeats) if coordinator.process_index == 0 else None
    reason, line, last = coordinator.allgather_json(mine)[0]
    progress.note(line)
    if reason:
      return RepeatsDone(False, rounds, reason, Design(early_looks=early_looks, last=last))
    early_looks += 1
  return RepeatsDone(False, rounds, "most rounds", Design(early_looks=early_looks))


def _agreed_look(clock: RoundClock, rounds: int, coordinator: Coordinator) -> bool:
  """Whether this round ends in a look, as process 0's clock says. Each process's clock differs; a
  process that looked (a collective) while another started the next round's benchmark (other
  collectives) aborted the run in gloo."""
  mine = clock.is_look(rounds) if coordinator.process_index == 0 else None
  return bool(coordinator.allgather_json(mine)[0])  # one process: its own answer, nothing sent


def _look(
    rounds: int, design: Design, clock: RoundClock, records: list[RunRecord], suite: Suite, settings: RunSettings,
    repeats: Repeats,
) -> tuple[str | None, str, bool]:
  """(why to stop or None, a line saying what this look found, whether it is the last look)."""
  open_ = open_comparisons(records, suite, settings, design)
  line = (f"after {rounds} rounds: {len(open_)} headline comparison(s) undecided (worse/better at"
          f" {design.level:.2%}, equivalent at {design.equivalence_level:.2%})")
  if not open_:
    return "decided", line + ": every one decided", design.last
  if rounds >= repeats.count:
    return "most rounds", line + f" ({rounds} rounds is the most auto repeats run)", True
  if design.last:
    return "time budget", line + f" (time budget {repeats.budget_s:g} s spent; --time_budget_s gives more)", True
  reachable = clock.rounds_reachable(rounds)
  if all(needed > _FUTILE * reachable for _, needed in open_):
    return ("undecidable in the budget", line + f": each needs over {_FUTILE}x the ~{reachable} rounds the budget"
            " allows (--time_budget_s gives more)", design.last)  # fmt: skip
  names = [name for name, _ in open_]
  return None, line + ": " + ", ".join(names[:3]) + (" ..." if len(names) > 3 else ""), False


def open_comparisons(
    records: list[RunRecord], suite: Suite, settings: RunSettings, design: Design
) -> list[tuple[str, int]]:
  """The headline comparisons not yet decided at `design`'s level, each with the fewest rounds that
  could decide it: each variant against the reference, and the baseline's."""
  threshold = settings.regression_threshold
  verdicts = sweep_verdicts(records, suite.config.reference, paired=True, design=design, threshold=threshold)
  open_ = [(f"{v.metric} ({', '.join(f'{k}={x}' for k, x in v.variant.items())})", v.repeats_needed or 0)
           for v in undecided(verdicts)]  # fmt: skip
  baseline_path = settings.baseline_path or suite.config.baseline_path
  if baseline_path:
    # Its backend, as the manifest records it: a baseline from another backend leaves nothing to decide.
    current = build_baseline(records, {"backend": run_backend_name(suite.config.simdevice)}, label="current")
    comparison = compare_documents(load_baseline(baseline_path), current, threshold=threshold, design=design)
    open_ += [(f"{r.metric} ({r.benchmark}) against the baseline", r.repeats_needed or 0)
              for r in comparison.headline_inconclusive]  # fmt: skip
  return open_
