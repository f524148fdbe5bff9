"""A third object store is one registration: a DirectoryStore under a scheme of our own, real files,
through the whole run path (checks, run paths, placement, request counts, prices, results upload)."""

from __future__ import annotations

import json
import os

import pytest

import ckptbench
from conftest import REPO
from ckptbench.storage import Prices, is_store_url, list_objects, store_for, unregister_store, uses_fsspec

pytestmark = pytest.mark.host_memory("inline", reason=(
    "these tests check how a store is found for a URL; a memory pass would run each save again"
))

SUITE = """\
suite_name: toy store
num_repeats: 1
num_warmups: 0
checkpoint_config:
  spec:
    params: {dtype: float32, shape: [64, 32], sharding: [fsdp]}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}
benchmarks:
  - generator: save_restore
  - generator: storage
    options: {object_count: 4, object_size_mib: 0.0625, use_ocdbt: [false, true]}
"""
_PRICES = Prices(0.5, 2.0, 1.0, 3.0, "made up for the test")


@pytest.fixture
def toy_store(tmp_path):
  """The scheme toy:// served by a directory with one bucket, `bkt`; forgotten after the test."""
  root = tmp_path / "toy-root"
  (root / "bkt").mkdir(parents=True)
  store = ckptbench.DirectoryStore("toy", root, prices=_PRICES)
  ckptbench.register_store(store)
  try:
    yield store
  finally:
    unregister_store("toy")


def test_a_registered_scheme_is_a_store_url_everywhere(toy_store, tmp_path):
  assert is_store_url("toy://bkt/a") and store_for("toy://bkt/a") is toy_store
  assert not uses_fsspec("toy://bkt/a")  # libraries get the directory itself
  ckptbench.write_location("toy://bkt/small/file.json", b"{}")
  assert (toy_store.root / "bkt/small/file.json").read_bytes() == b"{}"
  assert ckptbench.read_location("toy://bkt/small/file.json") == b"{}"
  assert [(o.key, o.size) for o in list_objects("toy://bkt/small")] == [("file.json", 2)]
  spec = ckptbench.kvstore_spec("toy://bkt/kv")
  assert spec == {"driver": "file", "path": f"{toy_store.root}/bkt/kv/"}
  with pytest.raises(ckptbench.CkptbenchError, match="already served"):
    ckptbench.register_store(ckptbench.DirectoryStore("toy", tmp_path))
  with pytest.raises(ckptbench.CkptbenchError, match="segment is '.' or '..'"):  # refused as the URL is read
    ckptbench.read_location("toy://bkt/../../outside")


def test_a_missing_bucket_is_refused_before_anything_runs(toy_store, tmp_path):
  settings = ckptbench.RunSettings(
      output_dir=tmp_path / "out", checkpoint_root="toy://nobucket/runs", show_progress=False,
      probe_storage=False, write_views=False,
  )  # fmt: skip
  with pytest.raises(ckptbench.CkptbenchError, match="bucket 'nobucket' does not exist"):
    ckptbench.run(ckptbench.load_suite_text(SUITE, file="toy.yaml"), settings)
  assert not (tmp_path / "out" / "results.jsonl").exists()


@pytest.mark.slow
def test_a_suite_runs_on_a_registered_directory_store(toy_store, tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)  # results of `-o toy://...` are staged below the working directory
  outcome = ckptbench.run(
      ckptbench.load_suite_text(SUITE, file="toy.yaml"),
      ckptbench.RunSettings(
          output_dir="toy://bkt/results", checkpoint_root="toy://bkt/runs", show_progress=False,
          write_views=False, keep_checkpoints=True,
      ),
  )  # fmt: skip
  assert outcome.exit_code == 0
  root = toy_store.root / "bkt"
  records = [json.loads(line) for line in (root / "results/results.jsonl").read_text().splitlines()]
  assert len(records) == 3 and not any(r["error"] for r in records)
  manifest = json.loads((root / "results/manifest.json").read_text())
  assert manifest["roofline"]["location"] == "toy://bkt/runs/_ckptbench_roofline"
  assert not (root / "runs/_ckptbench_roofline").exists()  # the probe cleaned up after itself
  for r in records:
    run_dir = root / "runs" / r["path"].split("/runs/", 1)[1]
    assert r["path"] == str(run_dir) and any(p.is_file() for p in run_dir.rglob("*"))
    tags = r["metrics"]
    puts = tags["checkpoint_5_inventory/store_put_count"]["value"]
    gets = tags["checkpoint_5_inventory/store_get_count"]["value"]
    lists = tags["checkpoint_5_inventory/store_list_count"]["value"]
    assert puts > 0 and gets > 0  # TensorStore's file driver counted every array write and read
    expected = (puts * 2.0 + gets * 1.0 + lists * 3.0) / 1000
    assert tags["checkpoint_5_inventory/store_requests_usd"]["value"] == pytest.approx(expected)
    stored = r["inventory"]["total_bytes"]
    assert tags["checkpoint_5_inventory/store_usd_per_month"]["value"] == pytest.approx(stored / 1e9 * 0.5)


def _plugin(tmp_path, value: str = "toy_store_plugin:STORE") -> str:
  """An installed package (real dist-info metadata on the path) declaring the toy:// store by entry point."""
  site = tmp_path / "site"
  (site / "toy_store_plugin-1.0.dist-info").mkdir(parents=True)
  (site / "toy_store_plugin.py").write_text(
      'import os\nimport ckptbench\nSTORE = ckptbench.DirectoryStore("toy", os.environ["TOY_STORE_ROOT"])\n'
  )
  (site / "toy_store_plugin-1.0.dist-info/METADATA").write_text(
      "Metadata-Version: 2.1\nName: toy-store-plugin\nVersion: 1.0\n"
  )
  (site / "toy_store_plugin-1.0.dist-info/entry_points.txt").write_text(f"[ckptbench.object_stores]\ntoy = {value}\n")
  return os.pathsep.join([str(site), str(REPO / "src"), str(REPO / "tests")])


@pytest.mark.slow
def test_an_installed_store_serves_the_cli_run(tmp_path, cli):
  root = tmp_path / "toy-root"
  (root / "bkt").mkdir(parents=True)
  suite = tmp_path / "toy.yaml"
  suite.write_text(SUITE.split("  - generator: storage")[0])  # save_restore only
  env = {"PYTHONPATH": _plugin(tmp_path), "TOY_STORE_ROOT": str(root)}
  done = cli("run", str(suite), "-o", str(tmp_path / "out"), "--checkpoint_root", "toy://bkt/runs",
             "--remove_repeated_dir", "--no-views", "--no-probe", "--no-progress", env=env)  # fmt: skip
  assert done.returncode == 0, done.stderr
  (record,) = [json.loads(line) for line in (tmp_path / "out/results.jsonl").read_text().splitlines()]
  assert record["error"] is None and record["path"].startswith(str(root / "bkt/runs"))
  assert record["metrics"]["checkpoint_5_inventory/store_put_count"]["value"] > 0
  assert not any(t.endswith("_usd") or "_usd_" in t for t in record["metrics"])  # no prices: no cost
  assert not [p for p in (root / "bkt").rglob("*") if p.is_file()]  # --remove_repeated_dir emptied it


@pytest.mark.slow
def test_a_broken_installed_store_and_an_unknown_scheme_are_one_line_errors(tmp_path, cli):
  suite = tmp_path / "toy.yaml"
  suite.write_text(SUITE.split("  - generator: storage")[0])  # the store is refused, not the suite
  env = {"PYTHONPATH": _plugin(tmp_path, "toy_store_plugin:MISSING"), "TOY_STORE_ROOT": str(tmp_path)}
  done = cli("run", str(suite), "-o", str(tmp_path / "out"), "--checkpoint_root", "toy://bkt/x", env=env)
  assert done.returncode == 2 and "Traceback" not in done.stderr
  assert "object store toy = toy_store_plugin:MISSING" in done.stderr and "cannot be loaded" in done.stderr
  done = cli("run", str(suite), "-o", str(tmp_path / "out"), "--checkpoint_root", "az://bkt/x")
  assert done.returncode == 2 and "no object store serves az://" in done.stderr, done.stderr
