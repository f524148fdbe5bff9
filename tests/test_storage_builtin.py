"""The `storage` built-in and the example suites on the emulators (real servers on 127.0.0.1)."""

from __future__ import annotations

import importlib.util
import json

import pytest

import ckptbench
from ckptbench.benchmarks.storage import verify_objects
from ckptbench.storage import list_objects, write_object
from conftest import REPO
from store_servers import gcs_store, s3_store  # noqa: F401  (fixtures)

pytestmark = pytest.mark.host_memory("inline", reason=(
    "these tests check the storage built-in's requests against emulated stores; a memory pass would "
    "send them all again"
))


@pytest.mark.slow
@pytest.mark.parametrize("store", ["gcs_store", "s3_store"])
@pytest.mark.parametrize("use_ocdbt", [False, True])
def test_kvstore_objects_round_trip_on_the_store(store, use_ocdbt, request):
  emulator = request.getfixturevalue(store)
  spec = ckptbench.kvstore_spec(f"{emulator.url}/kv-{use_ocdbt}", use_ocdbt=use_ocdbt)
  values = [ckptbench.kvstore_payload(i, 100_000) for i in range(6)]
  ckptbench.write_kvstore(spec, values, concurrency=3)
  read = ckptbench.read_kvstore(spec, 6, concurrency=4)
  verify_objects(values, read)
  assert spec["driver"] == ("ocdbt" if use_ocdbt else {"gcs_store": "gcs", "s3_store": "s3"}[store])


@pytest.mark.parametrize("use_ocdbt", [False, True])
def test_kvstore_objects_round_trip_on_local_disk(tmp_path, use_ocdbt):
  spec = ckptbench.kvstore_spec(tmp_path / "kv", use_ocdbt=use_ocdbt)
  values = [ckptbench.kvstore_payload(i, 50_000) for i in range(5)]
  ckptbench.write_kvstore(spec, values, concurrency=2)
  verify_objects(values, ckptbench.read_kvstore(spec, 5, concurrency=2))
  files = [p for p in (tmp_path / "kv").rglob("*") if p.is_file()]
  assert sum(p.stat().st_size for p in files) >= 250_000  # incompressible: every byte is stored
  if use_ocdbt:
    assert (tmp_path / "kv" / "manifest.ocdbt").is_file()
  else:
    assert sorted(p.name for p in files) == [f"obj_{i:05d}" for i in range(5)]


@pytest.mark.slow
def test_verification_fails_on_an_object_corrupted_in_the_store(s3_store):
  location = f"{s3_store.url}/corrupt"
  spec = ckptbench.kvstore_spec(location)
  values = [ckptbench.kvstore_payload(i, 10_000) for i in range(4)]
  ckptbench.write_kvstore(spec, values, concurrency=2)
  write_object(f"{location}/obj_00002", values[2][:-1] + bytes([values[2][-1] ^ 0xFF]))  # last byte flipped
  with pytest.raises(ckptbench.DataMismatchError, match=r"1 of 4 objects .*\(first: obj_00002\)"):
    verify_objects(values, ckptbench.read_kvstore(spec, 4, concurrency=2))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["storage_gcs", "storage_s3"])
def test_example_suite_runs_on_the_emulator(name, gcs_store, s3_store, tmp_path, cli):
  out = tmp_path / "out"
  done = cli("run", str(REPO / "examples" / f"{name}.yaml"), "-o", str(out), "--no-views", "--no-progress",
             "--set", "num_repeats=1", "--keep_checkpoints")  # fmt: skip (the objects are read below)
  assert done.returncode == 0, done.stderr[-3000:]
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  assert records and not any(r["error"] for r in records)
  assert all(r["path"].startswith(("gs://ckptbench/examples/", "s3://ckptbench/examples/")) for r in records)
  roofline = json.loads((out / "manifest.json").read_text())["roofline"]
  assert roofline["store_write_gbps"] > 0 and roofline["store_read_gbps"] > 0
  kv = [r for r in records if r["generator"].endswith("StorageBenchmark")]
  assert all(r["metrics"]["write_4_throughput/store_write_gbps"]["value"] > 0 for r in kv)
  orbax = [r for r in records if r["generator"].endswith("SaveRestoreBenchmark") and not r["warmup"]]
  assert len(orbax) == (2 if name == "storage_gcs" else 0)  # OCDBT on and off, one repeat each
  for r in orbax:
    assert 0 < r["metrics"]["save_4_throughput/save_total_gbps_of_store_write"]["value"]
  dcp = [r for r in records if r["generator"].endswith("PyTorchBenchmark") and not r["warmup"]]
  assert len(dcp) == (2 if name == "storage_s3" and importlib.util.find_spec("torch") else 0)  # dcp, dcp_async
  for r in dcp:  # DCP's files are in the bucket; the load was verified bit for bit
    assert {"dcp/.metadata", "dcp/__0_0.distcp"} <= {o.key for o in list_objects(r["path"])}


@pytest.mark.slow
def test_dcp_saves_to_gcs_and_local_file_libraries_are_refused_on_a_store(gcs_store, tmp_path, cli):
  pytest.importorskip("torch", reason="the torch extra is not installed")
  (tmp_path / "s.yaml").write_text(
      "suite_name: dcp on gcs\n"
      "checkpoint_config: {spec: {w: {dtype: float32, shape: [256, 64]}}}\n"
      "benchmarks: [{generator: pytorch, options: {library: [dcp, torch_save]}}]\n"
  )
  done = cli("run", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "out"), "--checkpoint_root",
             f"{gcs_store.url}/dcp", "--no-views", "--no-probe", "--no-progress", "--set", "num_repeats=1")  # fmt: skip
  assert done.returncode == 1, done.stderr[-2000:]
  by_library = {json.loads(line)["options"]["library"]: json.loads(line)
                for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()}  # fmt: skip
  assert by_library["dcp"]["error"] is None
  assert by_library["dcp"]["inventory"]["file_count"] == 2
  assert "writes local files only" in by_library["torch_save"]["error"]["message"]
