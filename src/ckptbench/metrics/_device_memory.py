"""The `device_memory` collector: live-array delta and device memory peaks.

It never starts JAX: when JAX is not imported or its backends are not
initialized yet, the block records nothing (measuring must not change what is
measured, and initializing a backend before `jax.distributed.initialize` would
break multi-process runs). Memory figures appear only where every local device
reports `memory_stats()` (GPU, TPU); on CPU they are absent, not zero.
"""

from __future__ import annotations

import sys

from ckptbench.api import tag_value
from ckptbench.api import MetricValue, register_collector

_GIB = float(1 << 30)


def _jax_if_ready():
  jax = sys.modules.get("jax")
  if jax is None:
    return None
  # Only JAX's private xla_bridge says whether backends exist; if that moves, assume they do.
  xla_bridge = sys.modules.get("jax._src.xla_bridge")
  started = getattr(xla_bridge, "backends_are_initialized", lambda: True)()
  return jax if started else None


def _memory_stats(jax) -> list[dict] | None:
  """Per local device stats, or None unless every device reports peak and in-use bytes."""
  stats = []
  for device in jax.local_devices():
    try:
      s = device.memory_stats()
    except Exception:  # noqa: BLE001  (backends raise assorted types for "unsupported")
      return None
    if not s or "peak_bytes_in_use" not in s or "bytes_in_use" not in s:
      return None
    stats.append(s)
  return stats


class DeviceMemoryCollector:
  """Live jax.Array count delta (leak canary); device peak and in-use deltas where the backend reports them."""

  def start(self) -> None:
    self._jax = _jax_if_ready()
    if self._jax is not None:
      self._live0 = len(self._jax.live_arrays())
      self._stats0 = _memory_stats(self._jax)

  def stop(self) -> dict[str, MetricValue]:
    jax = self._jax
    if jax is None:
      return {}
    out = {
        "7_memory/jax_live_arrays_count_delta": tag_value(
            "7_memory/jax_live_arrays_count_delta", len(jax.live_arrays()) - self._live0)
    }
    stats1 = _memory_stats(jax)
    if self._stats0 is not None and stats1 is not None:
      peaks = [s1["peak_bytes_in_use"] - s0["peak_bytes_in_use"] for s0, s1 in zip(self._stats0, stats1)]
      in_use = sum(s1["bytes_in_use"] - s0["bytes_in_use"] for s0, s1 in zip(self._stats0, stats1))
      for tag, x in (
          ("7_memory/device_peak_diff_gb", max(peaks) / _GIB),
          ("7_memory/device_peak_gb", max(s["peak_bytes_in_use"] for s in stats1) / _GIB),
          ("7_memory/device_in_use_diff_gb", in_use / _GIB),
      ):
        out[tag] = tag_value(tag, x)
    return out


register_collector("device_memory", DeviceMemoryCollector)
