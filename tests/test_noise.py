"""The noise meter: a full collection before each run, what survives it frozen, unfrozen at the suite's end."""

from __future__ import annotations

import gc

from ckptbench.run._noise import NoiseMeter


def test_collects_before_each_run_freezes_what_survives_and_unfreezes_at_the_end():
  assert gc.get_freeze_count() == 0
  meter = NoiseMeter(flush=False)
  meter.start()
  frozen = gc.get_freeze_count()
  assert frozen > 0  # the modules and everything else alive before the first run
  cycle: list = []
  cycle.append(cycle)
  del cycle  # garbage made during a run: the next start collects it, and freezes nothing more of it
  assert "machine_9_other/load_1m" in meter.stop()
  meter.start()
  assert gc.get_freeze_count() >= frozen
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
