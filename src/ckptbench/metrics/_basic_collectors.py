"""The `time` and `rss` collectors."""

from __future__ import annotations

import threading
import time

import psutil

from ckptbench.metrics._collector import MetricValue, register_collector

_MIB = float(1 << 20)
# How often the background thread samples RSS; fine enough to see a transient
# spike inside a save of a few tens of milliseconds.
_RSS_SAMPLE_INTERVAL_S = 0.005


class TimeCollector:
  """Wall-clock duration of the block (monotonic, high resolution)."""

  def start(self) -> None:
    self._t0 = time.perf_counter()

  def stop(self):
    elapsed = time.perf_counter() - self._t0
    return {"0_basics/time_s": MetricValue(elapsed, "s", "sum")}


class RssCollector:
  """Host RSS delta over the block, and its peak sampled in the background."""

  def __init__(self):
    self._process = psutil.Process()
    self._done = threading.Event()

  def start(self) -> None:
    self._rss0 = self._process.memory_info().rss
    self._peak = self._rss0
    self._thread = threading.Thread(target=self._sample, name="ckptbench-rss", daemon=True)
    self._thread.start()

  def _sample(self) -> None:
    while not self._done.wait(_RSS_SAMPLE_INTERVAL_S):
      self._peak = max(self._peak, self._process.memory_info().rss)

  def stop(self):
    self._done.set()
    self._thread.join()
    rss1 = self._process.memory_info().rss
    peak = max(self._peak, rss1)
    return {
        "0_basics/host_rss_diff_mib": MetricValue((rss1 - self._rss0) / _MIB, "MiB", "sum"),
        "7_memory/host_rss_peak_diff_mib": MetricValue((peak - self._rss0) / _MIB, "MiB", "max"),
        "7_memory/host_rss_peak_mib": MetricValue(peak / _MIB, "MiB", "max"),
    }


register_collector("time", TimeCollector)
register_collector("rss", RssCollector)
