"""What `scale` reads from one host count's records: totals, the primary's and the busiest host's."""

from __future__ import annotations

import pytest

from ckptbench.api import MetricEntry, RunRecord
from ckptbench.engine.scaling._metrics import COUNT, RATE, TIME, host_count_metrics, top_level_ops


def _record(host, repeat, puts, save_s, *, warmup=False, hosts=2):
  metrics = {tag: MetricEntry(**entry) for tag, entry in {
      "checkpoint_5_inventory/store_put_count": {"value": puts, "unit": "count"},
      "checkpoint_5_inventory/store_get_count": {"value": 10 * (host + 1), "unit": "count"},
      "save_0_basics/time_s": {"value": save_s, "unit": "s"},
      "save_blocking_0_basics/time_s": {"value": save_s / 2, "unit": "s"},
      "save_6_tensorstore/kvstore_bytes_written": {"value": 1000 + host, "unit": "B"},
      "save_8_jax/orbax_barrier_count": {"value": 7, "unit": "count"},
      "save_2_save_breakdown/metadata_write_s": {"value": 0.5 if host == 0 else 0.0, "unit": "s"},
      "save_7_memory/host_rss_peak_mib": {"value": 300 + host, "unit": "MiB"},
  }.items()}
  inventory = {"file_count": 13, "metadata_files": 7, "metadata_bytes": 10669, "total_bytes": 9_000_000}
  return RunRecord(suite="s", benchmark="B", key="k", generator="g", options={}, varying={}, mesh=None,
                   checkpoint_config=None, repeat=repeat, warmup=warmup, host=host, num_hosts=hosts, path="p",
                   started_at="t", duration_s=1.0, metrics=metrics, inventory=inventory)  # fmt: skip


def test_a_host_counts_metrics_combine_hosts_then_take_the_median_over_repeats():
  records = [
      _record(0, 0, 15, 3.0), _record(1, 0, 2, 4.0),
      _record(0, 1, 15, 5.0), _record(1, 1, 2, 1.0),
      _record(0, 2, 15, 9.0), _record(1, 2, 2, 9.5),
      _record(0, 0, 99, 99.0, warmup=True), _record(1, 0, 99, 99.0, warmup=True),
  ]  # fmt: skip
  assert top_level_ops(records) == ["save"]
  m = host_count_metrics(records)["B"]
  assert (m["requests_put_total"].value, m["requests_put_primary"].value, m["requests_put_max_host"].value) == (17, 15, 15)
  assert m["requests_get_max_host"].value == 20 and m["requests_max_host"].value == 25  # host 0: 15 + 10; host 1: 2 + 20
  assert m["requests_put_total"].kind == COUNT and m["save_time_s"].kind == TIME
  assert m["save_time_s"].value == 5.0  # slowest host per repeat: 4, 5, 9.5; their median
  assert m["save_time_s"].repeat_spread == pytest.approx((9.5 - 4) / 5) and m["requests_put_total"].repeat_spread == 0
  assert m["primary_extra_requests"].value == 3  # host 0: 15 + 10 requests, host 1: 2 + 20
  assert (m["files"].value, m["metadata_files"].value, m["metadata_bytes"].value) == (13, 7, 10669)
  assert m["array_bytes_written_spread"].value == pytest.approx(1001 / 1000)
  assert m["barriers_save"].value == 7 and m["primary_commit_s"].value == 0.5
  assert m["primary_rss_peak_mib"].value == 300
  assert "save_blocking_time_s" not in m
  # Steps between hosts do not exist with one process: their laws start at 2 hosts.
  cross_host = {name for name, v in m.items() if v.first_hosts == 2}
  assert cross_host == {"barriers_save", "primary_extra_requests"}


def test_a_run_missing_a_hosts_record_is_refused():
  with pytest.raises(ValueError, match=r"records of hosts \[0\] of 2"):
    host_count_metrics([_record(0, 0, 15, 3.0)])


def _counted(host, repeat, *, get, get_distinct, hosts=2, commit=None):
  """A host's record with the link's counts of the whole run and of its save block."""
  entries = {"save_0_basics/time_s": (2.0, "s"), "load_0_basics/time_s": (1.0, "s")}
  for prefix in ("checkpoint", "save"):
    entries.update({f"{prefix}_5_inventory/store_get_count": (get, "count"),
                    f"{prefix}_5_inventory/store_get_distinct_count": (get_distinct, "count"),
                    f"{prefix}_5_inventory/store_list_count": (3, "count"),
                    f"{prefix}_5_inventory/store_list_distinct_count": (2, "count")})  # fmt: skip
  if commit:
    entries.update({"save_5_inventory/store_commit_get_count": (commit[0], "count"),
                    "save_5_inventory/store_commit_put_count": (commit[1], "count"),
                    "save_5_inventory/store_commit_request_s": (commit[2], "s"),
                    "save_5_inventory/store_commit_distinct_count": (commit[0] + commit[1] - 1, "count"),
                    "save_2_save_breakdown/metadata_write_s": (0.25, "s"),
                    "save_2_save_breakdown/ocdbt_merge_s": (0.5, "s")})  # fmt: skip
  return RunRecord(suite="s", benchmark="B", key="k", generator="g", options={}, varying={}, mesh=None,
                   checkpoint_config=None, repeat=repeat, warmup=False, host=host, num_hosts=hosts, path="p",
                   started_at="t", duration_s=1.0, metrics={t: MetricEntry(v, u) for t, (v, u) in entries.items()},
                   inventory={})  # fmt: skip


def test_distinct_requests_are_exact_while_repeated_reads_become_a_rate_and_the_commit_is_split_out():
  # Two repeats: the polls differ (12 vs 16 GETs on the primary), the distinct objects do not.
  records = [_counted(0, 0, get=12, get_distinct=8, commit=(4, 2, 0.3)), _counted(1, 0, get=9, get_distinct=7),
             _counted(0, 1, get=16, get_distinct=8, commit=(4, 2, 0.5)), _counted(1, 1, get=9, get_distinct=7)]  # fmt: skip
  m = host_count_metrics(records)["B"]
  assert m["requests_get_total"].value == 23 and m["requests_get_total"].repeat_spread == pytest.approx(4 / 23)
  assert (m["requests_get_distinct_total"].value, m["requests_get_distinct_primary"].value) == (15, 8)
  assert m["requests_get_distinct_total"].repeat_spread == 0 and m["requests_get_distinct_total"].kind == COUNT
  assert m["primary_extra_distinct_requests_save"].value == 1  # 8 + 2 distinct on the primary, 7 + 2 on host 1
  # Repeated reads (GETs and LISTs beyond the distinct ones) per second of the save on its slowest host.
  assert m["repeat_reads_save_per_s"].kind == RATE
  assert m["repeat_reads_save_per_s"].value == pytest.approx(((4 + 1) + (2 + 1) + (8 + 1) + (2 + 1)) / 2 / 2)
  assert (m["primary_commit_requests"].value, m["primary_commit_requests_get"].value) == (6, 4)
  assert m["primary_commit_distinct_requests"].value == 5 and m["primary_commit_distinct_requests"].repeat_spread == 0
  assert m["primary_commit_request_s"].value == pytest.approx(0.4) and m["primary_commit_request_s"].kind == TIME
  assert m["primary_commit_s"].value == 0.75  # v1's save: its _METADATA write and the OCDBT merge (no finalize_s)
