"""Metrics.measure: nesting, repetition, collector selection, timing hygiene."""

from __future__ import annotations

import gc
import mmap
import time

import pytest

import ckptbench
from ckptbench.api import collect_created_metrics


def test_nested_blocks_both_record_and_repeats_accumulate():
  metrics = ckptbench.Metrics()
  with metrics.measure("train_steps", ["time"]):
    for step in range(3):
      with metrics.measure("step", ["time"]):
        time.sleep(0.01)
  out = metrics.to_dict()
  outer = out["train_steps_0_basics/time_s"].value
  total = out["step_0_basics/time_s"].value
  assert out["step_0_basics/count"].value == 3
  assert out["step_0_basics/time_s_mean"].value == pytest.approx(total / 3)
  assert 0.03 <= total <= outer


def test_unknown_metric_key_lists_known_ones():
  metrics = ckptbench.Metrics()
  with pytest.raises(ValueError, match=r"unknown metric key 'nope'; known keys: .*rss.*time"):
    with metrics.measure("x", ["time", "nope"]):
      pass


def test_rss_peak_sees_a_transient_spike():
  metrics = ckptbench.Metrics()
  with metrics.measure("alloc", ["rss"]):
    _spike(200, hold_s=0.05)
  out = metrics.to_dict()
  assert out["alloc_7_memory/host_rss_peak_diff_mib"].value > 150
  assert out["alloc_0_basics/host_rss_diff_mib"].value < 100


def test_time_excludes_the_other_collectors_start_and_stop():
  class Slow:
    def start(self):
      time.sleep(0.2)

    def stop(self):
      time.sleep(0.2)
      return {}

  ckptbench.register_collector("slow_test_collector", Slow, default=False)
  metrics = ckptbench.Metrics()
  with metrics.measure("op", ["slow_test_collector", "time"]):
    pass
  assert metrics.to_dict()["op_0_basics/time_s"].value < 0.05


def test_a_failing_block_still_records_and_metrics_are_collected():
  with collect_created_metrics() as created:
    metrics = ckptbench.Metrics()
    with pytest.raises(RuntimeError):
      with metrics.measure("boom", ["time"]):
        raise RuntimeError("x")
  assert created == [metrics]
  assert "boom_0_basics/time_s" in metrics.to_dict()


def test_the_rss_sampler_reads_what_psutil_reads():
  import psutil

  from ckptbench.metrics._basic_collectors import _sampler

  block = bytearray(64 << 20)
  block[:: 4096] = b"\1" * len(block[:: 4096])  # touched: resident
  ours, theirs = _sampler.rss(), psutil.Process().memory_info().rss
  assert abs(ours - theirs) < 4 << 20, (ours, theirs)
  assert ours > 64 << 20


def _spike(mib: int, hold_s: float = 0.0) -> None:
  """`mib` MiB made resident for `hold_s`, then handed back to the kernel. An anonymous mapping of its own:
  malloc may keep a freed block resident and serve the next one from it (seen in CI: the inner
  spike reused the outer one's pages and its peak read 0)."""
  block = mmap.mmap(-1, mib << 20)
  try:
    block[:: mmap.PAGESIZE] = b"\1" * len(block[:: mmap.PAGESIZE])
    time.sleep(hold_s)
  finally:
    block.close()


def test_nested_blocks_each_see_a_spike_too_brief_for_any_sampler():
  from ckptbench.metrics._basic_collectors import _sampler

  if _sampler._kernel is None:
    pytest.skip("the kernel's resident high-water mark cannot be reset here: a thread samples")
  assert _sampler._thread is None  # nothing samples beside the measured code
  metrics = ckptbench.Metrics()
  # RSS is the whole process's: a collection of earlier tests' garbage inside a block frees more than
  # the spike adds (seen in the full suite: the inner block's peak 0). None runs while it is measured.
  gc.collect()
  gc.disable()
  try:
    with metrics.measure("outer", ["rss"]):
      _spike(150)  # freed at once: no pause for a sampler to catch it
      with metrics.measure("inner", ["rss"]):  # resets the mark: the outer block keeps its spike
        _spike(60)
  finally:
    gc.enable()
  out = metrics.to_dict()
  assert out["outer_7_memory/host_rss_peak_diff_mib"].value > 140
  assert 50 < out["inner_7_memory/host_rss_peak_diff_mib"].value < 140


def test_where_the_mark_cannot_be_reset_a_thread_samples(monkeypatch):
  from ckptbench.metrics import _basic_collectors

  monkeypatch.setattr(_basic_collectors._sampler, "_kernel", None)
  monkeypatch.setattr(_basic_collectors._sampler, "_thread", None)
  metrics = ckptbench.Metrics()
  with metrics.measure("alloc", ["rss"]):
    _spike(200, hold_s=0.05)
  assert metrics.to_dict()["alloc_7_memory/host_rss_peak_diff_mib"].value > 150
  assert _basic_collectors._sampler._thread is not None
