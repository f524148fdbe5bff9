"""One writer at a time in an output directory: an exclusive lock on OUT/.ckptbench.lock.

Two runs into one OUT would each run every benchmark and append to the same
results.jsonl (every repeat twice, summaries of doubled samples). The lock is
an `fcntl.flock` on a file in OUT, held for the whole run (and by `report`
and `matrix` while they write there). The kernel drops it when its process
dies, so a killed run never blocks the next one: the file's text, left from the
holder, names the process that died and the new holder says it took over.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import json
import logging
import os
import pathlib
import shutil
import socket
from typing import Iterator

from ckptbench.errors import CkptbenchError

LOCK_FILE = ".ckptbench.lock"

_log = logging.getLogger(__name__)


def _holder_text(fd: int) -> dict:
  """Who wrote the lock file last ({} when empty or unreadable)."""
  os.lseek(fd, 0, os.SEEK_SET)
  text = os.read(fd, 4096).decode(errors="replace").strip()
  try:
    holder = json.loads(text) if text else {}
  except json.JSONDecodeError:
    return {}
  return holder if isinstance(holder, dict) else {}


def _describe(holder: dict) -> str:
  if not holder:
    return "another process"
  return (f"`ckptbench {holder.get('command', '?')}` (pid {holder.get('pid', '?')} on {holder.get('host', '?')},"
          f" started {holder.get('started_at', '?')})")  # fmt: skip


def _open_lock_file(out: pathlib.Path, create: bool) -> int:
  if out.exists() and not out.is_dir():
    raise CkptbenchError(f"output directory {out} exists and is not a directory")
  if not create and not out.exists():
    raise CkptbenchError(f"output directory {out} does not exist")
  try:
    out.mkdir(parents=True, exist_ok=True)
    return os.open(out / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by child processes
  except OSError as e:
    raise CkptbenchError(f"output directory {out} cannot be written: {e.strerror or e}") from None


@contextlib.contextmanager
def output_lock(out: str | os.PathLike, command: str, wait: bool = False, create: bool = True) -> Iterator[None]:
  """Holds OUT's lock while the block runs; refuses (CkptbenchError) when another process holds it.

  Args:
    out: the output directory.
    command: what holds it (`run`, `report`, `matrix`), named to whoever is refused.
    wait: wait for the holder to finish instead of refusing (the views process
      started at the end of a run).
    create: create OUT when missing (else a missing OUT is an error).

  Raises:
    CkptbenchError: OUT is locked by a live process (naming its pid, host and
      start time), or cannot be written.
  """
  out = pathlib.Path(out)
  created = not out.exists()
  fd = _open_lock_file(out, create)
  try:
    try:
      fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
      if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
        raise CkptbenchError(f"cannot lock output directory {out}: {e.strerror or e}") from None
      raise CkptbenchError(
          f"output directory {out} is in use by {_describe(_holder_text(fd))}; wait for it to finish"
          " or choose another directory"
      ) from None
    previous = _holder_text(fd)
    if previous:  # a holder that released it normally leaves the file empty: this one was killed
      _log.warning("output directory %s: taking over the stale lock of %s, which ended without releasing it",
                   out, _describe(previous))  # fmt: skip
    me = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": command,
        "started_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    try:
      os.ftruncate(fd, 0)
      os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
    except OSError as e:  # a disk already full when OUT is made: one line, and no OUT left behind
      if created:
        shutil.rmtree(out, ignore_errors=True)
      raise CkptbenchError(f"output directory {out} cannot be written: {e.strerror or e}") from None
    try:
      yield
    finally:
      # Emptied, never unlinked: a process blocked on this file would otherwise
      # get a lock on a file nobody else opens any more.
      os.ftruncate(fd, 0)
      if created and _holds_nothing(out):  # refused before its first result: leave no directory behind
        shutil.rmtree(out, ignore_errors=True)
  finally:
    os.close(fd)  # releases the flock


def _holds_nothing(out: pathlib.Path) -> bool:
  """Whether every file under `out` is empty (the lock file, a log nothing was written to)."""
  return all(p.is_dir() or p.stat().st_size == 0 for p in out.rglob("*"))
