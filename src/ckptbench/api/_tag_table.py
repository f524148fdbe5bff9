"""Every metric tag ckptbench produces: its namespace, unit, reduce and meaning.

This module is the one place that knows the names. Collectors build their
values with `value(tag, x)`, so a tag's unit and reduce cannot drift from what
the reference documents (docs/metrics.md is generated from these tables, see
`ckptbench.metrics._reference`).

A full tag is `<op>_<namespace>/<metric>`; the tables here hold the part after
the operation name (`"4_throughput/save_total_gbps"`).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Mapping

from ckptbench.api._collector import MetricValue, Reduce
from ckptbench.api._tags import Tag

NAMESPACES: dict[str, str] = {
    "0_basics": "wall-clock time and host memory of the block (any code)",
    "2_save_breakdown": "Orbax save stages, seconds (from jax.monitoring; Orbax reports them on the"
    " primary process only, except worker_io_s)",
    "3_load_breakdown": "Orbax load stages, seconds (from jax.monitoring; primary process only, except"
    " worker_io_s)",
    "4_throughput": "bandwidths in GiB/s, derived as bytes over time; roofline shares as ratios",
    "5_inventory": "bytes in GiB (Orbax's own accounting, per_host/requested/raw on every process,"
    " the rest on the primary; and the checkpoint directory scan)",
    "6_tensorstore": "TensorStore counter deltas: kvstore I/O, cache hits and misses",
    "7_memory": "device memory, live arrays, Python allocations",
    "8_jax": "JAX compilation and compilation cache; Orbax object lifecycle counts",
    "9_other": "jax.monitoring events under the watched prefixes that no table maps",
}


@dataclasses.dataclass(frozen=True)
class TagSpec:
  """What one tag means.

  Attributes:
    unit: the unit of its value ("s", "GiB", "GiB/s", "count", ...).
    reduce: how repeated entries of a block combine (see `MetricValue`).
    source: the collector (or framework step) that produces it.
    doc: one line for the reference table.
  """

  unit: str
  reduce: Reduce
  source: str
  doc: str


TAGS: dict[str, TagSpec] = {}


def _add(source: str, reduce: Reduce, unit: str, rows: Mapping[str, str]) -> None:
  for tag, doc in rows.items():
    TAGS[tag] = TagSpec(unit, reduce, source, doc)


_add("time", "sum", "s", {"0_basics/time_s": "wall-clock duration of the block"})
_add("rss", "sum", "MiB", {"0_basics/host_rss_diff_mib": (
    "host RSS at exit minus RSS at entry (entry read once the allocator's free memory is handed"
    " back; exit as the allocator leaves it: for what a block keeps, see host_live_mib())")})
_add("evict_for_load", "sum", "count", {
    "0_basics/cold_cache_drop_caches": "1: the page cache was dropped before the block (root)",
    "0_basics/cold_cache_fadvise": "1: the checkpoint's pages were evicted with posix_fadvise(DONTNEED) before the block",
    "0_basics/cold_cache_memory": "1: the checkpoint lies on tmpfs or ramfs, whose pages are the storage: nothing to evict",
    "0_basics/cold_cache_none": "1: eviction was asked for and no method worked (the block read from memory)",
    "0_basics/cold_cache_object_store": "1: the checkpoint is in an object store (gs://, s3://): no local page cache holds it",
    "0_basics/cold_cache_warm": "1: no eviction was asked for (cold_cache: false): the block read what the save left in memory",
})
_add("rss", "max", "MiB", {
    "7_memory/host_rss_peak_diff_mib": (
        "host memory the block needs at its peak: peak RSS during the block (the kernel's high-water"
        " mark on Linux, else sampled every 5 ms) minus RSS at entry, read once the allocator's free"
        " memory is handed back (so memory earlier runs freed is not counted as the block's), less"
        " what of the memory live at entry the block gave back (glibc's in-use count, mallinfo2)"),
    "7_memory/host_rss_peak_mib": "peak host RSS during the block",
})
_add("post_run", "max", "ratio", {
    "7_memory/host_peak_over_checkpoint": (
        "host_rss_peak_diff_mib over the bytes of one checkpoint (Orbax's save_total_gb or"
        " load_total_gb for the block, per entry; else the most Orbax counted for another block of"
        " the run; else the checkpoint directory's total_gb): a sync save that copies the checkpoint"
        " once reads about 1.0; lower is better"),
})

# --- jax_monitoring: save stages ------------------------------------------------
_add("jax_monitoring", "sum", "s", {
    "2_save_breakdown/blocking_s": "sync save: time the caller was blocked",
    "2_save_breakdown/async_blocking_s": "async save: time the caller was blocked before the background commit",
    "2_save_breakdown/total_s": "sync save: end-to-end duration",
    "2_save_breakdown/async_total_s": "async save: blocking + background duration",
    "2_save_breakdown/handler_blocking_s": "Orbax's blocking window for its blocking bandwidth (bytes / blocking_gbytes_per_sec)",
    "2_save_breakdown/handler_total_s": "Orbax's serialize-to-commit window for its save bandwidth (gbytes / gbytes_per_sec)",
    "2_save_breakdown/tree_map_s": "blocking: preparing the per-leaf write requests",
    "2_save_breakdown/d2h_s": "blocking: starting the device-to-host transfers",
    "2_save_breakdown/wait_prev_s": "blocking: waiting for the previous async save",
    "2_save_breakdown/validation_s": "blocking: validating the save arguments",
    "2_save_breakdown/checkpoint_start_sync_s": "blocking: cross-process sync before the save starts (Orbax"
    " 0.12.8's name; `start_sync_s` before, read as this one)",
    "2_save_breakdown/blocking_sync_item_s": "blocking: saving the items whose handler has no async save"
    " (a composite checkpoint's synchronous items), on the caller's thread",
    "2_save_breakdown/directory_creation_s": "creating the checkpoint directories",
    "2_save_breakdown/async_directory_creation_s": "directory creation when done off the caller's thread",
    "2_save_breakdown/background_directory_creation_s": "directory creation inside the background commit",
    "2_save_breakdown/blocking_directory_creation_s": "directory creation on the caller's thread",
    "2_save_breakdown/worker_io_s": "array writer: per-host serialization + write time",
    "2_save_breakdown/metadata_write_s": "background: writing _METADATA after the array commits",
    "2_save_breakdown/ocdbt_merge_s": "background: merging per-process OCDBT databases",
    "2_save_breakdown/merge_ocdbt_files_s": "merging OCDBT per-process files (inner step of ocdbt_merge_s)",
    "2_save_breakdown/commit_s": "background: storage commit (TensorStore writes), excluding barriers",
    "2_save_breakdown/background_s": "background thread: commit + finalize",
    "2_save_breakdown/item_finalize_s": "background: finalizing each checkpoint item",
    "2_save_breakdown/finalize_s": "finalizing the checkpoint (rename, commit marker)",
    "2_save_breakdown/background_finalize_s": "background: finalize step of an async save",
    "2_save_breakdown/delete_old_steps_s": "CheckpointManager: deleting checkpoints outside the keep policy",
    "2_save_breakdown/remove_steps_s": "CheckpointManager: remove-steps step of a save (includes deletion)",
    "2_save_breakdown/get_old_steps_s": "CheckpointManager: listing old steps",
    "2_save_breakdown/wait_for_prev_s": "CheckpointManager: waiting for the previous save to finish",
})
_add("jax_monitoring", "last", "s", {
    "2_save_breakdown/since_last_save_s": "time since the previous save ended (gauge)",
    "2_save_breakdown/between_saves_s": "CheckpointManager: time between consecutive saves (gauge)",
})
_add("jax_monitoring", "sum", "count", {
    "2_save_breakdown/started_count": "saves started",
    "2_save_breakdown/async_started_count": "async saves started",
    "2_save_breakdown/succeeded_count": "saves that completed",
    "2_save_breakdown/commit_future_count": "commit futures awaited by the background thread",
    "2_save_breakdown/old_steps_examined_count": "CheckpointManager: steps examined for deletion",
    "2_save_breakdown/storage_type_count": "storage-type reports (one per save)",
})
_add("jax_monitoring", "last", "bool", {
    "2_save_breakdown/continuous_checkpointing": "CheckpointManager: continuous checkpointing enabled (gauge)",
})

# --- jax_monitoring: load stages ------------------------------------------------
_add("jax_monitoring", "sum", "s", {
    "3_load_breakdown/blocking_s": "time the caller was blocked",
    "3_load_breakdown/async_blocking_s": "async load: time the caller was blocked",
    "3_load_breakdown/total_s": "end-to-end load duration",
    "3_load_breakdown/async_total_s": "async load: end-to-end duration",
    "3_load_breakdown/handler_total_s": "Orbax's restore window for its load bandwidth (gbytes / gbytes_per_sec)",
    "3_load_breakdown/worker_io_s": "array reader: per-host read + deserialization time",
    "3_load_breakdown/primary_deserialization_s": "replica-parallel restore: primary replica read",
    "3_load_breakdown/broadcast_s": "replica-parallel restore: broadcast to the other replicas",
    "3_load_breakdown/step_metadata_s": "CheckpointManager: loading every step's metadata",
})
_add("jax_monitoring", "sum", "count", {
    "3_load_breakdown/started_count": "loads started",
    "3_load_breakdown/async_started_count": "async loads started",
    "3_load_breakdown/succeeded_count": "loads that completed",
    "3_load_breakdown/shard_shape_changed_count": "arrays restored with a different sharding than saved",
    "3_load_breakdown/storage_type_count": "storage-type reports (one per load)",
})

# --- throughput (derived from bytes and seconds; see DERIVED) ----------------------
_add("derived", "last", "GiB/s", {
    "4_throughput/save_total_gbps": "save bandwidth: save_total_gb / handler_total_s (block time when Orbax gave no time)",
    "4_throughput/save_blocking_gbps": "blocking-phase bandwidth: save_blocking_gb / handler_blocking_s",
    "4_throughput/save_per_host_gbps": "array writer, this host: save_requested_gb / worker_io_s",
    "4_throughput/save_per_host_raw_gbps": "array writer, bytes after compression: save_raw_gb / worker_io_s",
    "4_throughput/load_total_gbps": "load bandwidth: load_total_gb / handler_total_s (block time when Orbax gave no time)",
    "4_throughput/load_per_host_gbps": "array reader, this host: load_requested_gb / worker_io_s",
    "4_throughput/load_per_host_raw_gbps": "array reader, stored bytes: load_raw_gb / worker_io_s",
    "4_throughput/store_write_gbps": "`storage` built-in: TensorStore kvstore write bandwidth (store_write_gb / block time)",
    "4_throughput/store_read_gbps": "`storage` built-in: TensorStore kvstore read bandwidth (store_read_gb / block time)",
})

# --- inventory: bytes Orbax reports -----------------------------------------------
_add("jax_monitoring", "sum", "GiB", {
    "5_inventory/save_total_gb": "bytes of the saved tree (Orbax's count)",
    "5_inventory/save_blocking_gb": "array bytes behind the blocking bandwidth",
    "5_inventory/sharded_array_gb": "bytes of the sharded (not replicated) arrays saved",
    "5_inventory/replicated_array_gb": "bytes of the replicated arrays saved",
    "5_inventory/save_requested_gb": "array writer: logical bytes requested, this host",
    "5_inventory/save_raw_gb": "array writer: bytes sent to storage after compression, this host",
    "5_inventory/load_total_gb": "bytes of the restored tree (Orbax's count)",
    "5_inventory/load_requested_gb": "array reader: logical bytes requested, this host",
    "5_inventory/load_raw_gb": "array reader: bytes read from storage, this host",
})
_add("derived", "last", "ratio", {
    "5_inventory/save_compression_ratio": "logical / stored bytes on save (save_requested_gb / save_raw_gb)",
    "5_inventory/load_compression_ratio": "logical / stored bytes on load (load_requested_gb / load_raw_gb)",
})

_add("storage", "sum", "GiB", {
    "5_inventory/store_write_gb": "`storage` built-in: bytes written through the TensorStore kvstore",
    "5_inventory/store_read_gb": "`storage` built-in: bytes read back through the TensorStore kvstore",
})

_add("store_requests", "sum", "count", {
    "5_inventory/store_put_count": "object-store writes during the run (by the shaped link, else TensorStore's)",
    "5_inventory/store_get_count": "object-store reads and metadata reads during the run",
    "5_inventory/store_list_count": "object-store listings during the run",
    "5_inventory/store_delete_count": "object-store deletes during the run",
    "5_inventory/store_injected_errors_count": "429/503 answers the shaped link injected during the run",
    "5_inventory/store_put_distinct_count": "distinct objects written (the shaped link; a rewrite counts once)",
    "5_inventory/store_get_distinct_count": "distinct objects read (the shaped link; a poll, revalidation or"
                                            " further byte range of an object already read counts once)",
    "5_inventory/store_list_distinct_count": "distinct listings (the shaped link; a listing repeated counts once)",
    "5_inventory/store_delete_distinct_count": "distinct objects deleted (the shaped link)",
    "5_inventory/store_commit_put_count": "writes while Orbax's primary wrote its metadata and finalized (the shaped link)",
    "5_inventory/store_commit_get_count": "reads while Orbax's primary wrote its metadata and finalized (the shaped link)",
    "5_inventory/store_commit_list_count": "listings while Orbax's primary wrote its metadata and finalized (the shaped link)",
    "5_inventory/store_commit_delete_count": "deletes while Orbax's primary wrote its metadata and finalized (the shaped link)",
    "5_inventory/store_commit_distinct_count": "distinct objects and listings those requests touched (the shaped link)",
})
_add("store_requests", "sum", "s", {
    "5_inventory/store_request_s": "seconds the block's store requests took at the shaped link, summed"
                                   " (round trips; overlapping requests add up)",
    "5_inventory/store_commit_request_s": "seconds the requests of Orbax's primary commit steps took, summed",
})
_add("store_requests", "last", "USD", {
    "5_inventory/store_requests_usd": "estimated price of the run's requests (price table: docs/storage.md)",
    "5_inventory/store_usd_per_month": "estimated price of keeping the checkpoint's bytes for a month",
})

# --- inventory: the checkpoint directory scan (ckptbench.metrics.scan_inventory) -----
_add("inventory", "last", "GiB", {
    "5_inventory/total_gb": "bytes of all files under the checkpoint directory",
    "5_inventory/largest_file_gb": "the largest file",
})
_add("inventory", "last", "count", {
    "5_inventory/file_count": "files under the checkpoint directory",
    "5_inventory/small_file_count": "files smaller than 1 MiB",
    "5_inventory/ocdbt_file_count": "OCDBT files (manifests, data under ocdbt.process_*/ and d/)",
    "5_inventory/zarr_file_count": "Zarr metadata and chunk files (.zarray/.zattrs/zarr.json and chunks beside them)",
    "5_inventory/metadata_file_count": "Orbax metadata (_METADATA, _CHECKPOINT_METADATA, _sharding, ...)",
})
_add("inventory", "last", "ratio", {
    "5_inventory/small_file_share": "small_file_count / file_count",
})

# --- tensorstore ------------------------------------------------------------------
_add("tensorstore", "sum", "bytes", {
    "6_tensorstore/kvstore_bytes_read": "bytes read by storage kvstore drivers (file, gcs, s3, ...)",
    "6_tensorstore/kvstore_bytes_written": "bytes written by storage kvstore drivers",
})
_add("tensorstore", "sum", "count", {
    "6_tensorstore/kvstore_reads": "read operations of storage kvstore drivers",
    "6_tensorstore/kvstore_writes": "write operations of storage kvstore drivers",
    "6_tensorstore/cache_hits": "TensorStore cache hits",
    "6_tensorstore/cache_misses": "TensorStore cache misses",
    "6_tensorstore/changed_metric_count": "TensorStore counters (one per label set) that changed during the block",
})
_add("derived", "last", "ratio", {
    "6_tensorstore/cache_hit_rate": "cache_hits / (cache_hits + cache_misses)",
})

# --- memory -----------------------------------------------------------------------
_add("device_memory", "sum", "count", {
    "7_memory/jax_live_arrays_count_delta": "live jax.Arrays at exit minus at entry (leak canary)",
})
_add("device_memory", "max", "GiB", {
    "7_memory/device_peak_diff_gb": (
        "max over local devices of the block's own peak bytes in use minus bytes in use at entry"
        " (the all-time peak_bytes_in_use where the block raised it, else bytes_in_use sampled every"
        " 5 ms); absent where the backend has no memory stats (CPU)"),
    "7_memory/device_peak_gb": "max over local devices of the block's own peak bytes in use",
})
_add("device_memory", "sum", "GiB", {
    "7_memory/device_in_use_diff_gb": "sum over local devices of the bytes_in_use change",
})
_add("tracemalloc", "max", "MiB", {
    "7_memory/tracemalloc_peak_diff_mib": "peak traced Python allocations during the block minus at entry",
})
_add("tracemalloc", "sum", "MiB", {
    "7_memory/tracemalloc_diff_mib": "traced Python allocations at exit minus at entry",
})

# --- jax --------------------------------------------------------------------------
_add("jax_monitoring", "sum", "count", {
    "8_jax/cache_hits_count": "compilation cache hits",
    "8_jax/cache_misses_count": "compilation cache misses",
    "8_jax/compile_requests_use_cache_count": "compile requests that consulted the cache",
    "8_jax/tasks_using_cache_count": "tasks that enabled the compilation cache",
    "8_jax/task_disabled_cache_count": "tasks that disabled the compilation cache",
    "8_jax/orbax_array_handler_init_count": "Orbax ArrayHandler objects created",
    "8_jax/orbax_pytree_handler_ocdbt_init_count": "Orbax PyTree handlers created with OCDBT",
    "8_jax/orbax_checkpointer_init_count": "Orbax Checkpointer objects created",
    "8_jax/orbax_async_checkpointer_init_count": "Orbax AsyncCheckpointer objects created",
    "8_jax/orbax_checkpoint_manager_init_count": "Orbax CheckpointManager objects created",
    "8_jax/orbax_deprecation_count": "uses of deprecated Orbax APIs (legacy args, inferred structure)",
    "8_jax/orbax_barrier_count": "Orbax barriers across processes (sync_global_processes; none with one process)",
})
_add("jax_monitoring", "sum", "s", {
    "8_jax/cache_retrieval_s": "time reading executables from the compilation cache",
    "8_jax/orbax_barrier_s": "time in Orbax barriers across processes (waiting for the slowest)",
    "8_jax/compile_time_saved_s": "compile time the cache saved",
    "8_jax/trace_s": "tracing Python to jaxprs",
    "8_jax/lower_s": "lowering jaxprs to MLIR",
    "8_jax/backend_compile_s": "XLA backend compilation",
})
_add("derived", "last", "ratio", {
    "8_jax/cache_hit_rate": "cache_hits_count / (cache_hits_count + cache_misses_count)",
})


@dataclasses.dataclass(frozen=True)
class Derived:
  """A tag computed from two others of the same operation: numerator / sum(denominators).

  Attributes:
    numerator: the tag divided.
    denominators: tags summed for the divisor.
    time_fallback: divide by `0_basics/time_s` when no denominator tag exists
      (a block that reports bytes but no Orbax time).
  """

  numerator: str
  denominators: tuple[str, ...]
  time_fallback: bool = False


DERIVED: dict[str, Derived] = {
    "4_throughput/save_total_gbps": Derived(
        "5_inventory/save_total_gb", ("2_save_breakdown/handler_total_s",), time_fallback=True),
    "4_throughput/save_blocking_gbps": Derived(
        "5_inventory/save_blocking_gb", ("2_save_breakdown/handler_blocking_s",)),
    "4_throughput/save_per_host_gbps": Derived(
        "5_inventory/save_requested_gb", ("2_save_breakdown/worker_io_s",)),
    "4_throughput/save_per_host_raw_gbps": Derived(
        "5_inventory/save_raw_gb", ("2_save_breakdown/worker_io_s",)),
    "4_throughput/load_total_gbps": Derived(
        "5_inventory/load_total_gb", ("3_load_breakdown/handler_total_s",), time_fallback=True),
    "4_throughput/load_per_host_gbps": Derived(
        "5_inventory/load_requested_gb", ("3_load_breakdown/worker_io_s",)),
    "4_throughput/load_per_host_raw_gbps": Derived(
        "5_inventory/load_raw_gb", ("3_load_breakdown/worker_io_s",)),
    "5_inventory/save_compression_ratio": Derived(
        "5_inventory/save_requested_gb", ("5_inventory/save_raw_gb",)),
    "5_inventory/load_compression_ratio": Derived(
        "5_inventory/load_requested_gb", ("5_inventory/load_raw_gb",)),
    "6_tensorstore/cache_hit_rate": Derived(
        "6_tensorstore/cache_hits", ("6_tensorstore/cache_hits", "6_tensorstore/cache_misses")),
    "4_throughput/store_write_gbps": Derived("5_inventory/store_write_gb", (), time_fallback=True),
    "4_throughput/store_read_gbps": Derived("5_inventory/store_read_gb", (), time_fallback=True),
    "8_jax/cache_hit_rate": Derived(
        "8_jax/cache_hits_count", ("8_jax/cache_hits_count", "8_jax/cache_misses_count")),
}

# Tags whose metric part is open-ended: (regex over "<namespace>/<metric>", unit, source, doc).
PATTERNS: tuple[tuple[str, str, str, str], ...] = (
    (r"6_tensorstore/[a-z0-9_]+_bytes(_[a-z0-9_]+)?", "bytes", "tensorstore",
     "delta of any other TensorStore byte counter that changed, e.g. kvstore_file_bytes_written"),
    (r"6_tensorstore/[a-z0-9_]+_ns", "ns", "tensorstore",
     "delta of any other TensorStore time counter, e.g. thread_pool_work_time_ns"),
    (r"6_tensorstore/[a-z0-9_]+", "count", "tensorstore",
     "delta of any other TensorStore counter that changed (histograms: their sample count)"),
    (r"7_memory/tracemalloc_site_[A-Za-z0-9_.]+_kib", "KiB", "tracemalloc",
     "net Python allocation growth at one of the top source lines (file_L<line>)"),
    (r"4_throughput/[a-z0-9_]+_gbps_of_[a-z_]+", "ratio", "roofline",
     "a bandwidth as a share of the probed limit (disk_write, disk_read, page_cache_read, memcpy;"
     " store_write, store_read on an object store)"),
    (r"9_other/[a-z0-9_]+_s", "s", "jax_monitoring", "an unmapped jax.monitoring duration"),
    (r"9_other/[a-z0-9_]+_count", "count", "jax_monitoring", "occurrences of an unmapped jax.monitoring event"),
    (r"9_other/[a-z0-9_]+", "value", "jax_monitoring", "the last value of an unmapped jax.monitoring scalar"),
)
_COMPILED = tuple((re.compile(p), unit) for p, unit, _, _ in PATTERNS)


def value(tag: str, x: float) -> MetricValue:
  """The MetricValue of a registered tag (unit and reduce from `TAGS`).

  Raises:
    KeyError: for a tag no table lists (a bug in the collector that asked).
  """
  spec = TAGS[tag]
  return MetricValue(x, spec.unit, spec.reduce)


def unit_of(tag: str) -> str | None:
  """The unit of `<namespace>/<metric>`, from the tables or the patterns; None if unknown."""
  spec = TAGS.get(tag)
  if spec is not None:
    return spec.unit
  for pattern, unit in _COMPILED:
    if pattern.fullmatch(tag):
      return unit
  return None


def is_host_memory_tag(tag: str) -> bool:
  """A full tag of host memory: the `rss` collector's, or the peak over the checkpoint derived from it.

  These are what a memory pass measures (engine/memory/_pass.py), and what is compared only between
  runs that measured host memory the same way.

  Example:
    >>> is_host_memory_tag("save_7_memory/host_rss_peak_diff_mib"), is_host_memory_tag("save_0_basics/time_s")
    (True, False)
  """
  key = Tag.parse(tag).key.removesuffix("_mean")
  spec = TAGS.get(key)
  return spec is not None and (spec.source == "rss" or key == "7_memory/host_peak_over_checkpoint")
