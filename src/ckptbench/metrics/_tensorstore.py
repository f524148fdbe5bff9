"""The `tensorstore` collector: deltas of TensorStore's process-wide counters.

TensorStore keeps counters for every kvstore driver and cache
(`tensorstore.experimental_collect_matching_metrics`). The block records the
change of each counter that moved (histograms: their sample count; gauges such
as "live futures" are not deltas and are skipped), plus headline sums over the
storage drivers: bytes and operations read and written, cache hits and misses.

Counters are process-wide: a block sees TensorStore work from every thread,
like the jax_monitoring collector. The collector never imports TensorStore: a
block that starts before anything loaded it records nothing.
"""

from __future__ import annotations

import sys

from ckptbench.api import tag_value, unit_of
from ckptbench.api import MetricValue, register_collector

_PREFIX = "/tensorstore/"
# kvstore drivers layered over another kvstore: their bytes are counted again
# by the driver below, so the headline sums leave them out.
_ADAPTER_DRIVERS = frozenset(
    {"ocdbt", "zip", "kvstack", "neuroglancer_uint64_sharded", "zarr3_sharding_indexed", "tsgrpc"}
)
_HEADLINES = {
    "bytes_read": "6_tensorstore/kvstore_bytes_read",
    "bytes_written": "6_tensorstore/kvstore_bytes_written",
    "read": "6_tensorstore/kvstore_reads",
    "write": "6_tensorstore/kvstore_writes",
}
_CACHE = {"/tensorstore/cache/hit_count": "6_tensorstore/cache_hits",
          "/tensorstore/cache/miss_count": "6_tensorstore/cache_misses"}


def _snapshot() -> dict[str, list[dict]] | None:
  """`{metric name: its raw value entries}`; None without TensorStore. Parsed only when changed."""
  tensorstore = sys.modules.get("tensorstore")
  if tensorstore is None:
    return None
  return {m["name"]: m.get("values", []) for m in tensorstore.experimental_collect_matching_metrics(_PREFIX)}


def _counters(name: str, entries: list[dict]) -> dict[str, float]:
  """`{counter key: value}` of one metric: counters by label, histograms' sample counts; no gauges."""
  out: dict[str, float] = {}
  for entry in entries:
    if "max_value" in entry:  # a gauge
      continue
    labels = "".join(f"/{v}" for k, v in sorted(entry.items()) if isinstance(v, str))
    if "value" in entry and isinstance(entry["value"], (int, float)):
      out[name + labels] = float(entry["value"])
    elif "count" in entry:
      out[f"{name}{labels}/count"] = float(entry["count"])
  return out


def _flat(key: str) -> str:
  body = key.removeprefix(_PREFIX)
  return "6_tensorstore/" + "".join(c if c.isalnum() else "_" for c in body.lower()).strip("_")


def diff_counters(before: dict[str, list[dict]], after: dict[str, list[dict]]) -> dict[str, MetricValue]:
  """Tags for the counters that changed between two snapshots (pure)."""
  changed: dict[str, float] = {}
  for name, entries in after.items():
    old_entries = before.get(name, [])
    if entries == old_entries:
      continue
    old = _counters(name, old_entries)
    for key, v in _counters(name, entries).items():
      if v != old.get(key, 0.0):
        changed[key] = v - old.get(key, 0.0)
  sums: dict[str, float] = {"6_tensorstore/changed_metric_count": float(len(changed))}
  for key, delta in changed.items():
    parts = key.split("/")  # ["", "tensorstore", "kvstore", driver, metric, ...]
    if len(parts) == 5 and parts[2] == "kvstore" and parts[3] not in _ADAPTER_DRIVERS:
      headline = _HEADLINES.get(parts[4])
      if headline:
        sums[headline] = sums.get(headline, 0.0) + delta
    if key in _CACHE:
      sums[_CACHE[key]] = delta
  out = {tag: tag_value(tag, x) for tag, x in sums.items()}
  for key, delta in changed.items():
    if key in _CACHE:
      continue
    tag = _flat(key)
    out.setdefault(tag, MetricValue(delta, unit_of(tag) or "count", "sum"))
  return out


class TensorStoreCollector:
  """TensorStore counter deltas: kvstore bytes and operations, cache hits and misses, and the rest that changed."""

  def start(self) -> None:
    # Not imported yet (ckptbench imports it lazily; the block's own save may be the first to): its
    # counters are all zero until it is, so an empty snapshot is the truth, not "unknown".
    self._before = _snapshot() or {}

  def stop(self) -> dict[str, MetricValue]:
    after = _snapshot()
    if after is None:
      return {}
    return diff_counters(self._before, after)


register_collector("tensorstore", TensorStoreCollector)
