"""The `time` and `rss` collectors."""

from __future__ import annotations

import os
import threading
import time

import psutil

from ckptbench.api import MetricValue, register_collector

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


class _RssSampler:
  """One background thread samples RSS for every open `rss` block.

  The thread is started once and sleeps while no block is open, so entering a
  block costs an RSS read, not a thread start (about 0.2 ms).
  """

  def __init__(self):
    self._process = psutil.Process()
    self._statm = _open_statm()
    self._lock = threading.Lock()
    self._open: list[RssCollector] = []
    self._wake = threading.Event()
    self._thread: threading.Thread | None = None

  def rss(self) -> int:
    """Resident bytes: /proc/self/statm's second field where there is one (psutil reads the same
    file, at 3x the cost of the whole 200 samples a second), else psutil."""
    if self._statm is not None:
      return int(os.pread(self._statm, 128, 0).split()[1]) * _PAGE
    return self._process.memory_info().rss

  def add(self, collector: "RssCollector") -> None:
    with self._lock:
      self._open.append(collector)
      if self._thread is None:
        self._thread = threading.Thread(target=self._run, name="ckptbench-rss", daemon=True)
        self._thread.start()
    self._wake.set()

  def remove(self, collector: "RssCollector") -> None:
    with self._lock:
      self._open.remove(collector)

  def _run(self) -> None:
    while True:
      self._wake.wait()
      time.sleep(_RSS_SAMPLE_INTERVAL_S)
      rss = self.rss()
      with self._lock:
        if not self._open:
          self._wake.clear()
        for collector in self._open:
          collector._peak = max(collector._peak, rss)


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _open_statm() -> int | None:
  """A descriptor on this process's /proc/self/statm (Linux), kept open; None elsewhere."""
  try:
    fd = os.open("/proc/self/statm", os.O_RDONLY)
  except OSError:
    return None
  os.set_inheritable(fd, False)
  return fd


_sampler = _RssSampler()
if hasattr(os, "register_at_fork"):  # a forked child reads its own RSS, not its parent's

  def _reopen_in_child() -> None:
    if _sampler._statm is not None:
      os.close(_sampler._statm)
    _sampler._process, _sampler._statm = psutil.Process(), _open_statm()

  os.register_at_fork(after_in_child=_reopen_in_child)


class RssCollector:
  """Host RSS delta over the block, and its peak sampled in the background."""

  def start(self) -> None:
    self._rss0 = self._peak = _sampler.rss()
    _sampler.add(self)

  def stop(self):
    _sampler.remove(self)
    rss1 = _sampler.rss()
    peak = max(self._peak, rss1)
    return {
        "0_basics/host_rss_diff_mib": MetricValue((rss1 - self._rss0) / _MIB, "MiB", "sum"),
        "7_memory/host_rss_peak_diff_mib": MetricValue((peak - self._rss0) / _MIB, "MiB", "max"),
        "7_memory/host_rss_peak_mib": MetricValue(peak / _MIB, "MiB", "max"),
    }


register_collector("time", TimeCollector)
register_collector("rss", RssCollector)
