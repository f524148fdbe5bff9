"""The metric suite on real Orbax saves and loads (8 simulated CPU devices, tiny arrays)."""

from __future__ import annotations

import pathlib

import jax
import numpy as np
import pytest
from orbax.checkpoint import v1 as ocp

from ckptbench.api import Metrics
from ckptbench.metrics import scan_inventory, unit_of
from ckptbench.api._tags import Tag

_GIB = float(1 << 30)
SHAPE = (64, 256)  # float32: 64 KiB, 8 KiB per device
ARRAY_BYTES = SHAPE[0] * SHAPE[1] * 4


def _tree():
  mesh = jax.make_mesh((8,), ("x",))
  sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
  rng = np.random.default_rng(0)
  host = rng.standard_normal(SHAPE).astype(np.float32)
  return {"w": jax.device_put(host, sharding)}, sharding


def _abstract(tree):
  return jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), tree)


def _files_on_disk(path: pathlib.Path) -> tuple[int, int]:
  sizes = [p.stat().st_size for p in path.rglob("*") if p.is_file()]
  return sum(sizes), len(sizes)


# (async, use_ocdbt, use_compression): every flag both on and off.
CASES = [(False, True, True), (False, False, False), (True, True, False), (True, False, True)]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: "async={} ocdbt={} compress={}".format(*c))
def round_trip(request, tmp_path_factory):
  use_async, use_ocdbt, use_compression = request.param
  tree, _ = _tree()
  path = tmp_path_factory.mktemp("ckpt") / "ckpt"
  ctx = ocp.Context()
  ctx.array.saving.use_ocdbt = use_ocdbt
  ctx.array.saving.use_zarr3 = True
  ctx.array.saving.use_compression = use_compression
  metrics = Metrics()
  with ctx:
    with metrics.measure("save"):
      if use_async:
        with metrics.measure("save_blocking"):
          response = ocp.save_async(path, tree)
        with metrics.measure("save_background"):
          response.result()
      else:
        ocp.save(path, tree)
    with metrics.measure("load"):
      restored = ocp.load(path, _abstract(tree))
  np.testing.assert_array_equal(np.asarray(restored["w"]), np.asarray(tree["w"]))
  return request.param, path, metrics.to_dict()


def test_save_and_load_throughput_are_bytes_over_time(round_trip):
  _, _, tags = round_trip
  for op, breakdown in (("save", "2_save_breakdown"), ("load", "3_load_breakdown")):
    gib = tags[f"{op}_5_inventory/{op}_total_gb"].value
    seconds = tags[f"{op}_{breakdown}/handler_total_s"].value
    gbps = tags[f"{op}_4_throughput/{op}_total_gbps"]
    assert gbps.unit == "GiB/s"
    assert gib == pytest.approx(ARRAY_BYTES / _GIB)
    assert gbps.value == pytest.approx(gib / seconds, rel=1e-9)
    # Orbax's window lies inside the block, so its bandwidth is at least bytes / block time.
    block_s = tags[f"{op}_0_basics/time_s"].value
    assert seconds <= block_s * 1.01
    assert gbps.value >= gib / block_s * 0.99


def test_headline_stage_tags_exist(round_trip):
  (use_async, _, _), _, tags = round_trip
  assert tags["load_3_load_breakdown/total_s"].value > 0
  assert tags["load_3_load_breakdown/worker_io_s"].unit == "s"
  assert tags["save_2_save_breakdown/worker_io_s"].value > 0
  if use_async:
    assert tags["save_2_save_breakdown/async_blocking_s"].value > 0
    assert tags["save_2_save_breakdown/async_total_s"].value >= tags[
        "save_2_save_breakdown/async_blocking_s"].value
  else:
    assert tags["save_2_save_breakdown/total_s"].value >= tags["save_2_save_breakdown/blocking_s"].value
  assert tags["save_4_throughput/save_blocking_gbps"].value > 0
  assert tags["save_5_inventory/sharded_array_gb"].value == pytest.approx(ARRAY_BYTES / _GIB)


def test_nested_blocks_both_record(round_trip):
  (use_async, _, _), _, tags = round_trip
  if not use_async:  # a sync save is one block: no inner blocks, nothing split
    assert not any(tag.startswith(("save_blocking_", "save_background_")) for tag in tags)
    return
  # The inner blocks' events are in the outer block too, and split between the inner ones.
  assert tags["save_blocking_2_save_breakdown/async_blocking_s"] == tags[
      "save_2_save_breakdown/async_blocking_s"]
  assert "save_background_4_throughput/save_total_gbps" in tags
  assert "save_blocking_4_throughput/save_total_gbps" not in tags  # committed after the block
  inner = tags["save_blocking_0_basics/time_s"].value + tags["save_background_0_basics/time_s"].value
  assert tags["save_0_basics/time_s"].value >= inner


def test_tensorstore_counts_the_written_bytes(round_trip):
  (_, _, use_compression), _, tags = round_trip
  written = tags["save_6_tensorstore/kvstore_bytes_written"]
  assert written.unit == "bytes"
  if not use_compression:
    assert written.value >= ARRAY_BYTES
  assert tags["load_6_tensorstore/kvstore_bytes_read"].value > 0
  assert tags["save_6_tensorstore/kvstore_writes"].value >= 1


def test_inventory_matches_the_files_on_disk(round_trip):
  (_, use_ocdbt, use_compression), path, _ = round_trip
  inventory = scan_inventory(path)
  total, count = _files_on_disk(path)
  assert (inventory.total_bytes, inventory.file_count) == (total, count)
  metrics = inventory.to_metrics()
  assert metrics["5_inventory/total_gb"].value == pytest.approx(total / _GIB)
  assert metrics["5_inventory/small_file_share"].value == 1.0  # every file of a 64 KiB tree is small
  assert ("OCDBT" in inventory.layouts) == use_ocdbt
  assert ("Zarr v3" in inventory.layouts) == (not use_ocdbt)
  assert "Orbax metadata" in inventory.layouts
  if not use_compression:
    assert inventory.largest_file_bytes >= (ARRAY_BYTES if use_ocdbt else ARRAY_BYTES // 8)


def test_every_tag_has_a_registered_namespace_and_unit(round_trip):
  _, _, tags = round_trip
  for tag, entry in tags.items():
    key = Tag.parse(tag).key.removesuffix("_mean")
    assert unit_of(key) == entry.unit, tag


def test_repeated_block_reports_total_bytes_over_total_time(tmp_path):
  tree, _ = _tree()
  metrics = Metrics()
  for i in range(2):
    with metrics.measure("save", ["time", "jax_monitoring"]):
      ocp.save(tmp_path / f"c{i}", tree)
  tags = metrics.to_dict()
  assert tags["save_0_basics/count"].value == 2
  assert tags["save_5_inventory/save_total_gb"].value == pytest.approx(2 * ARRAY_BYTES / _GIB)
  assert tags["save_4_throughput/save_total_gbps"].value == pytest.approx(
      tags["save_5_inventory/save_total_gb"].value
      / tags["save_2_save_breakdown/handler_total_s"].value)


def test_bytes_without_orbax_time_use_the_block_time():
  metrics = Metrics()
  with metrics.measure("save", ["time"]):
    pass
  metrics.record("save", "5_inventory/save_total_gb", 2.0, "GiB", "sum")
  tags = metrics.to_dict()
  assert tags["save_4_throughput/save_total_gbps"].value == pytest.approx(
      2.0 / tags["save_0_basics/time_s"].value)


def test_device_memory_counts_live_arrays_and_leaves_cpu_peaks_absent():
  metrics = Metrics()
  with metrics.measure("alloc", ["device_memory"]):
    kept = jax.numpy.ones(4)
  tags = metrics.to_dict()
  assert tags["alloc_7_memory/jax_live_arrays_count_delta"].value == 1
  assert "alloc_7_memory/device_peak_diff_gb" not in tags  # CPU reports no memory stats
  del kept


def test_unknown_collector_key_lists_the_known_ones():
  with pytest.raises(ValueError, match="unknown metric key 'hbm'.*device_memory.*tensorstore.*tracemalloc"):
    with Metrics().measure("x", ["time", "hbm"]):
      pass


def test_tracemalloc_peak_is_seen_by_outer_and_inner_blocks():
  metrics = Metrics()
  with metrics.measure("outer", ["tracemalloc"]):
    with metrics.measure("inner", ["tracemalloc"]):
      blob = bytearray(8 << 20)
      del blob
  tags = metrics.to_dict()
  for op in ("outer", "inner"):
    assert tags[f"{op}_7_memory/tracemalloc_peak_diff_mib"].value >= 7.9
    assert abs(tags[f"{op}_7_memory/tracemalloc_diff_mib"].value) < 1


def test_save_restore_cold_cache_evicts_before_the_load(tmp_path):
  from ckptbench import TestContext
  from ckptbench.benchmarks.save_restore import SaveRestoreBenchmark, SaveRestoreOptions

  tree, _ = _tree()
  options = SaveRestoreOptions(async_enabled=False, use_compression=False)  # cold by default
  result = SaveRestoreBenchmark().test_fn(TestContext(pytree=tree, path=tmp_path, options=options))
  tags = result.metrics.to_dict()
  methods = [k for k in tags if k.startswith("load_0_basics/cold_cache_")]
  # Each file's pages, not the whole machine's page cache, wherever fadvise exists.
  assert methods == ["load_0_basics/cold_cache_fadvise"]
  assert tags["load_4_throughput/load_total_gbps"].value > 0


def test_a_warm_load_says_so(tmp_path):
  from ckptbench import TestContext
  from ckptbench.benchmarks.save_restore import SaveRestoreBenchmark, SaveRestoreOptions

  tree, _ = _tree()
  options = SaveRestoreOptions(async_enabled=False, cold_cache=False)
  tags = SaveRestoreBenchmark().test_fn(TestContext(pytree=tree, path=tmp_path, options=options)).metrics.to_dict()
  assert [k for k in tags if k.startswith("load_0_basics/cold_cache_")] == ["load_0_basics/cold_cache_warm"]


def test_orbax_0_12_8_save_breakdown_events_take_orbax_names(tmp_path):
  """A composite save with one item whose handler has no async save: Orbax times that item as
  blocking_sync_item_duration_secs, and the start sync as checkpoint_start_sync_s (its name)."""
  import dataclasses  # noqa: PLC0415
  import json  # noqa: PLC0415

  import orbax.checkpoint as ocp_v0  # noqa: PLC0415

  class NotesHandler(ocp_v0.CheckpointHandler):  # synchronous: no async_save
    def save(self, directory, args):
      (directory / "notes.json").write_text(json.dumps(args.notes))

    def restore(self, directory, args=None):
      return json.loads((directory / "notes.json").read_text())

  @ocp_v0.args.register_with_handler(NotesHandler, for_save=True, for_restore=True)
  @dataclasses.dataclass
  class NotesArgs(ocp_v0.args.CheckpointArgs):
    notes: dict

  tree, _ = _tree()
  metrics = Metrics()
  with ocp_v0.Checkpointer(ocp_v0.CompositeCheckpointHandler()) as checkpointer:
    with metrics.measure("save"):
      checkpointer.save(tmp_path / "ckpt", ocp_v0.args.Composite(
          state=ocp_v0.args.StandardSave(tree), notes=NotesArgs({"step": 1})))  # fmt: skip
  recorded = metrics.to_dict()
  assert recorded["save_2_save_breakdown/blocking_sync_item_s"].value > 0
  assert recorded["save_2_save_breakdown/checkpoint_start_sync_s"].unit == "s"
  assert not any("9_other" in tag or tag.endswith("/start_sync_s") for tag in recorded)


def test_an_old_tag_name_reads_back_under_orbax_name():
  from ckptbench.api import RunRecord  # noqa: PLC0415

  old = {"schema_version": 1, "suite": "s", "benchmark": "b", "key": "k", "generator": "g", "options": {},
         "varying": {}, "mesh": None, "checkpoint_config": None, "repeat": 0, "warmup": False, "host": 0,
         "num_hosts": 1, "path": "p", "started_at": "t", "duration_s": 1.0, "error": None,
         "metrics": {"save_2_save_breakdown/start_sync_s": {"value": 0.25, "unit": "s"}}}  # fmt: skip
  record = RunRecord.from_json(old)
  assert record.value("save_2_save_breakdown/checkpoint_start_sync_s") == 0.25
  assert "save_2_save_breakdown/start_sync_s" not in record.metrics
