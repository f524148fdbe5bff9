"""What `scale` reads from one host count's results: per benchmark, the counts (requests by kind
through the shaped link, files, bytes, barriers) and the times and memory this machine gave.

Every figure of a repeat combines that repeat's host records (a total, the primary's, the busiest
host's); a benchmark's figure is the median over its repeats, with their spread (0 for a count that
repeats exactly; GETs include polls whose number depends on timing). "Top-level" blocks are the timed
blocks that are not nested in another by name (`save`, not `save_blocking`).
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from typing import Sequence

from ckptbench.api import RunRecord

KINDS = ("put", "get", "list", "delete")
COUNT, TIME, MEMORY = "count", "time", "memory"


@dataclasses.dataclass(frozen=True)
class Measured:
  """One metric of one benchmark at one host count."""

  kind: str  # COUNT (does not depend on this machine's speed), TIME or MEMORY (do)
  unit: str
  value: float
  repeat_spread: float = 0.0  # (max - min) / |median| over the repeats: 0 for an exact count


def top_level_ops(records: Sequence[RunRecord]) -> list[str]:
  """The timed blocks not nested in another by name, in first-seen order."""
  ops = list(dict.fromkeys(t.removesuffix("_0_basics/time_s") for r in records for t in r.metrics
                           if t.endswith("_0_basics/time_s")))  # fmt: skip
  return [op for op in ops if not any(op.startswith(other + "_") for other in ops)]


def _value(record: RunRecord, tag: str) -> float:
  return record.value(tag) or 0.0


def _extra(per_host: Sequence[float]) -> float:
  """The primary's commit work: its requests beyond a typical other host's (0 with one host)."""
  return per_host[0] - statistics.median(per_host[1:]) if len(per_host) > 1 else 0.0


def _repeat_metrics(hosts: Sequence[RunRecord], ops: Sequence[str]) -> dict[str, Measured]:
  """The metrics of one repeat from its host records (sorted by host; host 0 is the primary)."""
  primary = hosts[0]
  out: dict[str, Measured] = {}

  def put(name: str, kind: str, unit: str, value: float) -> None:
    out[name] = Measured(kind, unit, float(value))

  per_host_total = [0.0] * len(hosts)
  for kind in KINDS:
    values = [_value(r, f"checkpoint_5_inventory/store_{kind}_count") for r in hosts]
    per_host_total = [a + b for a, b in zip(per_host_total, values)]
    put(f"requests_{kind}_total", COUNT, "requests", sum(values))
    put(f"requests_{kind}_primary", COUNT, "requests", values[0])
    put(f"requests_{kind}_max_host", COUNT, "requests", max(values))
  put("requests_max_host", COUNT, "requests", max(per_host_total))
  put("primary_extra_requests", COUNT, "requests", _extra(per_host_total))
  for op in ops:  # each block's requests, when the link's collector counted them
    tags = [f"{op}_5_inventory/store_{kind}_count" for kind in KINDS]
    if any(r.value(t) is not None for r in hosts for t in tags):
      per_host = [sum(_value(r, t) for t in tags) for r in hosts]
      put(f"requests_{op}_total", COUNT, "requests", sum(per_host))
      put(f"primary_extra_requests_{op}", COUNT, "requests", _extra(per_host))
  inventory = primary.inventory or {}
  put("files", COUNT, "files", inventory.get("file_count", 0))
  put("metadata_files", COUNT, "files", inventory.get("metadata_files", 0))
  put("metadata_bytes", COUNT, "bytes", inventory.get("metadata_bytes", 0))
  put("checkpoint_bytes", COUNT, "bytes", inventory.get("total_bytes", 0))
  written = [sum(_value(r, f"{op}_6_tensorstore/kvstore_bytes_written") for op in ops) for r in hosts]
  put("array_bytes_written_max_host", COUNT, "bytes", max(written))
  put("array_bytes_written_min_host", COUNT, "bytes", min(written))
  put("array_bytes_written_spread", COUNT, "max/min", max(written) / min(written) if min(written) else 0.0)
  for op in ops:
    put(f"barriers_{op}", COUNT, "barriers", _value(primary, f"{op}_8_jax/orbax_barrier_count"))
    put(f"{op}_time_s", TIME, "s", max(_value(r, f"{op}_0_basics/time_s") for r in hosts))
  put("barrier_s_max_host", TIME, "s", max(sum(_value(r, f"{op}_8_jax/orbax_barrier_s") for op in ops) for r in hosts))
  commit = sum(_value(primary, f"{op}_2_save_breakdown/{m}") for op in ops for m in ("metadata_write_s", "finalize_s"))
  put("primary_commit_s", TIME, "s", commit)
  rss = [max((_value(r, t) for t in r.metrics if t.endswith("_7_memory/host_rss_peak_mib")), default=0.0)
         for r in hosts]  # fmt: skip
  put("primary_rss_peak_mib", MEMORY, "MiB", rss[0])
  return out


def host_count_metrics(records: Sequence[RunRecord]) -> dict[str, dict[str, Measured]]:
  """`{benchmark: {metric: Measured}}` of one host count's records (warm-ups left out).

  Raises:
    ValueError: a run whose records miss a host.
  """
  runs: dict[tuple[str, int], list[RunRecord]] = defaultdict(list)
  for r in records:
    if not r.warmup:
      runs[(r.benchmark, r.repeat)].append(r)
  ops = top_level_ops(records)
  repeats: dict[str, list[dict[str, Measured]]] = defaultdict(list)
  for (bench, repeat), hosts in runs.items():
    hosts = sorted(hosts, key=lambda r: r.host)
    if [r.host for r in hosts] != list(range(hosts[0].num_hosts)):
      raise ValueError(f"{bench} repeat {repeat}: records of hosts {[r.host for r in hosts]} of {hosts[0].num_hosts}")
    repeats[bench].append(_repeat_metrics(hosts, ops))
  out: dict[str, dict[str, Measured]] = {}
  for bench, per_repeat in repeats.items():
    out[bench] = {name: _over_repeats([m[name] for m in per_repeat]) for name in per_repeat[0]}
  return out


def _over_repeats(values: Sequence[Measured]) -> Measured:
  """The median over repeats, and how far the repeats spread around it."""
  xs = [m.value for m in values]
  median = statistics.median(xs)
  spread = (max(xs) - min(xs)) / abs(median) if median else float(max(xs) != min(xs))
  return dataclasses.replace(values[0], value=median, repeat_spread=spread)
