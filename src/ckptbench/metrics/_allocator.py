"""Handing the C allocator's free memory back to the system, so RSS counts live memory only.

glibc keeps freed heap memory for reuse: after a run frees 160 MiB, the next
block's allocations come from those free lists and RSS does not move, so a
block's peak above its starting RSS reads what the allocator happened to keep
rather than what the block needs (issue 30: a 64 MiB allocation read 0). glibc's
`malloc_trim(0)` returns every free page of every arena, from the middle of the
heap too, to the kernel; after it, RSS is live memory (plus the partly used
pages the allocator cannot split). Other C libraries (musl, macOS) have no such
call: there the reading is left as the allocator makes it and
`free_memory_released()` says so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import platform


@functools.cache
def _malloc_trim():
  """glibc's `malloc_trim`, or None off glibc."""
  if platform.libc_ver()[0] != "glibc":
    return None
  try:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    trim = libc.malloc_trim
  except (OSError, AttributeError):
    return None
  trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
  return trim


def release_free_memory() -> bool:
  """Returns the allocator's free pages to the system; False where the C library cannot.

  Costs about 1 ms when little is free and up to tens of ms after a run freed hundreds of MiB
  (it is the kernel's work of dropping those pages, which a later `free` to the system would
  pay as well; docs/metrics.md).
  """
  trim = _malloc_trim()
  if trim is None:
    return False
  trim(0)
  return True


def free_memory_released() -> bool:
  """True where `release_free_memory` works (glibc)."""
  return _malloc_trim() is not None
