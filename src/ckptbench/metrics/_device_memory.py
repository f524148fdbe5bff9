"""The `device_memory` collector: live-array delta and each block's own device memory peak.

It never starts JAX: when JAX is not imported or its backends are not
initialized yet, the block records nothing (measuring must not change what is
measured, and initializing a backend before `jax.distributed.initialize` would
break multi-process runs). Memory figures appear only where every local device
reports `memory_stats()` (GPU, TPU); on CPU they are absent, not zero.

A block's peak: `peak_bytes_in_use` is an all-time high-water mark that JAX
offers no way to reset, so once one block has set it, a later block that stays
below it would read 0. So while a block is open, one thread samples every
device's `bytes_in_use` (every 5 ms; only where the backend reports memory, so
never on CPU), and a block's peak on a device is the larger of the highest
sample and the all-time mark when the block raised that mark (then it is the
block's own, exact). A spike shorter than the interval that stays under the
all-time mark can be missed.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable, Sequence

from ckptbench.api import tag_value
from ckptbench.api import MetricValue, register_collector

_GIB = float(1 << 30)
# Fine enough for a device-to-host transfer of a few tens of ms; one stats call per device per sample.
SAMPLE_INTERVAL_S = 0.005


def _jax_if_ready():
  jax = sys.modules.get("jax")
  if jax is None:
    return None
  # Only JAX's private xla_bridge says whether backends exist; if that moves, assume they do.
  xla_bridge = sys.modules.get("jax._src.xla_bridge")
  started = getattr(xla_bridge, "backends_are_initialized", lambda: True)()
  return jax if started else None


def device_memory_stats(devices: Sequence) -> list[dict] | None:
  """Per device stats, or None unless every device reports peak and in-use bytes."""
  stats = []
  for device in devices:
    try:
      s = device.memory_stats()
    except Exception:  # noqa: BLE001  (backends raise assorted types for "unsupported")
      return None
    if not s or "peak_bytes_in_use" not in s or "bytes_in_use" not in s:
      return None
    stats.append(s)
  return stats


class InUseSampler:
  """The highest `bytes_in_use` of every device while each of its open blocks lasts.

  `read` returns the per-device stats (`device_memory_stats`); one daemon thread samples
  while at least one block is open and sleeps otherwise.
  """

  def __init__(self, read: Callable[[], list[dict] | None], interval_s: float = SAMPLE_INTERVAL_S):
    self._read, self._interval_s = read, interval_s
    self._lock = threading.Lock()
    self._open: dict[int, list[int]] = {}  # block id -> highest in-use per device so far
    self._wake = threading.Event()
    self._thread: threading.Thread | None = None

  def open(self, block: int, in_use: list[int]) -> None:
    with self._lock:
      self._open[block] = list(in_use)
      if self._thread is None:
        self._thread = threading.Thread(target=self._run, name="ckptbench-device-memory", daemon=True)
        self._thread.start()
    self._wake.set()

  def close(self, block: int, in_use: list[int]) -> list[int]:
    """The block's highest in-use bytes per device, the closing reading included."""
    with self._lock:
      highest = self._open.pop(block)
    return [max(h, x) for h, x in zip(highest, in_use)]

  def _run(self) -> None:
    while True:
      self._wake.wait()
      stats = self._read()
      with self._lock:
        if stats is not None:
          for highest in self._open.values():
            for i, s in enumerate(stats[: len(highest)]):
              highest[i] = max(highest[i], s["bytes_in_use"])
        if not self._open:
          self._wake.clear()
          continue
      time.sleep(self._interval_s)


def block_peaks(before: list[dict], after: list[dict], sampled: list[int]) -> list[int]:
  """Each device's peak bytes during a block: the all-time mark where the block raised it, else the highest sample."""
  return [
      max(s, s1["peak_bytes_in_use"]) if s1["peak_bytes_in_use"] > s0["peak_bytes_in_use"] else s
      for s0, s1, s in zip(before, after, sampled)
  ]


_samplers: dict[tuple, InUseSampler] = {}


def _sampler_for(devices: Sequence) -> InUseSampler:
  key = tuple(id(d) for d in devices)
  sampler = _samplers.get(key)
  if sampler is None:
    sampler = _samplers[key] = InUseSampler(lambda: device_memory_stats(devices))
  return sampler


class DeviceMemoryCollector:
  """Live jax.Array count delta (leak canary); the block's own device peak and in-use delta where the backend reports memory."""

  def start(self) -> None:
    self._jax = _jax_if_ready()
    if self._jax is None:
      return
    self._live0 = len(self._jax.live_arrays())
    self._devices = self._jax.local_devices()
    self._stats0 = device_memory_stats(self._devices)
    if self._stats0 is not None:
      self._sampler = _sampler_for(self._devices)
      self._sampler.open(id(self), [s["bytes_in_use"] for s in self._stats0])

  def stop(self) -> dict[str, MetricValue]:
    jax = self._jax
    if jax is None:
      return {}
    out = {
        "7_memory/jax_live_arrays_count_delta": tag_value(
            "7_memory/jax_live_arrays_count_delta", len(jax.live_arrays()) - self._live0)
    }
    if self._stats0 is None:
      return out
    stats1 = device_memory_stats(self._devices)
    sampled = self._sampler.close(id(self), [s["bytes_in_use"] for s in stats1] if stats1 else [0] * len(self._stats0))
    if stats1 is None:  # a backend that stopped answering mid-run: no figure rather than a wrong one
      return out
    return {**out, **memory_tags(self._stats0, stats1, sampled)}


def memory_tags(before: list[dict], after: list[dict], sampled: list[int]) -> dict[str, MetricValue]:
  """The block's device memory tags from the stats at its start and end and its sampled highs."""
  peaks = block_peaks(before, after, sampled)
  added = max(p - s0["bytes_in_use"] for p, s0 in zip(peaks, before))
  in_use = sum(s1["bytes_in_use"] - s0["bytes_in_use"] for s0, s1 in zip(before, after))
  return {
      tag: tag_value(tag, x)
      for tag, x in (
          ("7_memory/device_peak_diff_gb", added / _GIB),
          ("7_memory/device_peak_gb", max(peaks) / _GIB),
          ("7_memory/device_in_use_diff_gb", in_use / _GIB),
      )
  }


register_collector("device_memory", DeviceMemoryCollector)
