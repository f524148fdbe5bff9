"""The roofline probe, its cache, the shares it adds, and page-cache eviction."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess

import pytest

from ckptbench.api import MetricEntry
from ckptbench.errors import CkptbenchError
from ckptbench.metrics import (
    StorageProbe,
    cached_probe,
    evict_from_page_cache,
    post_run_tags,
    probe_storage,
    roofline_shares,
)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
  path = tmp_path / "cache"
  monkeypatch.setenv("CKPTBENCH_CACHE_DIR", str(path))
  return path


def test_probe_measures_three_times_and_caches_a_steady_result(tmp_path, cache_dir):
  target = tmp_path / "disk"
  target.mkdir()
  probe = probe_storage(target, size_mib=4, max_spread=float("inf"))  # any spread counts as steady here
  assert probe.size_bytes == 4 << 20 and probe.repeats == 3
  for value in (probe.disk_write_gbps, probe.page_cache_read_gbps, probe.memcpy_gbps):
    assert 0 < value < 10_000
  assert set(probe.spread) >= {"disk_write", "page_cache_read", "memcpy"}
  assert all(v >= 0 for v in probe.spread.values())
  assert probe.cold_method in ("drop_caches", "fadvise")
  assert probe.disk_read_gbps > 0
  assert list(target.iterdir()) == []  # the probe files are gone
  cached = json.loads((cache_dir / "roofline.json").read_text())
  assert list(cached.values()) == [dataclasses.asdict(probe)]
  assert probe_storage(target, size_mib=4, max_spread=float("inf")) == probe  # served from the cache
  again = probe_storage(target, size_mib=4, refresh=True, max_spread=float("inf"))
  assert again.measured_at >= probe.measured_at


def test_an_unsteady_probe_is_kept_for_an_hour_then_measured_again(tmp_path, cache_dir, caplog):
  target = tmp_path / "disk"
  target.mkdir()
  # Real measurements always differ a little: with no spread allowed, none is steady.
  first = probe_storage(target, size_mib=4, max_spread=0.0)
  assert first.repeats == 3 and not first.steady(0.0)
  assert "unsteady" in caplog.text and "used for 60 minutes, then measured again" in caplog.text
  assert probe_storage(target, size_mib=4, max_spread=0.0) == first  # a busy machine probes once an hour
  assert cached_probe(target, size_mib=4, max_spread=0.0) == first  # and a run uses it as it is
  cache = cache_dir / "roofline.json"
  entries = json.loads(cache.read_text())
  for entry in entries.values():  # measured an hour ago
    entry["measured_at"] = "2020-01-01T00:00:00+00:00"
  cache.write_text(json.dumps(entries))
  assert cached_probe(target, size_mib=4, max_spread=0.0) is None
  second = probe_storage(target, size_mib=4, max_spread=0.0)
  assert second.measured_at > "2020" and second != first  # measured again


def test_an_unsteady_probe_never_replaces_a_steady_one(tmp_path, cache_dir, caplog):
  target = tmp_path / "disk"
  target.mkdir()
  steady = probe_storage(target, size_mib=4, max_spread=float("inf"))
  cache = cache_dir / "roofline.json"
  entries = json.loads(cache.read_text())
  for entry in entries.values():  # kept steady at any allowed spread below
    entry["spread"] = {name: 0.0 for name in entry["spread"]}
  cache.write_text(json.dumps(entries))
  unsteady = probe_storage(target, size_mib=4, refresh=True, max_spread=0.0)  # real readings differ: unsteady
  assert not unsteady.steady(0.0) and "used for this run only" in caplog.text
  assert json.loads(cache.read_text()) == entries
  assert cached_probe(target, size_mib=4, max_spread=0.0).measured_at == steady.measured_at


def test_a_cached_probe_from_before_repeats_is_measured_again(tmp_path, cache_dir):
  target = tmp_path / "disk"
  target.mkdir()
  probe = probe_storage(target, size_mib=4, max_spread=float("inf"))
  cache = cache_dir / "roofline.json"
  entries = json.loads(cache.read_text())
  for entry in entries.values():  # the old format: one measurement, no spread
    entry.pop("repeats"), entry.pop("spread")
    entry["disk_write_gbps"] = 0.001
  cache.write_text(json.dumps(entries))
  assert probe_storage(target, size_mib=4, max_spread=float("inf")).disk_write_gbps != 0.001
  assert probe.repeats == 3


def test_probe_of_a_missing_directory_is_a_user_error(tmp_path, cache_dir):
  with pytest.raises(CkptbenchError, match="not a directory"):
    probe_storage(tmp_path / "nope")


def test_roofline_shares_divide_each_bandwidth_by_its_limit():
  probe = StorageProbe(
      mount="/", device="/dev/x", fstype="ext4", size_bytes=1 << 20, disk_write_gbps=2.0,
      disk_read_gbps=4.0, cold_method="fadvise", page_cache_read_gbps=10.0, memcpy_gbps=20.0,
      host="h", measured_at="2026-01-01T00:00:00+00:00")
  tags = {
      "save_4_throughput/save_total_gbps": MetricEntry(1.0, "GiB/s"),
      "save_4_throughput/save_blocking_gbps": MetricEntry(5.0, "GiB/s"),
      "load_4_throughput/load_total_gbps": MetricEntry(2.0, "GiB/s"),
      "load_0_basics/time_s": MetricEntry(1.0, "s"),
  }
  assert roofline_shares(tags, probe) == {
      "save_4_throughput/save_total_gbps_of_disk_write": MetricEntry(0.5, "ratio"),
      "save_4_throughput/save_blocking_gbps_of_memcpy": MetricEntry(0.25, "ratio"),
      "load_4_throughput/load_total_gbps_of_disk_read": MetricEntry(0.5, "ratio"),
      "load_4_throughput/load_total_gbps_of_page_cache_read": MetricEntry(0.2, "ratio"),
  }


@pytest.mark.skipif(shutil.which("fincore") is None, reason="needs util-linux fincore")
def test_fadvise_eviction_empties_the_page_cache_of_the_files(tmp_path):
  data = tmp_path / "ckpt" / "d"
  data.mkdir(parents=True)
  (data / "chunk").write_bytes(os.urandom(1 << 20))
  (data / "chunk").read_bytes()

  def resident_pages() -> int:
    out = subprocess.run(["fincore", "--noheadings", "--raw", "--output", "PAGES", str(data / "chunk")],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return int(out.stdout.split()[0])

  assert resident_pages() > 0
  assert evict_from_page_cache(tmp_path / "ckpt", method="fadvise") == "fadvise"
  assert resident_pages() == 0


def test_unknown_eviction_method_names_the_choices(tmp_path):
  with pytest.raises(ValueError, match="auto, drop_caches, fadvise"):
    evict_from_page_cache(tmp_path, method="magic")


@pytest.mark.slow
def test_probe_cli_prints_json_and_rejects_bad_input(tmp_path, cli, cache_dir):
  ok = cli("probe", str(tmp_path), "--size-mib", "2", "--no-cache", "--json")
  assert ok.returncode == 0, ok.stderr
  assert json.loads(ok.stdout)["size_bytes"] == 2 << 20
  assert not cache_dir.exists()
  bad = cli("probe", str(tmp_path / "missing"))
  assert bad.returncode == 2
  assert bad.stderr.strip().startswith("ckptbench: error: cannot probe") and "Traceback" not in bad.stderr


def test_post_run_tags_add_inventory_and_shares(tmp_path):
  (tmp_path / "ckpt" / "ocdbt.process_0" / "d").mkdir(parents=True)
  (tmp_path / "ckpt" / "ocdbt.process_0" / "d" / "blob").write_bytes(b"x" * (2 << 20))
  (tmp_path / "ckpt" / "_METADATA").write_text("{}")
  probe = StorageProbe(
      mount="/", device="d", fstype="ext4", size_bytes=1, disk_write_gbps=4.0, disk_read_gbps=None,
      cold_method="none", page_cache_read_gbps=8.0, memcpy_gbps=16.0, host="h", measured_at="t")
  tags = {"save_4_throughput/save_total_gbps": MetricEntry(1.0, "GiB/s")}
  new, inventory = post_run_tags(tags, tmp_path, probe=probe)
  assert new["checkpoint_5_inventory/file_count"].value == 2
  assert new["checkpoint_5_inventory/small_file_share"].value == 0.5
  assert new["checkpoint_5_inventory/total_gb"].value == pytest.approx((2 * 2**20 + 2) / 2**30)
  assert new["save_4_throughput/save_total_gbps_of_disk_write"].value == 0.25
  assert inventory["layout"] == "OCDBT + Orbax metadata"
  assert inventory["largest_file"] == "ckpt/ocdbt.process_0/d/blob"
  # A test_fn's own inventory wins over the scan, and survives the JSON round trip.
  again, same = post_run_tags(tags, tmp_path / "elsewhere", inventory=json.loads(json.dumps(inventory)))
  assert same == inventory and again["checkpoint_5_inventory/file_count"].value == 2
