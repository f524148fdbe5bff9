"""Stopping a run at its deadline, and describing why a run failed.

Timeouts: the run executes in the runner's (main) thread and an interval
timer (SIGALRM) raises `RunTimeout` there when the deadline passes. Python
runs a signal handler between bytecodes of the main thread, so the exception
surfaces at the next point where the benchmark is back in Python (a JAX or
TensorStore call in progress finishes its C++ part first; waits on futures and
locks are interrupted promptly). This keeps the run in the same process, with
its JAX state and the checkpoint data, and costs nothing when no timeout is
set. It cannot stop background threads a benchmark started (an Orbax async
save keeps writing until it ends); the run directory is removed afterwards.
Outside the main thread, a run is only measured: past its deadline it is
recorded as a timeout when it returns.
"""

from __future__ import annotations

import contextlib
import errno
import re
import signal
import threading
from typing import Iterator

from ckptbench.api import ErrorRecord
from ckptbench.data import DataMismatchError, unreadable_array_message

TIMEOUT = "Timeout"
DISK_FULL = "DiskFull"
_NO_SPACE = re.compile(r"No space left on device|Disk quota exceeded|os_error_code='(28|122)'")
_QUOTED_PATH = re.compile(r'"(/[^"]+)"')


class RunTimeout(BaseException):
  """Raised in the main thread at a run's deadline.

  A BaseException, so a benchmark's `except Exception` cannot swallow it.
  """


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
  """Raises RunTimeout in the block after `seconds` (main thread only; None: no limit)."""
  if not seconds or threading.current_thread() is not threading.main_thread():
    yield
    return

  def expire(signum, frame):
    raise RunTimeout(seconds)

  previous = signal.signal(signal.SIGALRM, expire)
  signal.setitimer(signal.ITIMER_REAL, seconds)
  try:
    yield
  finally:
    try:
      signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
      signal.signal(signal.SIGALRM, previous)


def timeout_error(seconds: float, elapsed: float, stack: str | None) -> ErrorRecord:
  """The `error` of a run stopped (or finished) past its deadline."""
  return ErrorRecord(
      TIMEOUT, f"the run exceeded timeout_s={seconds:g} (stopped after {elapsed:.1f} s)", stack or ""
  )


def _chain(error: BaseException) -> Iterator[BaseException]:
  seen: set[int] = set()
  while error is not None and id(error) not in seen:
    seen.add(id(error))
    yield error
    error = error.__cause__ or error.__context__


def unreadable_data_error(error: BaseException) -> ErrorRecord | None:
  """A `DataMismatchError` naming the array, when a load failed on damaged checkpoint data."""
  message = None if isinstance(error, DataMismatchError) else unreadable_array_message(error)
  if message is None:
    return None
  return ErrorRecord.from_exception(error, type=DataMismatchError.__name__, message=message)


def disk_full_error(error: BaseException, benchmark: str, run_dir: object) -> ErrorRecord | None:
  """A `DiskFull` error naming the benchmark and the file, when `error` is out of space."""
  for cause in _chain(error):
    full = isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EDQUOT)
    if full or _NO_SPACE.search(str(cause)):
      path = getattr(cause, "filename", None) if isinstance(cause, OSError) else None
      if path is None:
        quoted = _QUOTED_PATH.findall(str(cause))
        path = quoted[-1] if quoted else run_dir
      return ErrorRecord.from_exception(
          error,
          type=DISK_FULL,
          message=(
              f"out of disk space in benchmark {benchmark} while writing {path}; the partial"
              f" checkpoint in {run_dir} was removed ({type(cause).__name__}: {str(cause)[:300]})"
          ),
      )
  return None
