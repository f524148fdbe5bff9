"""Ending a multi-process run that waits forever in a collective.

Every process of a multi-process run must enter the same collectives in the
same order. A process whose test_fn raised before a collective the others
entered (an Orbax save's barrier, say) goes on to the runner's gather: the
processes then wait in different collectives. Seen here: mismatched JAX (gloo)
collectives abort within seconds, but a jax.distributed barrier against a gloo
gather waits without end, and SIGALRM (`deadline`) cannot interrupt a main
thread blocked in native code. Nothing in Python can unblock such a wait, so
the watchdog, a daemon thread, ends the process: past the run's deadline it
writes one line to stderr and exits with `EXIT_RUN_STUCK`; `ckptbench launch`
(or the cluster scheduler) then stops the others. Records of earlier runs are
already in results.jsonl (fsynced as each run ends).

Deadlines (`DistributedTimeouts`, seconds), one run at a time:
- from the run's start to its test_fn (directory barrier, data): run_limit_s;
- test_fn: timeout_s + run_grace_s when a timeout_s applies, else run_limit_s;
- after test_fn (inventory, gather, barrier): until the test_fn deadline, since
  the others may still be in theirs, and at least run_grace_s; but only
  run_grace_s when this process's test_fn failed, since the others are then
  likely in a collective it skipped.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from ckptbench.api import ErrorRecord
from ckptbench.distributed import DistributedTimeouts
from ckptbench.errors import EXIT_RUN_STUCK


class RunWatchdog:
  """Exits the process when a run passes its deadline; inert with one process."""

  def __init__(self, process_index: int, process_count: int, limits: DistributedTimeouts | None = None):
    self._process = process_index
    self._enabled = process_count > 1
    self._limits = limits or DistributedTimeouts.from_env()
    self._lock = threading.Condition()
    self._thread: threading.Thread | None = None
    self._deadline: float | None = None
    self._test_fn_deadline = 0.0
    self._run = ""
    self._doing = ""
    self._why = ""

  def start_run(self, label: str) -> None:
    """Arms the watchdog for the run called `label` (benchmark and repeat)."""
    self._set(label=label, doing="preparing the run (directory barrier, data)",
              seconds=self._limits.run_limit_s, why="CKPTBENCH_RUN_LIMIT_S")  # fmt: skip

  def in_test_fn(self, timeout_s: float | None) -> None:
    """test_fn starts; it may take `timeout_s` (None: no timeout_s) plus the grace period."""
    if timeout_s:
      seconds, why = timeout_s + self._limits.run_grace_s, f"timeout_s={timeout_s:g} + CKPTBENCH_RUN_GRACE_S"
    else:
      seconds, why = self._limits.run_limit_s, "no timeout_s: CKPTBENCH_RUN_LIMIT_S"
    self._set(doing="in test_fn", seconds=seconds, why=why)
    self._test_fn_deadline = self._deadline or 0.0

  def after_test_fn(self, error: ErrorRecord | None) -> None:
    """test_fn ended (`error`: how it failed); the runner's gather and barrier follow."""
    grace = self._limits.run_grace_s
    if error is not None and self._enabled:
      # Said now: a gloo collective the others are in may abort this process at the gather, before
      # the record carrying the error is written anywhere.
      _say(f"ckptbench: process {self._process}: run '{self._run}' failed ({error.type}: {error.message[:300]});"
           " the others may be waiting in a collective it skipped\n")  # fmt: skip
    if error is not None:
      self._set(doing=f"at the gather after its run failed ({error.type}: {error.message[:200]})",
                seconds=grace, why="CKPTBENCH_RUN_GRACE_S")  # fmt: skip
    else:
      seconds = max(grace, self._test_fn_deadline - time.monotonic())
      self._set(doing="at the gather after its test_fn", seconds=seconds, why="the test_fn limit")

  def end_run(self) -> None:
    """Every process passed the run's last barrier."""
    with self._lock:
      self._deadline = None
      self._lock.notify()

  def _set(self, *, seconds: float, why: str, doing: str, label: str | None = None) -> None:
    if not self._enabled:
      return
    with self._lock:
      if label is not None:
        self._run = label
      self._doing, self._why = doing, f"{seconds:.0f} s ({why})"
      self._deadline = time.monotonic() + seconds
      self._lock.notify()
      if self._thread is None:
        self._thread = threading.Thread(target=self._watch, name="ckptbench-run-watchdog", daemon=True)
        self._thread.start()

  def _watch(self) -> None:
    with self._lock:
      while True:
        if self._deadline is None:
          self._lock.wait()
        elif time.monotonic() < self._deadline:
          self._lock.wait(self._deadline - time.monotonic())
        else:
          break
      line = (
          f"ckptbench: error: process {self._process}: run '{self._run}' was still {self._doing} past its"
          f" limit of {self._why}; the processes are likely waiting in different collectives (one skipped"
          f" a collective that the others entered); exiting with code {EXIT_RUN_STUCK}\n"
      )
    _say(line)
    os._exit(EXIT_RUN_STUCK)


def _say(line: str) -> None:
  # sys.stderr's descriptor: the terminal even while the libraries' output is captured (_library_output.py).
  os.write(sys.stderr.fileno(), line.encode("utf-8", errors="replace"))
