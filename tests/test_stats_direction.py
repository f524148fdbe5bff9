"""Metric directions: one rule per namespace, derived from unit and name."""

from __future__ import annotations

import pytest

from ckptbench.api._tag_table import NAMESPACES, TAGS
from ckptbench.api import JUDGED, Tag, is_judged
from ckptbench.stats import Direction, metric_direction

LOWER, HIGHER, NEUTRAL = Direction.LOWER, Direction.HIGHER, Direction.NEUTRAL

# (tag, unit, direction): every namespace, with its times, memory, rates and counts.
CASES = [
    ("save_0_basics/time_s", "s", LOWER),
    ("save_0_basics/host_rss_diff_mib", "MiB", LOWER),
    ("save_0_basics/count", "count", NEUTRAL),
    ("save_0_basics/time_s_mean", "s", LOWER),
    ("save_2_save_breakdown/blocking_s", "s", LOWER),
    ("save_2_save_breakdown/commit_future_count", "count", NEUTRAL),
    ("save_2_save_breakdown/since_last_save_s", "s", NEUTRAL),
    ("save_2_save_breakdown/between_saves_s", "s", NEUTRAL),
    ("save_2_save_breakdown/continuous_checkpointing", "bool", NEUTRAL),
    ("load_3_load_breakdown/worker_io_s", "s", LOWER),
    ("load_3_load_breakdown/primary_deserialization_s", "s", LOWER),
    ("load_3_load_breakdown/shard_shape_changed_count", "count", NEUTRAL),
    ("save_4_throughput/save_total_gbps", "GiB/s", HIGHER),
    ("load_4_throughput/load_total_gbps_of_disk_read", "ratio", HIGHER),
    ("save_5_inventory/total_gb", "GiB", NEUTRAL),
    ("save_5_inventory/file_count", "count", NEUTRAL),
    ("save_5_inventory/small_file_share", "ratio", NEUTRAL),
    ("save_6_tensorstore/kvstore_bytes_written", "bytes", NEUTRAL),
    ("save_6_tensorstore/kvstore_writes", "count", NEUTRAL),
    ("save_6_tensorstore/kvstore_write_latency_ns", "ns", LOWER),
    ("save_6_tensorstore/cache_hit_rate", "ratio", HIGHER),
    ("save_7_memory/host_rss_peak_diff_mib", "MiB", LOWER),
    ("save_7_memory/device_peak_diff_gb", "GiB", LOWER),
    ("save_7_memory/jax_live_arrays_count_delta", "count", NEUTRAL),
    ("save_8_jax/cache_retrieval_s", "s", LOWER),
    ("save_8_jax/compile_time_saved_s", "s", HIGHER),
    ("save_8_jax/cache_hit_rate", "ratio", HIGHER),
    ("save_8_jax/cache_hits_count", "count", NEUTRAL),
    ("save_9_other/jax_orbax_write_something_s", "s", LOWER),
    ("save_9_other/jax_orbax_some_scalar", "value", NEUTRAL),
    ("save_9_other/jax_orbax_some_event_count", "count", NEUTRAL),
]


@pytest.mark.parametrize("tag,unit,direction", CASES)
def test_direction(tag, unit, direction):
  assert metric_direction(tag, unit) == direction


def test_every_namespace_has_cases():
  covered = {Tag.parse(tag).namespace for tag, _, _ in CASES}
  assert covered == set(NAMESPACES)


def test_every_registered_tag_gets_the_direction_of_its_kind():
  for tag, spec in TAGS.items():
    full = f"save_{tag}"
    direction = metric_direction(full, spec.unit)
    namespace = tag.partition("/")[0]
    if namespace == "5_inventory" or spec.unit == "count":
      assert direction == NEUTRAL, tag
    elif spec.unit == "GiB/s":
      assert direction == HIGHER, tag
    elif spec.unit == "s" and not any(w in tag for w in ("since_", "between_", "_saved_")):
      assert direction == LOWER, tag


def test_unknown_tag_is_judged_by_its_unit_alone():
  assert metric_direction("weird", "count") == NEUTRAL
  assert metric_direction("weird", "s") == LOWER
  assert metric_direction("weird", "GiB/s") == HIGHER
  assert metric_direction("weird", "MiB") == NEUTRAL


@pytest.mark.parametrize(
    "tag,judged",
    [
        ("save_0_basics/time_s", True),
        ("save_blocking_0_basics/time_s", True),  # the time the caller waited: an answer of its own
        ("save_background_0_basics/time_s", False),  # part of the save
        ("verify_0_basics/time_s", False),
        ("save_0_basics/time_s_mean", False),
        ("save_0_basics/host_rss_diff_mib", False),
        ("save_2_save_breakdown/blocking_s", False),
        ("save_4_throughput/save_total_gbps", True),
        ("load_4_throughput/load_total_gbps", True),
        ("save_background_4_throughput/save_total_gbps", False),  # repeats the save's
        ("save_4_throughput/save_blocking_gbps", False),  # bytes over the blocked time: no bandwidth
        ("save_4_throughput/save_per_host_raw_gbps", False),
        ("save_4_throughput/save_total_gbps_of_disk_write", False),
        ("save_7_memory/host_rss_peak_diff_mib", True),
        ("save_blocking_7_memory/host_rss_peak_diff_mib", False),
        ("save_7_memory/device_peak_diff_gb", True),
        ("save_7_memory/device_peak_gb", False),
        ("save_7_memory/host_rss_peak_mib", False),
        ("save_7_memory/tracemalloc_peak_diff_mib", False),  # Python's allocations: shown, not judged
        ("save_7_memory/jax_live_arrays_count_delta", False),
        ("save_5_inventory/total_gb", False),
        ("0_basics/time_s", False),  # no operation
    ],
)
def test_what_a_suite_is_judged_on(tag, judged):
  assert is_judged(tag) is judged


def test_every_judged_key_is_in_the_tag_table_with_a_direction():
  for row in JUDGED:
    spec = TAGS[row.key]
    assert metric_direction(f"save_{row.key}", spec.unit) != NEUTRAL, row.key
