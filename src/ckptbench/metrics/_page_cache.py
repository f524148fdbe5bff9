"""Evicting files from the page cache, so a read measures the storage, not memory."""

from __future__ import annotations

import logging
import os

_log = logging.getLogger(__name__)
_DROP_CACHES = "/proc/sys/vm/drop_caches"
METHODS = ("drop_caches", "fadvise")


def _files(path: str | os.PathLike) -> list[str]:
  if os.path.isfile(path):
    return [os.fspath(path)]
  return [os.path.join(d, f) for d, _, names in os.walk(path) for f in names]


def _drop_caches() -> bool:
  if not hasattr(os, "geteuid") or os.geteuid() != 0:
    return False
  os.sync()  # dirty pages cannot be dropped
  try:
    with open(_DROP_CACHES, "w") as f:
      f.write("1\n")  # page cache only; dentries and inodes stay
  except OSError as e:
    _log.info("cannot drop caches (%s); falling back to fadvise", e)
    return False
  return True


def _fadvise(files: list[str]) -> bool:
  if not hasattr(os, "posix_fadvise"):
    return False
  for name in files:
    try:
      fd = os.open(name, os.O_RDONLY)
    except OSError:
      continue  # vanished or unreadable: nothing of it to evict that we could read either
    try:
      os.fsync(fd)  # written pages must be clean before they can be dropped
      os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
      os.close(fd)
  return True


def evict_from_page_cache(path: str | os.PathLike, method: str = "auto") -> str:
  """Removes the files under `path` from the page cache; returns the method that worked.

  `auto` drops the whole page cache when running as root (`/proc/sys/vm/drop_caches`,
  the only way to also evict metadata blocks), and otherwise asks the kernel to
  drop each file's pages (`posix_fadvise(POSIX_FADV_DONTNEED)`, which works for
  files this user can open and that no process has mapped).

  Args:
    path: a file or a directory (walked recursively).
    method: "auto", "drop_caches" or "fadvise".

  Returns:
    "drop_caches", "fadvise", or "none" when neither is available (the next
    read will be served from memory; record it beside the figure).

  Raises:
    ValueError: for an unknown method.

  Example:
    >>> evict_from_page_cache(ckpt_dir)
    'fadvise'
  """
  if method not in ("auto", *METHODS):
    raise ValueError(f"unknown eviction method {method!r}; choose from auto, {', '.join(METHODS)}")
  if method in ("auto", "drop_caches") and _drop_caches():
    return "drop_caches"
  if method in ("auto", "fadvise") and _fadvise(_files(path)):
    return "fadvise"
  return "none"
