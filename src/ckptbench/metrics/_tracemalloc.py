"""The `tracemalloc` collector (opt-in): Python allocation peak and top sites.

Tracing slows Python allocation several-fold, so it is not a default; a suite
turns it on with `metric_tracemalloc_enabled: true` or a test_fn asks for it
with `measure("save", ["time", "tracemalloc"])`.

Nesting: tracing starts with the first open block and stops with the last.
Each block resets tracemalloc's peak when it starts; before the reset, the
current peak is handed to the blocks already open, so an outer block still
sees a peak its inner block reset.
"""

from __future__ import annotations

import logging
import os
import threading
import tracemalloc

from ckptbench.api import tag_value
from ckptbench.api import MetricValue, register_collector

_MIB = float(1 << 20)
TOP_SITES = 5
_log = logging.getLogger(__name__)
_lock = threading.Lock()
_open: list["TracemallocCollector"] = []
# Frames of tracemalloc itself and of this module are noise in the top sites.
_FILTERS = (
    tracemalloc.Filter(False, tracemalloc.__file__),
    tracemalloc.Filter(False, __file__),
)


class TracemallocCollector:
  """Python allocation peak and net growth, and the top growing source lines (slows allocation)."""

  def start(self) -> None:
    with _lock:
      if not _open:
        tracemalloc.start()
      _, peak = tracemalloc.get_traced_memory()
      for outer in _open:
        outer._peak = max(outer._peak, peak)
      tracemalloc.reset_peak()
      _open.append(self)
      self._current0, self._peak = tracemalloc.get_traced_memory()
    self._snapshot0 = tracemalloc.take_snapshot().filter_traces(_FILTERS)

  def stop(self) -> dict[str, MetricValue]:
    snapshot1 = tracemalloc.take_snapshot().filter_traces(_FILTERS)
    with _lock:
      current, peak = tracemalloc.get_traced_memory()
      peak = max(self._peak, peak)
      _open.remove(self)
      if not _open:
        tracemalloc.stop()
    out = {
        "7_memory/tracemalloc_peak_diff_mib": tag_value(
            "7_memory/tracemalloc_peak_diff_mib", (peak - self._current0) / _MIB),
        "7_memory/tracemalloc_diff_mib": tag_value(
            "7_memory/tracemalloc_diff_mib", (current - self._current0) / _MIB),
    }
    growth = [s for s in snapshot1.compare_to(self._snapshot0, "lineno") if s.size_diff > 0]
    for stat in growth[:TOP_SITES]:
      frame = stat.traceback[0]
      site = "".join(c if c.isalnum() or c == "." else "_" for c in os.path.basename(frame.filename))
      out[f"7_memory/tracemalloc_site_{site}_L{frame.lineno}_kib"] = MetricValue(
          stat.size_diff / 1024, "KiB", "sum")
      _log.info("tracemalloc: %+.1f KiB at %s:%d", stat.size_diff / 1024, frame.filename, frame.lineno)
    return out


register_collector("tracemalloc", TracemallocCollector, default=False)
