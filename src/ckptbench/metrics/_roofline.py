"""The roofline: physical limits of the storage behind a directory, and shares of them.

`probe_storage` measures sequential write (fsync included), cold read (after
evicting the file from the page cache), warm read (from the page cache) and the
host memory-copy bandwidth, three times, and keeps the median of each with its
spread. A steady result is cached per host and filesystem. A result whose
spread is wide (a busy machine: two probes minutes apart here gave 0.30 and
1.87 GB/s for disk write) is cached for an hour only, its spread beside each
report line: so one bad moment is not drawn in every later report, and a busy
machine does not pay for a probe in every run (three 256 MiB writes with fsync
and reads: 2.6 s of a 10 s quick start here, issue 42).
`roofline_shares` then puts every measured bandwidth beside its limit, e.g.
`save_4_throughput/save_total_gbps_of_disk_write`.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import pathlib
import logging
import socket
import statistics
import tempfile
import time
from typing import Mapping

import psutil

from ckptbench.api import MetricEntry
from ckptbench.errors import CkptbenchError
from ckptbench.metrics._page_cache import evict_from_page_cache

_GIB = float(1 << 30)
_CHUNK = 8 << 20
CACHE_ENV = "CKPTBENCH_CACHE_DIR"
PROBE_REPEATS = 3
# (max - min) / median of one limit's repeats beyond which the probe is unsteady: cached for
# UNSTEADY_KEPT_S only, then measured again.
WIDE_SPREAD = 0.3
UNSTEADY_KEPT_S = 3600.0
_log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class StorageProbe:
  """Measured limits of one filesystem on one host (all bandwidths in GiB/s).

  Attributes:
    mount: the mount point holding the probed directory.
    device: the mounted device (or filesystem source).
    fstype: the filesystem type.
    size_bytes: bytes written and read per measurement.
    disk_write_gbps: sequential write of `size_bytes`, fsync included.
    disk_read_gbps: sequential read after eviction; None when eviction failed.
    cold_method: how the file was evicted: "drop_caches", "fadvise" or "none".
    page_cache_read_gbps: the same read again, served from the page cache.
    memcpy_gbps: host memory copy (bytes copied per second, one thread).
    host: the hostname.
    measured_at: ISO-8601 UTC time of the measurement.
    repeats: how many measurements the figures are the median of.
    spread: per limit (`disk_write`, ...), (max - min) / median over the repeats.
  """

  mount: str
  device: str
  fstype: str
  size_bytes: int
  disk_write_gbps: float
  disk_read_gbps: float | None
  cold_method: str
  page_cache_read_gbps: float
  memcpy_gbps: float
  host: str
  measured_at: str
  repeats: int = 1
  spread: dict[str, float] = dataclasses.field(default_factory=dict)

  def steady(self, max_spread: float = WIDE_SPREAD) -> bool:
    """Repeated, and no limit's spread is above `max_spread`: worth caching."""
    return self.repeats >= 2 and all(v <= max_spread for v in self.spread.values())

  def limits(self) -> dict[str, float]:
    """`{limit name: GiB/s}` for the limits that were measured."""
    out = {
        "disk_write": self.disk_write_gbps,
        "disk_read": self.disk_read_gbps,
        "page_cache_read": self.page_cache_read_gbps,
        "memcpy": self.memcpy_gbps,
    }
    return {k: v for k, v in out.items() if v}


def _mount_of(directory: pathlib.Path) -> tuple[str, str, str]:
  """(mount point, device, fstype) of the deepest mount holding `directory`."""
  best = ("/", "", "")
  real = str(directory.resolve())
  for part in psutil.disk_partitions(all=True):
    mp = part.mountpoint
    if (real == mp or real.startswith(mp.rstrip("/") + "/")) and len(mp) >= len(best[0]):
      best = (mp, part.device, part.fstype)
  return best


def _cache_file() -> pathlib.Path:
  base = os.environ.get(CACHE_ENV) or os.path.join(
      os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ckptbench")
  return pathlib.Path(base) / "roofline.json"


def _cache_key(mount: str, device: str, fstype: str, size_bytes: int) -> str:
  return f"{socket.gethostname()}|{mount}|{device}|{fstype}|{size_bytes}"


def _read_all(path: str, buf: bytearray) -> float:
  view = memoryview(buf)
  t0 = time.perf_counter()
  with open(path, "rb", buffering=0) as f:
    while f.readinto(view):
      pass
  return time.perf_counter() - t0


def _memcpy_gbps(size_bytes: int) -> float:
  import numpy as np  # deferred: only the probe needs it

  n = max(min(size_bytes, 256 << 20), 1 << 20)
  src = np.ones(n, dtype=np.uint8)
  dst = np.empty_like(src)
  np.copyto(dst, src)  # fault the pages in before timing
  best = float("inf")
  for _ in range(3):
    t0 = time.perf_counter()
    np.copyto(dst, src)
    best = min(best, time.perf_counter() - t0)
  return n / best / _GIB


def measure_storage(directory: pathlib.Path, size_bytes: int, repeats: int = PROBE_REPEATS) -> StorageProbe:
  """Measures `repeats` times (no cache): the median of each limit, and its spread."""
  probes = [_measure_once(directory, size_bytes) for _ in range(max(1, repeats))]
  fields = {"disk_write": "disk_write_gbps", "disk_read": "disk_read_gbps",
            "page_cache_read": "page_cache_read_gbps", "memcpy": "memcpy_gbps"}  # fmt: skip
  medians: dict[str, float | None] = {}
  spread: dict[str, float] = {}
  for name, field in fields.items():
    values = [getattr(p, field) for p in probes if getattr(p, field)]
    medians[field] = statistics.median(values) if values else None
    if len(values) > 1:
      spread[name] = (max(values) - min(values)) / medians[field]
  return dataclasses.replace(probes[0], **medians, repeats=len(probes), spread=spread)


def _measure_once(directory: pathlib.Path, size_bytes: int) -> StorageProbe:
  """One measurement of each limit. Writes and removes one temporary file in `directory`."""
  mount, device, fstype = _mount_of(directory)
  block = os.urandom(_CHUNK)  # incompressible, so compressing filesystems cannot cheat
  fd, tmp = tempfile.mkstemp(prefix=".ckptbench-probe-", dir=directory)
  try:
    t0 = time.perf_counter()
    written = 0
    while written < size_bytes:
      written += os.write(fd, block[: min(_CHUNK, size_bytes - written)])
    os.fsync(fd)
    write_s = time.perf_counter() - t0
    os.close(fd)
    fd = -1
    buf = bytearray(_CHUNK)
    method = evict_from_page_cache(tmp)
    cold_s = _read_all(tmp, buf)
    _read_all(tmp, buf)  # the file is now cached
    warm_s = _read_all(tmp, buf)
  finally:
    if fd >= 0:
      os.close(fd)
    os.unlink(tmp)
  gib = written / _GIB
  return StorageProbe(
      mount=mount, device=device, fstype=fstype, size_bytes=written,
      disk_write_gbps=gib / write_s,
      disk_read_gbps=gib / cold_s if method != "none" else None,
      cold_method=method, page_cache_read_gbps=gib / warm_s,
      memcpy_gbps=_memcpy_gbps(size_bytes), host=socket.gethostname(),
      measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
  )


def probe_storage(
    directory: str | os.PathLike,
    *,
    size_mib: int = 256,
    cache: bool = True,
    refresh: bool = False,
    max_spread: float = WIDE_SPREAD,
) -> StorageProbe:
  """The limits of the storage behind `directory`, measured once per host and filesystem.

  Args:
    directory: an existing directory on the storage to probe (the output directory).
    size_mib: MiB written and read; larger is steadier, smaller is quicker.
    cache: read and write the cache (`$CKPTBENCH_CACHE_DIR/roofline.json`, else
      `~/.cache/ckptbench/roofline.json`), keyed by host, mount, device, fstype and size;
      a steady probe (see `StorageProbe.steady`) is kept until refreshed, an unsteady one for
      `UNSTEADY_KEPT_S`.
    refresh: measure even when the cache has an entry (and replace it).
    max_spread: the widest (max - min) / median of any limit that is still steady.

  Raises:
    CkptbenchError: when `directory` does not exist or is not writable.

  Example:
    >>> probe = probe_storage("out/")
    >>> round(probe.disk_write_gbps, 1)
    1.2
  """
  path = pathlib.Path(directory)
  if not path.is_dir():
    raise CkptbenchError(f"cannot probe {directory}: not a directory; create it first")
  if not os.access(path, os.W_OK):
    raise CkptbenchError(f"cannot probe {directory}: not writable")
  size_bytes = int(size_mib) << 20
  key = _cache_key(*_mount_of(path), size_bytes)
  entries = _read_cache() if cache else {}
  if cache and not refresh:
    cached = _usable_entry(entries, key, max_spread)
    if cached is not None:
      return cached
  probe = measure_storage(path, size_bytes)
  steady = probe.steady(max_spread)
  # An unsteady probe never replaces one still in use (`refresh` on a busy machine).
  keep = cache and (steady or _usable_entry(entries, key, max_spread) is None)
  if not steady:
    _log.warning(
        "the storage probe of %s was unsteady (spread %s over %d probes; the machine is busy?): %s", path,
        _spread_text(probe), probe.repeats,
        f"used for {UNSTEADY_KEPT_S / 60:.0f} minutes, then measured again" if keep else "used for this run only",
    )  # fmt: skip
  if keep:
    entries[key] = dataclasses.asdict(probe)
    cache_file = _cache_file()
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache_file.with_suffix(".tmp")
    tmp.write_text(json.dumps(entries, indent=1, sort_keys=True))
    tmp.replace(cache_file)
  return probe


def cached_probe(directory: str | os.PathLike, *, size_mib: int = 256, max_spread: float = WIDE_SPREAD) -> StorageProbe | None:
  """The cached probe of the storage behind `directory` still in use (steady, or unsteady and measured within
  `UNSTEADY_KEPT_S`), without measuring; None if there is none."""
  path = pathlib.Path(directory)
  return _usable_entry(_read_cache(), _cache_key(*_mount_of(path), int(size_mib) << 20), max_spread)


def _read_cache() -> dict:
  try:
    entries = json.loads(_cache_file().read_text())
  except (OSError, ValueError):  # ValueError: not UTF-8, not JSON
    return {}
  return entries if isinstance(entries, dict) else {}  # a cache of another shape is measured again


def _usable_entry(entries: dict, key: str, max_spread: float) -> StorageProbe | None:
  """The cached probe if steady, or unsteady and younger than `UNSTEADY_KEPT_S`; else None (measure again)."""
  if key not in entries:
    return None
  try:
    cached = StorageProbe(**entries[key])
    measured = datetime.datetime.fromisoformat(cached.measured_at)
  except (TypeError, ValueError):  # written by another version
    return None
  if cached.steady(max_spread):
    return cached
  if cached.repeats < 2:  # entries from before repeated probes have no spread
    return None
  age_s = (datetime.datetime.now(datetime.timezone.utc) - measured).total_seconds()
  return cached if 0 <= age_s < UNSTEADY_KEPT_S else None


def _spread_text(probe: StorageProbe) -> str:
  return ", ".join(f"{name} {value:.0%}" for name, value in probe.spread.items())


def _limits_for(metric: str) -> tuple[str, ...]:
  if metric.startswith("save_blocking"):
    return ("memcpy",)  # the blocking phase copies device memory to the host
  if metric.startswith("save"):
    return ("disk_write", "store_write")
  if metric.startswith("load"):
    return ("disk_read", "page_cache_read", "store_read")
  return ()


def roofline_shares(
    tags: Mapping[str, MetricEntry], probe: StorageProbe
) -> dict[str, MetricEntry]:
  """For each `<op>_4_throughput/<x>_gbps`, its share of the matching limit (pure).

  save_* bandwidths are compared with disk_write (save_blocking_* with memcpy),
  load_* with disk_read and page_cache_read: a load share above 1 of disk_read
  means the load was served from memory.

  Args:
    tags: `{tag: MetricEntry}`, the `Metrics.to_dict()` form.
    probe: the limits.

  Returns:
    New tags `<op>_4_throughput/<x>_gbps_of_<limit>` with unit "ratio".

  Example:
    >>> roofline_shares({"save_4_throughput/save_total_gbps": MetricEntry(0.6, "GiB/s")}, probe)
    {'save_4_throughput/save_total_gbps_of_disk_write': MetricEntry(value=0.5, unit='ratio')}
  """
  limits = probe.limits()
  out: dict[str, MetricEntry] = {}
  for tag, entry in tags.items():
    _, sep, metric = tag.partition("_4_throughput/")
    if not sep or not metric.endswith("_gbps"):
      continue
    for limit in _limits_for(metric):
      if limit in limits:
        out[f"{tag}_of_{limit}"] = MetricEntry(entry.value / limits[limit], "ratio")
  return out
