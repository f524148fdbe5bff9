"""Metric directions: one rule per namespace, derived from unit and name."""

from __future__ import annotations

import pytest

from ckptbench.stats import NAMESPACES, Direction, is_headline, metric_direction, split_tag

LOWER, HIGHER, NEUTRAL = Direction.LOWER, Direction.HIGHER, Direction.NEUTRAL

# (tag, unit, direction): every namespace, with its times, memory, rates and counts.
CASES = [
    ("save_0_basics/time_s", "s", LOWER),
    ("save_0_basics/host_rss_diff_mib", "MiB", LOWER),
    ("save_0_basics/count", "count", NEUTRAL),
    ("save_0_basics/time_s_mean", "s", LOWER),
    ("save_2_save_breakdown/blocking_s", "s", LOWER),
    ("save_2_save_breakdown/commit_future_count", "count", NEUTRAL),
    ("save_2_save_breakdown/duration_since_last_save_s", "s", NEUTRAL),
    ("load_3_load_breakdown/worker_io_s", "s", LOWER),
    ("load_3_load_breakdown/primary_deserialization_s", "s", LOWER),
    ("save_4_throughput/save_total_gbps", "GiB/s", HIGHER),
    ("load_4_throughput/load_total_gbps_of_disk_read", "ratio", HIGHER),
    ("save_5_inventory/total_gib", "GiB", NEUTRAL),
    ("save_5_inventory/file_count", "count", NEUTRAL),
    ("save_5_inventory/small_file_share", "ratio", NEUTRAL),
    ("save_6_tensorstore/kvstore_file_bytes_written", "bytes", NEUTRAL),
    ("save_6_tensorstore/kvstore_file_write", "count", NEUTRAL),
    ("save_6_tensorstore/kvstore_file_write_latency_ms", "ms", LOWER),
    ("save_7_memory/host_rss_peak_diff_mib", "MiB", LOWER),
    ("save_7_memory/device_peak_diff_gib", "GiB", LOWER),
    ("save_7_memory/jax_live_arrays_count_delta", "count", NEUTRAL),
    ("save_8_jax/cache_retrieval_s", "s", LOWER),
    ("save_8_jax/compile_time_saved_s", "s", HIGHER),
    ("save_8_jax/cache_hit_rate", "ratio", HIGHER),
    ("save_8_jax/cache_hits_count", "count", NEUTRAL),
    ("save_9_other/jax_orbax_write_something_s", "s", LOWER),
    ("save_9_other/jax_orbax_some_event", "", NEUTRAL),
    ("save_9_other/bytes_verified", "bytes", NEUTRAL),
    ("save_9_other/copy_rate", "MiB/s", HIGHER),
]


@pytest.mark.parametrize("tag,unit,direction", CASES)
def test_direction(tag, unit, direction):
  assert metric_direction(tag, unit) == direction


def test_every_namespace_has_cases():
  covered = {split_tag(tag)[1] for tag, _, _ in CASES}
  assert covered == set(NAMESPACES)


@pytest.mark.parametrize(
    "tag,expected",
    [
        ("save_restore_4_throughput/save_total_gbps", ("save_restore", "4_throughput", "save_total_gbps")),
        ("step_1_2_save_breakdown/commit_s", ("step_1", "2_save_breakdown", "commit_s")),
        ("0_basics/time_s", ("", "0_basics", "time_s")),
        ("not a tag", ("", "", "not a tag")),
    ],
)
def test_split_tag(tag, expected):
  assert split_tag(tag) == expected


def test_unknown_tag_is_neutral_unless_the_unit_says_otherwise():
  assert metric_direction("weird", "count") == NEUTRAL
  assert metric_direction("weird", "s") == LOWER
  assert metric_direction("weird", "GiB/s") == HIGHER


@pytest.mark.parametrize(
    "tag,unit,headline",
    [
        ("save_0_basics/time_s", "s", True),
        ("save_0_basics/time_s_mean", "s", False),
        ("save_0_basics/host_rss_diff_mib", "MiB", False),
        ("save_2_save_breakdown/blocking_s", "s", False),
        ("save_4_throughput/save_total_gbps", "GiB/s", True),
        ("save_4_throughput/save_total_gbps_of_disk_write", "ratio", False),
        ("save_7_memory/host_rss_peak_diff_mib", "MiB", True),
        ("save_7_memory/jax_live_arrays_count_delta", "count", False),
        ("save_5_inventory/total_gib", "GiB", False),
    ],
)
def test_headline(tag, unit, headline):
  assert is_headline(tag, unit) is headline
