"""What `scale` reads from one host count's results: per benchmark, the counts (requests by kind
through the shaped link, files, bytes, barriers) and the times and memory this machine gave.

Every figure of a repeat combines that repeat's host records (a total, the primary's, the busiest
host's); a benchmark's figure is the median over its repeats, with their spread (0 for a count that
repeats exactly). Requests are counted twice: all of them (GETs and LISTs include repeats whose
number depends on timing: polls, revalidations, byte ranges coalesced or not), and the distinct
objects and listings they touched (exact); the repeated reads are a rate per second of their
block. A cross-host step (Orbax's barriers, the primary's work beyond a typical other host's)
does not exist with one process: its figure at one host is 0 by construction, and its law starts
at 2 hosts (`Measured.first_hosts`). "Top-level" blocks are the timed blocks that are not nested in another by name (`save`,
not `save_blocking`).
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from typing import Callable, Sequence

from ckptbench.api import RunRecord, timed_runs

KINDS = ("put", "get", "list", "delete")
COUNT, TIME, MEMORY, RATE = "count", "time", "memory", "rate"
# Metrics of steps between hosts: one process has none (0 barriers; nothing beyond other hosts).
CROSS_HOST_PREFIXES = ("barriers_", "primary_extra")


@dataclasses.dataclass(frozen=True)
class Measured:
  """One metric of one benchmark at one host count."""

  kind: str  # COUNT (does not depend on this machine's speed), TIME, MEMORY or RATE (do)
  unit: str
  value: float
  repeat_spread: float = 0.0  # (max - min) / |median| over the repeats: 0 for an exact count
  repeats: tuple[float, ...] = ()  # each repeat's value, in the same repeat order for every metric
  first_hosts: int = 1  # the fewest hosts the quantity exists at: 2 for a cross-host step


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


def _commit_s(primary: RunRecord, op: str) -> float:
  """The primary's timed commit steps in a block: its _METADATA write and its finalize (Orbax's v0
  Checkpointer times the finalize whole; v1's save times only the OCDBT merge inside it)."""
  finalize = primary.value(f"{op}_2_save_breakdown/finalize_s")
  if finalize is None:
    finalize = _value(primary, f"{op}_2_save_breakdown/ocdbt_merge_s")
  return _value(primary, f"{op}_2_save_breakdown/metadata_write_s") + finalize


def _has(hosts: Sequence[RunRecord], tags: Sequence[str]) -> bool:
  return any(r.value(t) is not None for r in hosts for t in tags)


def _request_metrics(hosts: Sequence[RunRecord], put: Callable[[str, str, str, float], None]) -> None:
  """The whole `test_fn`'s requests by kind, all and distinct: totals, the primary's, the busiest host's."""
  for what, suffix in (("", "count"), ("_distinct", "distinct_count")):
    if not _has(hosts, [f"checkpoint_5_inventory/store_{kind}_{suffix}" for kind in KINDS]):
      continue  # results of a link without its request log count no distinct targets
    per_host_total = [0.0] * len(hosts)
    for kind in KINDS:
      values = [_value(r, f"checkpoint_5_inventory/store_{kind}_{suffix}") for r in hosts]
      per_host_total = [a + b for a, b in zip(per_host_total, values)]
      put(f"requests_{kind}{what}_total", COUNT, "requests", sum(values))
      put(f"requests_{kind}{what}_primary", COUNT, "requests", values[0])
      put(f"requests_{kind}{what}_max_host", COUNT, "requests", max(values))
    put(f"requests{what}_max_host", COUNT, "requests", max(per_host_total))
    put(f"primary_extra{what}_requests", COUNT, "requests", _extra(per_host_total))


def _block_request_metrics(hosts: Sequence[RunRecord], op: str, put: Callable[[str, str, str, float], None]) -> None:
  """One block's requests, when the link's collector counted them: all, distinct, repeated reads per second."""
  for infix in ("", "_distinct"):  # every request, then each target once (the distinct tags may be absent)
    tags = [f"{op}_5_inventory/store_{kind}{infix}_count" for kind in KINDS]
    if not _has(hosts, tags):
      return
    per_host = [sum(_value(r, t) for t in tags) for r in hosts]
    put(f"requests_{op}{infix}_total", COUNT, "requests", sum(per_host))
    put(f"primary_extra{infix}_requests_{op}", COUNT, "requests", _extra(per_host))
  repeats = sum(_value(r, f"{op}_5_inventory/store_{k}_count") - _value(r, f"{op}_5_inventory/store_{k}_distinct_count")
                for r in hosts for k in ("get", "list"))  # fmt: skip
  seconds = max(_value(r, f"{op}_0_basics/time_s") for r in hosts)
  put(f"repeat_reads_{op}_per_s", RATE, "requests/s", repeats / seconds if seconds else 0.0)


def _commit_metrics(primary: RunRecord, ops: Sequence[str], put: Callable[[str, str, str, float], None]) -> None:
  """The requests of the primary's timed commit steps (Orbax's metadata write and finalize): by kind,
  all of them, the distinct objects and listings they touched, and their seconds summed."""
  if not _has([primary], [f"{op}_5_inventory/store_commit_{k}_count" for op in ops for k in KINDS]):
    return
  counts = {k: sum(_value(primary, f"{op}_5_inventory/store_commit_{k}_count") for op in ops) for k in KINDS}
  for kind, n in counts.items():
    put(f"primary_commit_requests_{kind}", COUNT, "requests", n)
  put("primary_commit_requests", COUNT, "requests", sum(counts.values()))
  distinct = sum(_value(primary, f"{op}_5_inventory/store_commit_distinct_count") for op in ops)
  put("primary_commit_distinct_requests", COUNT, "requests", distinct)
  put("primary_commit_request_s", TIME, "s", sum(_value(primary, f"{op}_5_inventory/store_commit_request_s") for op in ops))


def _repeat_metrics(hosts: Sequence[RunRecord], ops: Sequence[str]) -> dict[str, Measured]:
  """The metrics of one repeat from its host records (sorted by host; host 0 is the primary)."""
  primary = hosts[0]
  out: dict[str, Measured] = {}

  def put(name: str, kind: str, unit: str, value: float) -> None:
    out[name] = Measured(kind, unit, float(value), first_hosts=2 if name.startswith(CROSS_HOST_PREFIXES) else 1)

  _request_metrics(hosts, put)
  for op in ops:
    _block_request_metrics(hosts, op, put)
  _commit_metrics(primary, ops, put)
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
  put("primary_commit_s", TIME, "s", sum(_commit_s(primary, op) for op in ops))
  rss = [max((_value(r, t) for t in r.metrics if t.endswith("_7_memory/host_rss_peak_mib")), default=0.0)
         for r in hosts]  # fmt: skip
  put("primary_rss_peak_mib", MEMORY, "MiB", rss[0])
  return out


def host_count_metrics(records: Sequence[RunRecord]) -> dict[str, dict[str, Measured]]:
  """`{benchmark: {metric: Measured}}` of one host count's timed runs (warm-ups and a memory pass's
  records left out: a memory pass runs in one process and times nothing).

  Raises:
    ValueError: a run whose records miss a host.
  """
  runs: dict[tuple[str, int], list[RunRecord]] = defaultdict(list)
  for r in timed_runs(records):
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
  return dataclasses.replace(values[0], value=median, repeat_spread=spread, repeats=tuple(xs))
