"""The rounds of `num_repeats: auto`: when to look, how many rounds the budget still allows, the one loop
that decides (run, matrix, bisect) and the rounds `matrix` drives."""

from __future__ import annotations

import io
import random
import time

import pytest

from ckptbench.errors import CkptbenchError
from ckptbench.engine.loop._auto import driven_rounds, rounds_until_decided
from ckptbench.engine.loop._rounds import DRIVEN_READY, DRIVEN_ROUND_DONE, Repeats, RepeatsDone, RoundClock
from ckptbench.engine.loop._stop import StopRequest
from ckptbench.stats import AUTO_LOOKS, Design


def _clock(budget_s: float | None, count: int = AUTO_LOOKS[-1]) -> RoundClock:
  return RoundClock(Repeats(auto=True, count=count, warmups=1, interleaved=True, budget_s=budget_s))


def _round(clock: RoundClock, seconds: float) -> None:
  clock.round_started()
  time.sleep(seconds)
  clock.round_ended()


def test_rounds_reachable_follow_the_mean_round_and_stop_at_the_most_rounds():
  clock = _clock(budget_s=1.0)
  assert clock.rounds_reachable(0) == AUTO_LOOKS[-1]  # nothing timed yet: no reason to give up
  for _ in range(2):
    _round(clock, 0.1)
  reachable = clock.rounds_reachable(2)
  assert 3 <= reachable <= 10  # ~0.8 s left at ~0.1 s a round (slower on a busy machine), plus the 2 done
  assert _clock(budget_s=None, count=40).rounds_reachable(5) == 40
  fast = _clock(budget_s=100.0, count=15)
  _round(fast, 0.01)
  assert fast.rounds_reachable(1) == 15


def test_every_scheduled_round_is_a_look_and_so_is_the_last_that_fits():
  clock = _clock(budget_s=60.0)
  assert [n for n in range(1, AUTO_LOOKS[-1] + 1) if clock.is_look(n)] == list(AUTO_LOOKS)
  tight = _clock(budget_s=0.15)
  _round(tight, 0.1)
  assert not tight.next_round_fits() and tight.is_look(1)  # the budget's last round is looked at


def test_rounds_go_on_until_every_comparison_is_decided_at_a_look():
  """The one loop of run, matrix and bisect: a look after the scheduled rounds only, stopping at the first
  that leaves nothing open, with the design of that look (what the verdicts then spend)."""
  repeats = Repeats(auto=True, count=AUTO_LOOKS[-1], warmups=0, interleaved=True, budget_s=600.0)
  ran, looked, lines = [], [], []

  def open_at(design):
    looked.append(design)
    return [("save time (x)", 40)] if design.early_looks < 2 else []

  done = rounds_until_decided(repeats, RoundClock(repeats), lambda r: ran.append(r) or True,
                              open_at, lines.append)  # fmt: skip
  assert ran == list(range(AUTO_LOOKS[2])) and done.rounds == AUTO_LOOKS[2] and done.stopped == "decided"
  assert looked == [Design(early_looks=k, last=False) for k in range(3)] and done.design == looked[-1]
  assert lines[0].startswith("after 10 rounds: 1 headline comparison(s) undecided (worse/better at 99.75%")
  assert lines[-1].endswith("every one decided")


def test_a_stopped_round_ends_the_rounds_as_interrupted():
  repeats = Repeats(auto=True, count=AUTO_LOOKS[-1], warmups=0, interleaved=True, budget_s=600.0)
  done = rounds_until_decided(repeats, RoundClock(repeats), lambda r: r < 4,
                              lambda design: [("x", 1)], lambda line: None)  # fmt: skip
  assert done.interrupted and done.rounds == 4 and done.stopped == "interrupted"


def test_whether_a_round_ends_in_a_look_and_what_it_found_are_process_0s_call():
  """Process 1's clock differs: it looks when process 0 says so (here after round 3, which its own clock
  would not look at), never judges itself, and stops for process 0's reason."""
  said = iter([False, False, True, ["decided", "after 3 rounds: every one decided", False]])
  repeats = Repeats(auto=True, count=AUTO_LOOKS[-1], warmups=0, interleaved=True, budget_s=600.0)

  def must_not_judge(design):
    raise AssertionError("only process 0 judges")

  lines = []
  done = rounds_until_decided(repeats, RoundClock(repeats), lambda r: True, must_not_judge,
                              lines.append, share=lambda mine: next(said), decides=False)  # fmt: skip
  assert done.rounds == 3 and done.stopped == "decided" and lines == ["after 3 rounds: every one decided"]


def _driven(commands: str, stopped_after: int | None = None):
  """driven_rounds over two benchmarks with one warm-up each; what ran, what it replied, how it ended."""
  stop = StopRequest()
  ran = []

  def execute(run):
    ran.append(run)
    if stopped_after is not None and len(ran) == stopped_after:
      stop.requested = True

  repeats = Repeats(auto=True, count=AUTO_LOOKS[-1], warmups=1, interleaved=True, driven=True)
  replies = io.StringIO()
  done = driven_rounds(repeats, ["a", "b"], random.Random(1), execute, stop, io.StringIO(commands), replies)
  return ran, replies.getvalue().splitlines(), done


def test_driven_rounds_run_a_round_per_command_and_end_at_the_drivers_look():
  """`matrix`'s protocol: warm-ups, then ready; each `round` runs every benchmark once and says so; `stop`
  carries the look the driver stopped at, which this run's own verdicts then spend."""
  ran, replies, done = _driven("round\nround\nstop 3 early decided\n")
  assert [(r.benchmark_index, r.warmup) for r in ran[:2]] == [(0, True), (1, True)]
  assert sorted((r.benchmark_index, r.repeat) for r in ran[2:]) == [(0, 0), (0, 1), (1, 0), (1, 1)]
  assert replies == [DRIVEN_READY, f"{DRIVEN_ROUND_DONE} 1", f"{DRIVEN_ROUND_DONE} 2"]
  assert done == RepeatsDone(False, 2, "decided", Design(early_looks=3, last=False))
  assert _driven("round\nstop 8 last time budget\n")[2].design == Design(early_looks=8, last=True)


def test_driven_rounds_end_interrupted_when_the_driver_goes_or_ctrl_c_comes():
  assert _driven("round\n")[2] == RepeatsDone(True, 1, "interrupted")  # standard input closed: no stop
  ran, replies, done = _driven("round\nround\n", stopped_after=3)  # Ctrl-C during the first round
  assert done.interrupted and done.rounds == 0 and replies == [DRIVEN_READY]


def test_an_unknown_driver_command_is_an_error_naming_it():
  with pytest.raises(CkptbenchError, match="unknown command 'stop now'"):
    _driven("round\nstop now\n")
