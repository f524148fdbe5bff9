"""Evicting files from the page cache, so a read measures the storage, not memory."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from ckptbench.api import tag_value
from ckptbench.api import Metrics
from ckptbench.storage import is_store_url

_log = logging.getLogger(__name__)
_DROP_CACHES = "/proc/sys/vm/drop_caches"
_MOUNTS = "/proc/self/mounts"
_MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")
METHODS = ("drop_caches", "fadvise")
# How a load reads, warmest first: the record names the warmest of its paths.
_READS = ("none", "memory", "fadvise", "drop_caches")


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
  # Dirty pages cannot be dropped. One sync (Linux waits for its writeback) instead of an fsync a
  # file: on ext4 each fsync commits the journal and waits for every process's ordered data, so
  # beside another writer 12 files took 0.28 s to evict one by one and 0.10 s after one sync.
  os.sync()
  for name in files:
    try:
      fd = os.open(name, os.O_RDONLY)
    except OSError:
      continue  # vanished or unreadable: nothing of it to evict that we could read either
    try:
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
    read will be served from memory; `evict_for_load` records it beside the figure).

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


def _in_memory(path: str | os.PathLike) -> bool:
  """True when `path` lies on tmpfs or ramfs: its pages are the storage, nothing can evict them."""
  try:
    with open(_MOUNTS) as f:
      mounts = [line.split()[1:3] for line in f]
  except OSError:
    return False
  target = os.path.realpath(path)
  longest, fstype = "", ""
  for point, kind in mounts:
    point = point.replace("\\040", " ")
    inside = target == point or target.startswith(point.rstrip("/") + "/")
    if inside and len(point) >= len(longest):  # the last mount over a point hides the earlier ones
      longest, fstype = point, kind
  return fstype in _MEMORY_FILESYSTEMS


def _evict(path: str | os.PathLike) -> str:
  if _in_memory(path):
    return "memory"
  method = evict_from_page_cache(path, "fadvise")  # leaves other processes' cache alone
  return evict_from_page_cache(path) if method == "none" else method


def evict_for_load(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    metrics: Metrics,
    op: str,
    cold: bool = True,
) -> str:
  """Evicts a checkpoint from the page cache before the load `op`, and records how `op` reads.

  Call it just before the timed load, on every process: each evicts its own
  view of the files (shared files too; eviction is idempotent). Each local
  path is evicted per file with posix_fadvise, or by dropping the whole page
  cache (root) where that is unavailable. The load records
  `<op>_0_basics/cold_cache_<how>`, `how` being:

  - `fadvise` or `drop_caches`: evicted, the load reads the storage;
  - `memory`: a path lies on tmpfs or ramfs, whose pages are the storage;
  - `none`: no method worked, the load reads memory;
  - `object_store`: every path is a gs:// or s3:// URL, which no local page
    cache holds: the load reads over the network;
  - `warm`: `cold` is false, nothing was evicted.

  With several paths (tiers a load may read from) the warmest of them is recorded.

  Args:
    paths: the checkpoint's directory or file, or several.
    metrics: where to record.
    op: the name of the load's measured block (`"load"`, `"restore"`).
    cold: evict (the default for built-ins, as MLPerf Storage requires); False
      records `warm`.

  Returns:
    `how`, as recorded.

  Example:
    >>> metrics = ckptbench.Metrics()
    >>> evict_for_load(ckpt_dir, metrics, "load")
    'fadvise'
    >>> with metrics.measure("load"):
    ...   restored = ocp.load(ckpt_dir, abstract)
  """
  if isinstance(paths, (str, os.PathLike)):
    paths = [paths]
  local = [p for p in paths if not is_store_url(p)]
  if not cold:
    how = "warm"
  elif not local:
    how = "object_store"
  else:
    found = {_evict(p) for p in local}
    how = next(r for r in _READS if r in found)
  metrics.add(f"{op}_0_basics/cold_cache_{how}", tag_value(f"0_basics/cold_cache_{how}", 1.0))
  return how
