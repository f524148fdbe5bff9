"""The clock of `num_repeats: auto`: when to look, and how many rounds the budget still allows."""

from __future__ import annotations

import time

from ckptbench.run._auto import _agreed_look
from ckptbench.run._rounds import Repeats, RoundClock
from ckptbench.stats import AUTO_LOOKS


def _clock(budget_s: float | None, count: int = AUTO_LOOKS[-1]) -> RoundClock:
  return RoundClock(Repeats(auto=True, count=count, warmups=1, interleaved=True, budget_s=budget_s), time.perf_counter())


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


class _SecondOfTwo:
  """Process 1 of 2, whose gather returns what process 0 sent (`first`) beside its own value."""

  process_index, process_count = 1, 2

  def __init__(self, first):
    self.first = first

  def allgather_json(self, value):
    return [self.first, value]


def test_whether_a_round_ends_in_a_look_is_process_0s_call():
  spent = _clock(budget_s=0.15)  # this process's clock: the budget is spent, so it would look
  _round(spent, 0.1)
  assert spent.is_look(1)
  assert not _agreed_look(spent, 1, _SecondOfTwo(first=False))  # process 0 runs another round: so does it
  fresh = _clock(budget_s=60.0)
  assert _agreed_look(fresh, AUTO_LOOKS[0] + 1, _SecondOfTwo(first=True))
