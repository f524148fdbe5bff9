"""What native libraries write to standard error goes to OUT/logs/, not between the results.

TensorStore's AWS SDK (one `Failed to open file path:'/root/.aws/config'` per
request), Gloo and glog under `launch`, and absl's C++ logging write straight to
file descriptor 2, below Python. While a run lasts (without --verbose) that
descriptor points at a file: first a temporary one (the run's directory is not
known to be ours until its lock is held), then OUT/logs/process_<i>.log, which
receives what was captured so far. Python's `sys.stderr`, and so ckptbench's
own messages and errors, keep the terminal. A run that fails before OUT is
ready with an unexpected error shows what was captured, since it may explain it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pathlib
import shutil
import sys
import tempfile
from typing import Iterator

from ckptbench.errors import CkptbenchError

LOGS_DIR = "logs"


class LibraryOutput:
  """Standard error's descriptor, redirected; `keep_in(out, process)` moves it into OUT/logs/."""

  def __init__(self) -> None:
    sys.stderr.flush()
    self._terminal = os.dup(2)
    self._file = tempfile.TemporaryFile()
    self.path: pathlib.Path | None = None
    os.dup2(self._file.fileno(), 2)
    self._python_stderr = sys.stderr
    sys.stderr = os.fdopen(os.dup(self._terminal), "w", buffering=1, errors="backslashreplace")
    _repoint_log_handlers(self._python_stderr, sys.stderr)

  def keep_in(self, out: pathlib.Path, process: int) -> None:
    """From now on into OUT/logs/process_<process>.log, after what was captured before."""
    path = out / LOGS_DIR / f"process_{process}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    log = open(path, "ab")  # noqa: SIM115  (kept open while the run lasts)
    self._file.seek(0)
    shutil.copyfileobj(self._file, log)
    log.flush()
    os.dup2(log.fileno(), 2)
    self._file.close()
    self._file, self.path = log, path

  def restore(self, show: bool) -> None:
    """Standard error back to the terminal; `show` copies what was captured there first."""
    sys.stderr.flush()
    os.dup2(self._terminal, 2)
    if show and self.path is None:
      self._file.seek(0)
      sys.stderr.write(self._file.read().decode(errors="backslashreplace"))
    _repoint_log_handlers(sys.stderr, self._python_stderr)
    sys.stderr.close()
    sys.stderr = self._python_stderr
    self._file.close()
    os.close(self._terminal)

  def lines(self) -> int:
    """How many lines the libraries wrote into the log file so far."""
    if self.path is None or not self.path.exists():
      return 0
    with open(self.path, "rb") as f:
      return sum(1 for _ in f)


def _repoint_log_handlers(old, new) -> None:
  """Logging handlers that wrote to `old` (set up before the redirect) write to `new`."""
  for handler in logging.getLogger().handlers:
    if isinstance(handler, logging.StreamHandler) and handler.stream is old:
      handler.setStream(new)


@contextlib.contextmanager
def library_output_captured(enabled: bool) -> Iterator[LibraryOutput | None]:
  """Captures the libraries' standard error while the block runs (when `enabled`)."""
  if not enabled:
    yield None
    return
  captured = LibraryOutput()
  show = True  # an unexpected error: what the libraries said may explain it
  try:
    yield captured
    show = False
  except (CkptbenchError, KeyboardInterrupt):  # a message of its own says what went wrong
    show = False
    raise
  finally:
    captured.restore(show=show)
