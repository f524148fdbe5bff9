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

What `malloc_trim` cannot hand back: the free memory at the top of a thread's arena (it trims
only the main arena's top). glibc's dynamic thresholds let each arena keep up to twice the largest
mapped block freed so far there (32 MiB after a load's 16 MiB read buffers), and a save's staging
buffers come out of it: the save then reads 0.67-0.84x a fresh process. The memory pass
(engine/memory/_pass.py) fixes the thresholds in a process of its own, at a cost in time the timed
runs do not pay.

`heap_in_use()` is glibc's own count of bytes handed out and not freed
(`mallinfo2`: `uordblks + hblkhd`), which a block's end can read without
handing anything back.
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


class _Mallinfo2(ctypes.Structure):
  _fields_ = [(name, ctypes.c_size_t) for name in (
      "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


@functools.cache
def _mallinfo2():
  """glibc's `mallinfo2` (2.33 and later), or None."""
  if _malloc_trim() is None:
    return None
  try:
    mallinfo2 = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallinfo2
  except (OSError, AttributeError):
    return None
  mallinfo2.argtypes, mallinfo2.restype = [], _Mallinfo2
  return mallinfo2


def heap_in_use() -> int | None:
  """Bytes the C allocator has handed out and not had back (heap and mmapped blocks); None off glibc 2.33+."""
  mallinfo2 = _mallinfo2()
  if mallinfo2 is None:
    return None
  info = mallinfo2()
  return info.uordblks + info.hblkhd


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
