"""The `time` and `rss` collectors, and `host_live_mib`.

Every `rss` block starts with the allocator's free memory handed back to the system
(`_allocator.release_free_memory`), outside the `time` collector's window: its starting
RSS is what is live, not what earlier runs left in glibc's free lists, so its peak above
the start is what the block itself needs (issue 30).
"""

from __future__ import annotations

import os
import threading
import time

import psutil

from ckptbench.api import MetricValue, register_collector, tag_value
from ckptbench.metrics._allocator import heap_in_use, release_free_memory

_MIB = float(1 << 20)
# How often the background thread samples RSS where the kernel's peak cannot be reset; fine
# enough to see a transient spike inside a save of a few tens of milliseconds.
_RSS_SAMPLE_INTERVAL_S = 0.005


class TimeCollector:
  """Wall-clock duration of the block (monotonic, high resolution)."""

  def start(self) -> None:
    self._t0 = time.perf_counter()

  def stop(self):
    elapsed = time.perf_counter() - self._t0
    return {"0_basics/time_s": MetricValue(elapsed, "s", "sum")}


class _KernelPeak:
  """The kernel's own resident high-water mark (`VmHWM` in /proc/self/status), which writing
  "5" to /proc/self/clear_refs resets to the current RSS (Linux 4.0 and later): every peak,
  however brief, with no thread sampling beside the measured code."""

  def __init__(self, clear: int, status: int):
    self._clear, self._status = clear, status

  @classmethod
  def open(cls) -> _KernelPeak | None:
    """None where the files are absent or the reset is refused (then a thread samples)."""
    try:
      clear = os.open("/proc/self/clear_refs", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
      return None
    try:
      status = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
      os.close(clear)
      return None
    peak = cls(clear, status)
    try:
      peak.reset()
      if peak.peak() is None:
        raise OSError("no VmHWM in /proc/self/status")
    except OSError:
      peak.close()
      return None
    return peak

  def reset(self) -> None:
    os.write(self._clear, b"5")

  def peak(self) -> int | None:
    for line in os.pread(self._status, 16384, 0).splitlines():
      if line.startswith(b"VmHWM:"):
        return int(line.split()[1]) * 1024
    return None

  def close(self) -> None:
    os.close(self._clear)
    os.close(self._status)


class _RssSampler:
  """The peak RSS of every open `rss` block.

  Where the kernel's high-water mark can be reset (`_KernelPeak`), opening a
  block credits the mark so far to the blocks already open, then resets it, and
  closing one credits it again: exact peaks, nothing running meanwhile. Elsewhere
  one background thread samples RSS every 5 ms; it is started once and sleeps
  while no block is open. (That thread costs the measured code: at the quick
  start's size on 2 busy CPUs, a save and a cold load took 20% longer beside it.)
  """

  def __init__(self):
    self._process = psutil.Process()
    self._statm = _open_statm()
    self._kernel = _KernelPeak.open()
    self._lock = threading.Lock()
    self._open: list[RssCollector] = []
    self._wake = threading.Event()
    self._thread: threading.Thread | None = None

  def rss(self) -> int:
    """Resident bytes: /proc/self/statm's second field where there is one (psutil reads the same
    file, at 3x the cost), else psutil."""
    if self._statm is not None:
      return int(os.pread(self._statm, 128, 0).split()[1]) * _PAGE
    return self._process.memory_info().rss

  def add(self, collector: "RssCollector") -> None:
    with self._lock:
      if self._kernel is not None:
        self._credit(self._kernel.peak() or 0)
        self._kernel.reset()
        self._open.append(collector)
        return
      self._open.append(collector)
      if self._thread is None:
        self._thread = threading.Thread(target=self._run, name="ckptbench-rss", daemon=True)
        self._thread.start()
    self._wake.set()

  def remove(self, collector: "RssCollector") -> None:
    with self._lock:
      if self._kernel is not None:
        self._credit(self._kernel.peak() or 0)
      self._open.remove(collector)

  def _credit(self, rss: int) -> None:
    for collector in self._open:
      collector._peak = max(collector._peak, rss)

  def _run(self) -> None:
    while True:
      self._wake.wait()
      time.sleep(_RSS_SAMPLE_INTERVAL_S)
      rss = self.rss()
      with self._lock:
        if not self._open:
          self._wake.clear()
        self._credit(rss)


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
    if _sampler._kernel is not None:
      _sampler._kernel.close()
    _sampler._process, _sampler._statm, _sampler._kernel = psutil.Process(), _open_statm(), _KernelPeak.open()
    _sampler._open, _sampler._thread = [], None  # (a fork copies no thread)

  os.register_at_fork(after_in_child=_reopen_in_child)


class RssCollector:
  """Host memory the block needs at its peak over what was live at its start (the allocator's free memory handed back first)."""

  def start(self) -> None:
    # Only here, not at the end too: the code between blocks (a test_fn freeing its tree, the
    # runner building the next run's data) reuses what a block freed instead of faulting it in
    # again, which cost the tour 10-15% more CPU time than a bare script.
    release_free_memory()
    self._rss0 = self._peak = _sampler.rss()
    self._heap0 = heap_in_use()
    _sampler.add(self)

  def stop(self):
    _sampler.remove(self)
    rss1 = _sampler.rss()
    heap1 = heap_in_use()
    peak = max(self._peak, rss1)
    # Memory live at the start that the block released (a cache an earlier run left, such as
    # Orbax's 100 MB OCDBT cache pool, which a save evicts and reuses) was the block's to use:
    # its need is measured over what stayed live throughout. The allocator's in-use count says
    # how much of the starting live memory the block gave back, without handing memory back here.
    released = 0 if self._heap0 is None or heap1 is None else max(0, self._heap0 - heap1)
    kept = min(self._rss0 - released, rss1)
    return {
        "0_basics/host_rss_diff_mib": tag_value("0_basics/host_rss_diff_mib", (rss1 - self._rss0) / _MIB),
        "7_memory/host_rss_peak_diff_mib": tag_value("7_memory/host_rss_peak_diff_mib", (peak - kept) / _MIB),
        "7_memory/host_rss_peak_mib": tag_value("7_memory/host_rss_peak_mib", peak / _MIB),
    }


def host_live_mib() -> float:
  """The process's live host memory in MiB: RSS once the allocator's free memory is handed back.

  What a leak grows and a cache that stops growing does not: record it after every save and
  `ckptbench.theil_sen_slope` of the series is the memory each save keeps (docs/metrics.md).

  Example:
    >>> live = []
    >>> for step in range(8):
    ...   save(step)
    ...   live.append(ckptbench.host_live_mib())
    >>> ckptbench.theil_sen_slope(live).per_step  # MiB kept per save
  """
  release_free_memory()
  return _sampler.rss() / _MIB


register_collector("time", TimeCollector)
register_collector("rss", RssCollector)
