"""The jax.monitoring event table: which Orbax/JAX event feeds which tag.

Pure data. Keys are `(kind, event name)` with kind one of "event" (no value;
counted), "duration" (seconds) and "scalar" (a number). Every name that
orbax-checkpoint 0.12.8 emits during saves, loads, async saves and
CheckpointManager runs is listed, mapped or deliberately ignored with a
reason; events under `WATCHED_PREFIXES` that are not listed land in `9_other/`.

Orbax reports bandwidths as rates without their time. A rate is therefore
paired with the byte count it was computed from (`Pair`): the collector turns
each pair into seconds (bytes / rate) and sums bytes and seconds, and the
bandwidth tags are derived from those sums (`DERIVED`).
"""

from __future__ import annotations

import dataclasses

# Events outside these prefixes are not recorded at all (JAX emits many others).
WATCHED_PREFIXES = ("/jax/orbax/", "/jax/checkpoint/", "/jax/compilation_cache/", "/jax/core/compile/")


@dataclasses.dataclass(frozen=True)
class Tag:
  """The value (1 for a bare event) feeds `tag`, combined by the tag's reduce; each event
  also adds 1 to `count` when given."""

  tag: str
  count: str | None = None


@dataclasses.dataclass(frozen=True)
class Ignore:
  """Dropped on purpose, for `reason` (shown in docs/metrics.md)."""

  reason: str


@dataclasses.dataclass(frozen=True)
class Pair:
  """One side of a rate/bytes pair (see `PAIRS`).

  Attributes:
    group: the pair's name in `PAIRS`.
    role: "rate" (GiB/s) or "bytes" (GiB). For a "bytes" side with `running`,
      every event adds to a running sum that the next rate event consumes
      (Orbax reports array sizes one array at a time, then one rate).
    tag: for "bytes", the tag every event also feeds (None: only the pair).
  """

  group: str
  role: str
  tag: str | None = None
  running: bool = False


# group -> (bytes tag, seconds tag) that each completed pair adds to.
PAIRS: dict[str, tuple[str, str]] = {
    "save_total": ("5_inventory/save_total_gb", "2_save_breakdown/handler_total_s"),
    "save_blocking": ("5_inventory/save_blocking_gb", "2_save_breakdown/handler_blocking_s"),
    "load_total": ("5_inventory/load_total_gb", "3_load_breakdown/handler_total_s"),
}

_TIMESTAMP = Ignore("a wall-clock timestamp, not a quantity (the durations carry the same information)")
_PER_HOST_RATE = Ignore("equals the bytes over worker_io_s; the bandwidth is derived from the sums")


def _alias(of: str) -> Ignore:
  return Ignore(f"legacy name emitted beside {of} with the same value")


_D, _S, _E = "duration", "scalar", "event"

EVENTS: dict[tuple[str, str], Tag | Ignore | Pair] = {
    # --- save -----------------------------------------------------------------
    (_E, "/jax/orbax/write/start"): Tag("2_save_breakdown/started_count"),
    (_E, "/jax/orbax/write/async/start"): Tag("2_save_breakdown/async_started_count"),
    (_E, "/jax/orbax/write/success"): Tag("2_save_breakdown/succeeded_count"),
    (_E, "/jax/orbax/write/storage_type"): Tag("2_save_breakdown/storage_type_count"),
    (_S, "/jax/orbax/write/start_time"): _TIMESTAMP,
    (_S, "/jax/orbax/write/async/start_time"): _TIMESTAMP,
    (_S, "/jax/orbax/write/blocking_end_time"): _TIMESTAMP,
    (_S, "/jax/orbax/write/async/blocking_end_time"): _TIMESTAMP,
    (_D, "/jax/orbax/write/blocking_duration_secs"): Tag("2_save_breakdown/blocking_s"),
    (_D, "/jax/orbax/write/async/blocking_duration_secs"): Tag("2_save_breakdown/async_blocking_s"),
    (_D, "/jax/checkpoint/write/async/blocking_duration_secs"): _alias(
        "/jax/orbax/write/async/blocking_duration_secs"),
    (_D, "/jax/orbax/write/total_duration_secs"): Tag("2_save_breakdown/total_s"),
    (_D, "/jax/orbax/write/async/total_duration_secs"): Tag("2_save_breakdown/async_total_s"),
    (_D, "/jax/checkpoint/write/async/total_duration_secs"): _alias(
        "/jax/orbax/write/async/total_duration_secs"),
    (_D, "/jax/orbax/write/blocking_tree_map_duration_secs"): Tag("2_save_breakdown/tree_map_s"),
    (_D, "/jax/orbax/write/blocking_d2h_duration_secs"): Tag("2_save_breakdown/d2h_s"),
    (_D, "/jax/orbax/write/blocking_wait_prev_duration_secs"): Tag("2_save_breakdown/wait_prev_s"),
    (_D, "/jax/orbax/write/blocking_val_duration_secs"): Tag("2_save_breakdown/validation_s"),
    (_D, "/jax/orbax/write/checkpoint_start_sync_duration_secs"): Tag(
        "2_save_breakdown/checkpoint_start_sync_s"),
    (_D, "/jax/orbax/write/blocking_sync_item_duration_secs"): Tag("2_save_breakdown/blocking_sync_item_s"),
    (_D, "/jax/orbax/write/directory_creation_secs"): Tag("2_save_breakdown/directory_creation_s"),
    (_D, "/jax/orbax/write/async_directory_creation_secs"): Tag(
        "2_save_breakdown/async_directory_creation_s"),
    (_D, "/jax/orbax/write/background_directory_creation_secs"): Tag(
        "2_save_breakdown/background_directory_creation_s"),
    (_D, "/jax/orbax/write/blocking_directory_creation_secs"): Tag(
        "2_save_breakdown/blocking_directory_creation_s"),
    (_D, "/jax/orbax/write/worker/total_duration_secs"): Tag("2_save_breakdown/worker_io_s"),
    (_D, "/jax/orbax/write/background_meta_write_secs"): Tag("2_save_breakdown/metadata_write_s"),
    (_D, "/jax/checkpoint/write/async/metadata_write_duration_secs"): _alias(
        "/jax/orbax/write/background_meta_write_secs"),
    (_D, "/jax/orbax/write/background_ocdbt_merge_secs"): Tag("2_save_breakdown/ocdbt_merge_s"),
    (_D, "/jax/checkpoint/write/async/ocdbt_merge_duration_secs"): _alias(
        "/jax/orbax/write/background_ocdbt_merge_secs"),
    (_D, "/jax/orbax/write/merge_ocdbt_per_process_files_secs"): Tag(
        "2_save_breakdown/merge_ocdbt_files_s"),
    (_D, "/jax/orbax/write/background_ts_duration_secs"): Tag("2_save_breakdown/commit_s"),
    (_D, "/jax/checkpoint/write/async/commit_duration_sec"): _alias(
        "/jax/orbax/write/background_ts_duration_secs"),
    (_D, "/jax/orbax/write/background_duration_secs"): Tag("2_save_breakdown/background_s"),
    (_D, "/jax/checkpoint/write/async/thread_duration_sec"): _alias(
        "/jax/orbax/write/background_duration_secs"),
    (_D, "/jax/orbax/write/background_item_finalize_secs"): Tag("2_save_breakdown/item_finalize_s"),
    (_D, "/jax/orbax/write/finalize_duration_secs"): Tag("2_save_breakdown/finalize_s"),
    (_D, "/jax/orbax/write/background_finalize_secs"): Tag("2_save_breakdown/background_finalize_s"),
    (_S, "/jax/checkpoint/write/async/commit_future_count"): Tag("2_save_breakdown/commit_future_count"),
    (_D, "/jax/checkpoint/write/duration_since_last_checkpoint_secs"): Tag(
        "2_save_breakdown/since_last_save_s"),
    (_D, "/jax/checkpoint/write/wait_for_prev_duration_secs"): Tag("2_save_breakdown/wait_for_prev_s"),
    (_D, "/jax/checkpoint/write/remove_steps_duration_secs"): Tag("2_save_breakdown/remove_steps_s"),
    (_D, "/jax/checkpoint/write/get_old_steps_duration_secs"): Tag("2_save_breakdown/get_old_steps_s"),
    (_S, "/jax/checkpoint/write/old_steps_examined_count"): Tag(
        "2_save_breakdown/old_steps_examined_count"),
    (_D, "/jax/orbax/checkpoint_manager/standard_checkpoint_deleter/duration"): Tag(
        "2_save_breakdown/delete_old_steps_s"),
    (_D, "/jax/orbax/checkpoint_manager/time_between_consecutive_saves_secs"): Tag(
        "2_save_breakdown/between_saves_s"),
    (_S, "/jax/orbax/checkpoint_manager/continuous_checkpointing_enabled"): Tag(
        "2_save_breakdown/continuous_checkpointing"),
    # Save bandwidth and bytes.
    (_S, "/jax/orbax/write/gbytes_per_sec"): Pair("save_total", "rate"),
    (_S, "/jax/orbax/write/gbytes"): Pair("save_total", "bytes"),
    (_S, "/jax/orbax/write/blocking_gbytes_per_sec"): Pair("save_blocking", "rate"),
    (_S, "/jax/orbax/write/sharded_array_gb"): Pair(
        "save_blocking", "bytes", tag="5_inventory/sharded_array_gb", running=True),
    (_S, "/jax/orbax/write/replicated_array_gb"): Pair(
        "save_blocking", "bytes", tag="5_inventory/replicated_array_gb", running=True),
    (_S, "/jax/orbax/write/worker/io/requested/gbytes"): Tag("5_inventory/save_requested_gb"),
    (_S, "/jax/orbax/write/worker/io/requested/throughput/gbytes_per_sec"): _PER_HOST_RATE,
    (_S, "/jax/orbax/write/worker/io/raw/gbytes"): Tag("5_inventory/save_raw_gb"),
    (_S, "/jax/orbax/write/worker/io/raw/throughput/gbytes_per_sec"): _PER_HOST_RATE,
    (_S, "/jax/orbax/write/worker/io/compression_ratio"): Ignore(
        "equals save_requested_gb / save_raw_gb; derived as 5_inventory/save_compression_ratio"),
    # --- load -----------------------------------------------------------------
    (_E, "/jax/orbax/read/start"): Tag("3_load_breakdown/started_count"),
    (_E, "/jax/orbax/read/async/start"): Tag("3_load_breakdown/async_started_count"),
    (_E, "/jax/orbax/read/success"): Tag("3_load_breakdown/succeeded_count"),
    (_E, "/jax/orbax/read/storage_type"): Tag("3_load_breakdown/storage_type_count"),
    (_E, "/jax/orbax/checkpoint/deserialize/shard_shape_changed"): Tag(
        "3_load_breakdown/shard_shape_changed_count"),
    (_D, "/jax/orbax/read/blocking_duration_secs"): Tag("3_load_breakdown/blocking_s"),
    (_D, "/jax/orbax/read/async/blocking_duration_secs"): Tag("3_load_breakdown/async_blocking_s"),
    (_D, "/jax/orbax/read/total_duration_secs"): Tag("3_load_breakdown/total_s"),
    (_D, "/jax/orbax/read/async/total_duration_secs"): Tag("3_load_breakdown/async_total_s"),
    (_D, "/jax/orbax/read/worker/total_duration_secs"): Tag("3_load_breakdown/worker_io_s"),
    (_D, "/jax/checkpoint/read/primary_replica_deserialization_duration_secs"): Tag(
        "3_load_breakdown/primary_deserialization_s"),
    (_D, "/jax/checkpoint/read/broadcast_duration_secs"): Tag("3_load_breakdown/broadcast_s"),
    (_D, "/jax/checkpoint/read/load_all_step_metadata_duration_secs"): Tag(
        "3_load_breakdown/step_metadata_s"),
    (_S, "/jax/checkpoint/read/gbytes_per_sec"): Pair("load_total", "rate"),
    (_S, "/jax/checkpoint/read/gbytes"): Pair("load_total", "bytes"),
    (_S, "/jax/orbax/read/worker/io/requested/gbytes"): Tag("5_inventory/load_requested_gb"),
    (_S, "/jax/orbax/read/worker/io/requested/throughput/gbytes_per_sec"): _PER_HOST_RATE,
    (_S, "/jax/orbax/read/worker/io/raw/gbytes"): Tag("5_inventory/load_raw_gb"),
    (_S, "/jax/orbax/read/worker/io/raw/throughput/gbytes_per_sec"): _PER_HOST_RATE,
    (_S, "/jax/orbax/read/worker/io/compression_ratio"): Ignore(
        "equals load_requested_gb / load_raw_gb; derived as 5_inventory/load_compression_ratio"),
    (_D, "/jax/checkpoint/sync_global_devices_duration_sec"): Tag(
        "8_jax/orbax_barrier_s", count="8_jax/orbax_barrier_count"),
    # --- Orbax object lifecycle -------------------------------------------------
    (_E, "/jax/orbax/array_handler/init"): Tag("8_jax/orbax_array_handler_init_count"),
    (_E, "/jax/orbax/pytree_checkpoint_handler/init/ocdbt"): Tag(
        "8_jax/orbax_pytree_handler_ocdbt_init_count"),
    (_E, "/jax/orbax/checkpointer/init"): Tag("8_jax/orbax_checkpointer_init_count"),
    (_E, "/jax/orbax/async_checkpointer/init"): Tag("8_jax/orbax_async_checkpointer_init_count"),
    (_E, "/jax/orbax/checkpoint_manager/init"): Tag("8_jax/orbax_checkpoint_manager_init_count"),
    (_E, "/jax/orbax/deprecation/checkpointer_legacy_args"): Tag("8_jax/orbax_deprecation_count"),
    (_E, "/jax/orbax/deprecation/inferred_structure"): Tag("8_jax/orbax_deprecation_count"),
    # --- JAX compilation ----------------------------------------------------------
    (_E, "/jax/compilation_cache/cache_hits"): Tag("8_jax/cache_hits_count"),
    (_E, "/jax/compilation_cache/cache_misses"): Tag("8_jax/cache_misses_count"),
    (_E, "/jax/compilation_cache/compile_requests_use_cache"): Tag(
        "8_jax/compile_requests_use_cache_count"),
    (_E, "/jax/compilation_cache/tasks_using_cache"): Tag("8_jax/tasks_using_cache_count"),
    (_E, "/jax/compilation_cache/task_disabled_cache"): Tag("8_jax/task_disabled_cache_count"),
    (_D, "/jax/compilation_cache/cache_retrieval_time_sec"): Tag("8_jax/cache_retrieval_s"),
    (_D, "/jax/compilation_cache/compile_time_saved_sec"): Tag("8_jax/compile_time_saved_s"),
    (_D, "/jax/core/compile/jaxpr_trace_duration"): Tag("8_jax/trace_s"),
    (_D, "/jax/core/compile/jaxpr_to_mlir_module_duration"): Tag("8_jax/lower_s"),
    (_D, "/jax/core/compile/backend_compile_duration"): Tag("8_jax/backend_compile_s"),
    (_S, "/jax/core/compile/jaxpr_trace_duration"): _TIMESTAMP,
    (_S, "/jax/core/compile/jaxpr_to_mlir_module_duration"): _TIMESTAMP,
    (_S, "/jax/core/compile/backend_compile_duration"): _TIMESTAMP,
}


def other_tag(kind: str, name: str) -> str:
  """The `9_other/` tag of an event that `EVENTS` does not list.

  Example:
    >>> other_tag("duration", "/jax/orbax/write/new_stage_secs")
    '9_other/orbax_write_new_stage_secs_s'
  """
  flat = "".join(c if c.isalnum() else "_" for c in name.removeprefix("/jax/").lower()).strip("_")
  suffix = {"duration": "_s", "event": "_count"}.get(kind, "")
  return f"9_other/{flat}{suffix}"
