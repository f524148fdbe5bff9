"""The rounds of `num_repeats: auto` (see engine/loop/_rounds.py for the design), and the rounds another
process drives (`ckptbench matrix` tells each environment's run when to run a round)."""

from __future__ import annotations

import time
from typing import IO, Callable, Sequence

from ckptbench.analysis import build_baseline, compare_documents, load_baseline, sweep_effects, sweep_verdicts, undecided
from ckptbench.api import EffectRecord, InteractionRecord, RunRecord
from ckptbench.distributed import Coordinator
from ckptbench.errors import CkptbenchError
from ckptbench.stats import Design
from ckptbench.views import RunProgress
from ckptbench.engine.loop._rounds import DRIVEN_READY, DRIVEN_ROUND_DONE, Repeats, RepeatsDone, RoundClock, round_order
from ckptbench.engine._run_plan import RunPlan
from ckptbench.engine.loop._schedule import ScheduledRun
from ckptbench.engine.loop._stop import StopRequest

# A comparison needing more than this many times the rounds the budget allows no longer holds the
# run. Its repeats_needed is counted at the levels of the most lenient look to come (`Design.ahead`),
# not the early look's own; still, the width of an interval from 10-33 rounds is itself noisy (at 2,
# judged at the early look's level, the trials here gave up after 15 rounds on a 20% difference that
# 33-75 rounds decide), so the factor stays generous: giving up early only costs decisions, never errors.
_FUTILE = 4

# The open comparisons at a look: (what is compared, the fewest rounds that could decide it).
OpenComparisons = Callable[[Design], list[tuple[str, int]]]


def rounds_until_decided(
    repeats: Repeats,
    clock: RoundClock,
    run_round: Callable[[int], bool],
    open_at: OpenComparisons,
    note: Callable[[str], None],
    share: Callable[[object], object] = lambda mine: mine,
    decides: bool = True,
) -> RepeatsDone:
  """Rounds until every comparison is decided, the budget is spent or the last look passed: the one
  decision path of `run`, `matrix` and `bisect`.

  Args:
    repeats: the most rounds and the time budget.
    clock: started when the first round may start (after warm-ups).
    run_round: runs round r (0-based) whole; False when stopped by the user (the round does not count).
    open_at: the comparisons a look at `design`'s levels leaves undecided.
    note: where each look's line goes.
    share: process 0's value to every process (a multi-process run's allgather); one process: itself.
    decides: this process looks (process 0); the others take its word through `share`.
  """
  rounds, early_looks = 0, 0
  while rounds < repeats.count:
    clock.round_started()
    if not run_round(rounds):  # a partial round has no pair; the statistics leave it out
      return RepeatsDone(True, rounds, "interrupted", Design(early_looks=early_looks))
    clock.round_ended()
    rounds += 1
    # Whether this round ends in a look is process 0's call: each process's clock differs, and a process
    # that looked (a collective) while another started the next round's benchmark aborted the run in gloo.
    if not share(clock.is_look(rounds) if decides else None):
      continue
    # The last look spends what is left of alpha; whether a look is last depends on the clock alone.
    design = Design(early_looks=early_looks, last=rounds >= repeats.count or not clock.next_round_fits())
    mine = _look(rounds, design, clock, open_at(design), repeats) if decides else None
    reason, line, last = share(mine)
    note(line)
    if reason:
      return RepeatsDone(False, rounds, reason, Design(early_looks=early_looks, last=last))
    early_looks += 1
  return RepeatsDone(False, rounds, "most rounds", Design(early_looks=early_looks))


def auto_rounds(
    run_plan: RunPlan,
    done: set[tuple[str, int]],
    rng,
    execute: Callable[[ScheduledRun], None],
    stop: StopRequest,
    records: list[RunRecord],
    coordinator: Coordinator,
    progress: RunProgress,
    now: Callable[[], float] = time.perf_counter,
) -> RepeatsDone:
  """Warm-ups, then rounds of every benchmark until decided (`rounds_until_decided`); `now` is the run's clock
  for its time budget (`RoundClock`)."""
  repeats, keys = run_plan.repeats, run_plan.keys
  clock = RoundClock(repeats, now)
  if not _warmups(repeats, len(keys), execute, stop):
    return RepeatsDone(True, 0, "interrupted")

  def one_round(r: int) -> bool:
    return _round(r, keys, done, rng, execute, stop)

  def share(mine):  # one process: its own answer, nothing sent
    return coordinator.allgather_json(mine)[0]

  return rounds_until_decided(
      repeats, clock, one_round, lambda design: open_comparisons(records, run_plan, design), progress.note,
      share=share, decides=coordinator.process_index == 0,
  )  # fmt: skip


def driven_rounds(
    repeats: Repeats,
    keys: Sequence[str],
    rng,
    execute: Callable[[ScheduledRun], None],
    stop: StopRequest,
    commands: IO[str],
    replies: IO[str],
) -> RepeatsDone:
  """Warm-ups, then a round of every benchmark each time `commands` says `round`, until it says `stop
  <early looks> last|early <why>` (the look the driver stopped at, which this run's verdicts then spend): how
  `matrix` interleaves environments, each a long-lived run. Each finished step is one line on `replies`.

  Raises:
    CkptbenchError: a command this protocol does not know.
  """
  if not _warmups(repeats, len(keys), execute, stop):
    return RepeatsDone(True, 0, "interrupted")
  _reply(replies, DRIVEN_READY)
  rounds = 0
  for line in commands:
    word, *rest = line.split() or [""]
    if word == "stop" and len(rest) >= 3 and rest[0].isdigit() and rest[1] in ("last", "early"):
      design = Design(early_looks=int(rest[0]), last=rest[1] == "last")
      return RepeatsDone(False, rounds, " ".join(rest[2:]), design)
    if word != "round":
      raise CkptbenchError(f"driven rounds: unknown command {line.strip()!r} (round, or stop N last|early WHY)")
    if not _round(rounds, keys, set(), rng, execute, stop):
      return RepeatsDone(True, rounds, "interrupted")
    rounds += 1
    _reply(replies, f"{DRIVEN_ROUND_DONE} {rounds}")
  return RepeatsDone(True, rounds, "interrupted")  # the driver went away


def _reply(replies: IO[str], line: str) -> None:
  replies.write(line + "\n")
  replies.flush()


def _warmups(repeats: Repeats, count: int, execute: Callable[[ScheduledRun], None], stop: StopRequest) -> bool:
  """Each benchmark's warm-ups; False when stopped."""
  for b in range(count):
    for w in range(repeats.warmups):
      if stop.requested:
        return False
      execute(ScheduledRun(b, w, True))
  return True


def _round(r: int, keys: Sequence[str], done: set[tuple[str, int]], rng, execute, stop: StopRequest) -> bool:
  """Round r: every benchmark not yet recorded, in a fresh random order; False when stopped."""
  for b in round_order(len(keys), rng):
    if stop.requested:
      return False
    if (keys[b], r) not in done:
      execute(ScheduledRun(b, r, False))
  return True


def _look(
    rounds: int, design: Design, clock: RoundClock, open_: list[tuple[str, int]], repeats: Repeats
) -> tuple[str | None, str, bool]:
  """(why to stop or None, a line saying what this look found, whether it is the last look)."""
  line = (f"after {rounds} rounds: {len(open_)} headline comparison(s) undecided (worse/better at"
          f" {design.level:.2%}, equivalent at {design.equivalence_level:.2%})")
  if not open_:
    return "decided", line + ": every one decided", design.last
  if rounds >= repeats.count:
    return "most rounds", line + f" ({rounds} rounds is the most auto repeats run)", True
  if design.last:
    return "time budget", line + f" (time budget {repeats.budget_s:g} s spent; --time_budget gives more)", True
  reachable = clock.rounds_reachable(rounds)
  if all(needed > _FUTILE * reachable for _, needed in open_):
    return ("undecidable in the budget", line + f": each needs over {_FUTILE}x the ~{reachable} rounds the budget"
            " allows (--time_budget gives more)", design.last)  # fmt: skip
  names = [name for name, _ in open_]
  return None, line + ": " + ", ".join(names[:3]) + (" ..." if len(names) > 3 else ""), False


def open_comparisons(records: list[RunRecord], run_plan: RunPlan, design: Design) -> list[tuple[str, int]]:
  """The headline comparisons not yet decided at `design`'s level, each with the fewest rounds that
  could decide it: each variant against the plan's reference (the one summary.json's verdicts use), or
  with `decide_on: effects` each factor's effect and each pair's interaction (a sweep with none: its
  verdicts), and the baseline's."""
  threshold = run_plan.threshold
  effects = None
  if run_plan.decide_on == "effects":
    effects = sweep_effects(records, run_plan.reference, paired=True, design=design, threshold=threshold)
  if effects is not None and (effects.effects or effects.interactions):
    open_ = [(f"{t.metric} ({_term_name(t)})", t.repeats_needed or 0) for t in effects.undecided]
  else:
    verdicts = sweep_verdicts(records, run_plan.reference, paired=True, design=design, threshold=threshold)
    open_ = [(f"{v.metric} ({', '.join(f'{k}={x}' for k, x in v.variant.items())})", v.repeats_needed or 0)
             for v in undecided(verdicts)]  # fmt: skip
  if run_plan.baseline_path:
    # Its backend, as the manifest records it: a baseline from another backend leaves nothing to decide.
    current = build_baseline(records, {"backend": run_plan.backend}, label="current")
    comparison = compare_documents(load_baseline(run_plan.baseline_path), current, threshold=threshold, design=design)
    open_ += [(f"{r.metric} ({r.benchmark}) against the baseline", r.repeats_needed or 0)
              for r in comparison.headline_inconclusive]  # fmt: skip
  return open_


def _term_name(term: EffectRecord | InteractionRecord) -> str:
  """`use_ocdbt=True` for a main effect, `use_ocdbt=True x use_zarr3=True` for an interaction."""
  if isinstance(term, InteractionRecord):
    return " x ".join(f"{k}={v}" for k, v in term.levels.items())
  return f"{term.factor}={term.level}"
