"""The noise meter: a full collection before each run, what survives it frozen, unfrozen at the suite's end."""

from __future__ import annotations

import gc
import weakref

from ckptbench.engine._noise import NoiseMeter, pause_while_starting


class _Node:
  me: "_Node"


def test_collects_before_each_run_freezes_what_survives_and_unfreezes_at_the_end():
  assert gc.get_freeze_count() == 0
  meter = NoiseMeter(flush=False)
  meter.start()
  frozen = gc.get_freeze_count()
  assert frozen > 0  # the modules and everything else alive before the first run
  cycle = _Node()
  cycle.me = cycle
  collected = weakref.ref(cycle)
  del cycle  # garbage made during a run: the next start collects it instead of freezing it
  assert "machine_9_other/load_1m" in meter.stop()
  meter.start()
  # (the frozen count itself may shrink: a frozen object whose last reference goes is freed as usual)
  assert collected() is None and gc.get_freeze_count() > 0
  meter.stop()
  meter.close()
  assert gc.get_freeze_count() == 0


def test_leaves_a_freeze_it_did_not_make_alone():
  gc.freeze()
  try:
    held = gc.get_freeze_count()
    meter = NoiseMeter(flush=False)
    meter.start()
    meter.stop()
    meter.close()
    assert gc.get_freeze_count() == held
  finally:
    gc.unfreeze()


def test_runs_see_the_collector_enabled_where_the_caller_paused_it_and_close_pauses_it_again():
  gc.disable()  # as `ckptbench run` does while it starts
  try:
    meter = NoiseMeter(flush=False)
    meter.start()
    assert gc.isenabled()
    meter.stop()
    meter.start()
    assert gc.isenabled()
    meter.stop()
    meter.close()
    assert not gc.isenabled()
  finally:
    gc.enable()


def test_leaves_an_enabled_collector_enabled():
  meter = NoiseMeter(flush=False)
  meter.start()
  meter.stop()
  meter.close()
  assert gc.isenabled()


def test_after_a_start_up_pause_the_first_run_freezes_without_collecting_and_later_runs_collect():
  collections: list[int] = []

  def count(phase: str, info: dict) -> None:
    if phase == "start":
      collections.append(info["generation"])

  gc.callbacks.append(count)  # the interpreter calls this very list's entries
  pause_while_starting()
  try:
    meter = NoiseMeter(flush=False)
    meter.start()
    assert gc.isenabled() and gc.get_freeze_count() > 0 and not collections  # frozen, not walked
    meter.stop()
    meter.start()
    assert collections  # the second run collects what the first made
    meter.stop()
    meter.close()
    assert not gc.isenabled() and gc.get_freeze_count() == 0
  finally:
    gc.callbacks.remove(count)
    gc.enable()
