"""What native libraries print goes to OUT/logs/, not between the results.

TensorStore's AWS SDK (one `Failed to open file path:'/root/.aws/config'` per
request), glog and absl's C++ logging write straight to file descriptor 2, and
Gloo under `launch` to descriptor 1, below Python. While a run lasts (without
--verbose) both descriptors point at a file: first a temporary one (the run's
directory is not known to be ours until its lock is held), then
OUT/logs/process_<i>.log, which receives what was captured so far (and is
removed again when nothing was). Python's `sys.stdout` and `sys.stderr`, and so
ckptbench's own tables, messages and errors, keep the terminal. A run that fails before OUT is
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
  """Descriptors 1 and 2, redirected to a file; `keep_in(out, process)` moves that into OUT/logs/."""

  def __init__(self) -> None:
    self._file = tempfile.TemporaryFile()
    self.path: pathlib.Path | None = None
    self._saved = {fd: _Descriptor(fd) for fd in (1, 2)}  # Gloo prints on 1, the AWS SDK and glog on 2
    for fd in self._saved:
      os.dup2(self._file.fileno(), fd)

  def keep_in(self, out: pathlib.Path, process: int) -> None:
    """From now on into OUT/logs/process_<process>.log, after what was captured before."""
    path = out / LOGS_DIR / f"process_{process}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    log = open(path, "ab")  # noqa: SIM115  (kept open while the run lasts)
    self._file.seek(0)
    shutil.copyfileobj(self._file, log)
    log.flush()
    for fd in self._saved:
      os.dup2(log.fileno(), fd)
    self._file.close()
    self._file, self.path = log, path

  def restore(self, show: bool) -> None:
    """The descriptors back where they were; `show` copies what was captured to standard error first."""
    for saved in self._saved.values():
      saved.restore()
    if show and self.path is None:
      self._file.seek(0)
      sys.stderr.write(self._file.read().decode(errors="backslashreplace"))
    self._file.close()
    if self.path is not None and self.lines() == 0:  # nothing said: no empty file left behind
      with contextlib.suppress(OSError):
        self.path.unlink()
        self.path.parent.rmdir()
      self.path = None

  def lines(self) -> int:
    """How many lines the libraries wrote into the log file so far."""
    if self.path is None or not self.path.exists():
      return 0
    with open(self.path, "rb") as f:
      return sum(1 for _ in f)


class _Descriptor:
  """One of descriptors 1 and 2, saved; Python's own stream on it keeps writing where it did."""

  def __init__(self, fd: int) -> None:
    self.fd = fd
    self.name = "stdout" if fd == 1 else "stderr"
    self.python_stream = getattr(sys, self.name)
    self.python_stream.flush()
    self.original = os.dup(fd)
    self.replacement = None
    if _fileno(self.python_stream) == fd:  # else (pytest's capture, a notebook) it never reaches the descriptor
      stream = self.python_stream
      self.replacement = os.fdopen(os.dup(self.original), "w", buffering=1, encoding=stream.encoding,
                                   errors=stream.errors)  # fmt: skip
      setattr(sys, self.name, self.replacement)
      _repoint_log_handlers(stream, self.replacement)

  def restore(self) -> None:
    getattr(sys, self.name).flush()
    os.dup2(self.original, self.fd)
    os.close(self.original)
    if self.replacement is not None:
      _repoint_log_handlers(self.replacement, self.python_stream)
      setattr(sys, self.name, self.python_stream)
      self.replacement.close()


def _fileno(stream) -> int | None:
  try:
    return stream.fileno()
  except (AttributeError, OSError, ValueError):
    return None


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
