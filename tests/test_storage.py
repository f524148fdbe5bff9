"""Checkpoints on object stores, against real emulators on 127.0.0.1 (see store_servers.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from ckptbench.errors import CkptbenchError
from ckptbench.storage import StoreURL, is_store_url, list_objects, parse_store_url
from conftest import REPO
from store_servers import gcs_store, s3_store  # noqa: F401  (fixtures)

pytestmark = pytest.mark.host_memory("inline", reason=(
    "these tests follow checkpoints through object-store emulators; a memory pass would run every "
    "save against the emulator a second time"
))

SUITE = """\
suite_name: storage test
num_repeats: 1
num_warmups: 0
checkpoint_config:
  spec:
    params: {{dtype: float32, shape: [128, 64], sharding: [fsdp]}}
mesh_config: {{mesh_axes: [fsdp], ici_parallelism: {{fsdp: 2}}}}
benchmarks:
  - generator: {generator}
    options: {options}
"""


def _suite(tmp_path, generator="save_restore", options="{use_ocdbt: [true, false]}"):
  path = tmp_path / "suite.yaml"
  path.write_text(SUITE.format(generator=generator, options=options))
  return str(path)


def _records(out):
  return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_store_urls_parse_and_join():
  url = parse_store_url("gs://bucket/a/b/")
  assert url == StoreURL("gs", "bucket", "a/b")
  assert str(url.join("c", "/d/")) == "gs://bucket/a/b/c/d"
  assert is_store_url("s3://b") and not is_store_url("/tmp/x") and not is_store_url("file://x")
  with pytest.raises(CkptbenchError, match="no bucket"):
    parse_store_url("s3:///x")
  with pytest.raises(CkptbenchError, match="not an object-store URL"):
    parse_store_url("hdfs://x/y")


@pytest.mark.slow
def test_gcs_checkpoints_go_to_the_store_and_results_stay_local(gcs_store, tmp_path, cli):
  root = f"{gcs_store.url}/gcs-run"
  done = cli("run", _suite(tmp_path), "-o", str(tmp_path / "out"), "--checkpoint_root", root,
             "--no-views", "--no-probe", "--no-progress", "--keep_checkpoints")  # fmt: skip
  assert done.returncode == 0, done.stderr
  records = _records(tmp_path / "out")
  assert len(records) == 2 and not any(r["error"] for r in records)
  layouts = set()
  for r in records:
    assert r["path"].startswith(root + "/")
    stored = list_objects(r["path"])
    assert r["inventory"]["file_count"] == len(stored) > 0
    assert r["inventory"]["total_bytes"] == sum(o.size for o in stored) > 128 * 64 * 4 * 0.5
    assert r["metrics"]["save_6_tensorstore/kvstore_gcs_bytes_written"]["value"] > 0
    # Without --link the requests are TensorStore's (array data): writes, then the load's reads.
    assert r["metrics"]["checkpoint_5_inventory/store_put_count"]["value"] >= 1
    assert r["metrics"]["checkpoint_5_inventory/store_get_count"]["value"] >= 1
    assert r["metrics"]["checkpoint_5_inventory/store_usd_per_month"]["value"] > 0
    layouts.add(r["inventory"]["layout"])
  assert layouts == {"OCDBT + Orbax metadata", "Zarr v3 + Orbax metadata"}
  local = {p.name for p in (tmp_path / "out").iterdir()}
  assert local - {".ckptbench.lock", "logs"} == {"results.jsonl", "summary.json", "manifest.json"}  # no checkpoint
  assert not (tmp_path / "gs:").exists()


@pytest.mark.slow
def test_s3_bytes_on_local_disk_fail_the_run(s3_store, tmp_path, cli):
  # orbax-checkpoint 0.12.8 writes s3:// array data to ./s3:/... and may report success.
  suite = _suite(tmp_path, "storage_benchmarks.PlainSave", "{use_ocdbt: false}")
  done = cli("run", suite, "-o", str(tmp_path / "out"), "--checkpoint_root", f"{s3_store.url}/s3-run",
             "--no-views", "--no-probe", "--no-progress", cwd=tmp_path)  # fmt: skip
  assert done.returncode == 1, done.stderr
  (record,) = _records(tmp_path / "out")
  assert record["error"]["type"] == "MisplacedBytes"
  assert "went to local disk" in record["error"]["message"]
  assert str(tmp_path / "s3:") in record["error"]["message"]


def _fails_fast(cli, tmp_path, root, env=None):
  t0 = time.monotonic()
  done = cli("run", _suite(tmp_path, "save_restore", "{}"), "-o", str(tmp_path / "out"),
             "--checkpoint_root", root, "--no-views", "--no-probe", env=env)  # fmt: skip
  assert done.returncode == 2, done.stderr
  assert time.monotonic() - t0 < 60
  lines = done.stderr.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith("ckptbench: error: "), done.stderr
  assert not (tmp_path / "out" / "results.jsonl").exists()
  return lines[0]


def _closed_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


@pytest.mark.slow
def test_bad_stores_are_refused_in_one_line_before_anything_runs(gcs_store, s3_store, tmp_path, cli):
  dead = f"http://127.0.0.1:{_closed_port()}"
  line = _fails_fast(cli, tmp_path, "gs://ckptbench/x", {"STORAGE_EMULATOR_HOST": dead})
  assert "gs://ckptbench/x" in line and "cannot be reached" in line and "STORAGE_EMULATOR_HOST" in line
  line = _fails_fast(cli, tmp_path, "s3://ckptbench/x")
  assert "orbax-checkpoint cannot write s3://" in line and "SaveRestoreBenchmark" in line


def _refusal(url: str) -> str:
  from ckptbench.storage import check_store

  with pytest.raises(CkptbenchError) as caught:
    check_store(url)
  assert len(str(caught.value).splitlines()) == 1
  return str(caught.value)


@pytest.mark.slow
def test_store_checks_name_the_url_and_what_to_set(gcs_store, s3_store, monkeypatch):
  dead = f"http://127.0.0.1:{_closed_port()}"
  assert "bucket 'no-such-bucket' does not exist" in _refusal("gs://no-such-bucket/x")
  assert "bucket 'no-such-bucket' does not exist" in _refusal("s3://no-such-bucket/x")
  with monkeypatch.context() as env:
    env.setenv("AWS_ENDPOINT_URL", dead)
    line = _refusal("s3://ckptbench/x")
    assert "s3://ckptbench/x" in line and "cannot be reached" in line and "AWS_ENDPOINT_URL" in line
  with monkeypatch.context() as env:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
      env.delenv(name)
    env.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    env.setenv("AWS_CONFIG_FILE", "/nonexistent")
    line = _refusal("s3://ckptbench/x")
    assert "no AWS credentials" in line and "AWS_ACCESS_KEY_ID" in line
  with monkeypatch.context() as env:
    env.delenv("STORAGE_EMULATOR_HOST")
    env.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    env.setenv("GCE_METADATA_HOST", dead.removeprefix("http://"))  # no metadata server either
    line = _refusal("gs://some-bucket/x")
    assert "no Google credentials" in line and "GOOGLE_APPLICATION_CREDENTIALS" in line


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gcs", "s3"])
def test_emulate_command_serves_and_prints_the_environment(kind, tmp_path, monkeypatch):
  pytest.importorskip("moto" if kind == "s3" else "gcp_storage_emulator", reason="the storage extra is not installed")
  from ckptbench.storage import list_objects, write_object

  port = _closed_port()
  env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
  proc = subprocess.Popen([sys.executable, "-m", "ckptbench", "emulate", kind, "--port", str(port),
                           "--bucket", "bkt1"], stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip
  try:
    exports = {}
    for line in proc.stdout:
      if line.startswith("export "):
        key, _, value = line.removeprefix("export ").strip().partition("=")
        exports[key] = value
      if line.startswith("#"):
        hint = line
        break
    # The command it suggests is one that runs on this store (the example suite of it, by name).
    scheme = "gs" if kind == "gcs" else "s3"
    assert f"ckptbench run storage_{kind} -o out/storage_{kind} --checkpoint_root {scheme}://bkt1/runs" in hint
    endpoint = exports["STORAGE_EMULATOR_HOST" if kind == "gcs" else "AWS_ENDPOINT_URL"]
    assert endpoint == f"http://127.0.0.1:{port}"
    for key, value in exports.items():  # what the printed lines set is all a client needs
      monkeypatch.setenv(key, value)
    url = f"{'gs' if kind == 'gcs' else 's3'}://bkt1/probe"
    write_object(f"{url}/o", b"hello")
    assert [(o.key, o.size) for o in list_objects(url)] == [("o", 5)]
  finally:
    proc.terminate()
    assert proc.wait(timeout=20) == 0
  with socket.socket() as s:  # the emulator went away with the command
    assert s.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.slow
def test_everything_under_a_gcs_output_directory_and_baselines_on_gcs(gcs_store, tmp_path, cli):
  out, baselines = f"{gcs_store.url}/whole", f"{gcs_store.url}/baselines"
  suite = _suite(tmp_path, options="{use_ocdbt: true}")
  common = ("--no-views", "--no-probe", "--no-progress")
  done = cli("run", suite, "-o", out, "--baseline_capture_path", baselines, "--baseline_label", "b0",
             "--keep_checkpoints", *common, cwd=tmp_path)  # fmt: skip
  assert done.returncode == 0, done.stderr
  keys = {o.key for o in list_objects(out)}
  assert {"results.jsonl", "summary.json", "manifest.json"} <= keys
  assert any(k.startswith("SaveRestoreBenchmark") and k.endswith("_CHECKPOINT_METADATA") for k in keys)
  assert "b0.json" in {o.key for o in list_objects(baselines)}
  again = cli("run", suite, "-o", out, "--overwrite", "--baseline_path", f"{baselines}/b0.json", *common,
              cwd=tmp_path)  # fmt: skip
  assert again.returncode == 0, again.stderr
  assert "b0" in again.stdout
  missing = cli("run", suite, "-o", str(tmp_path / "o2"), "--baseline_path", f"{baselines}/nope.json", *common)
  assert missing.returncode == 2 and f"{baselines}/nope.json does not exist" in missing.stderr


@pytest.mark.slow
def test_saves_under_a_shaped_link_with_injected_errors_complete_and_verify(gcs_store, tmp_path, cli):
  done = cli("run", _suite(tmp_path, options="{use_ocdbt: [true, false]}"), "-o", str(tmp_path / "out"),
             "--checkpoint_root", f"{gcs_store.url}/linked", "--link", "rtt=5ms,bw=200MB/s,errors=5%",
             "--no-views", "--no-probe", "--no-progress")  # fmt: skip
  assert done.returncode == 0, done.stderr[-3000:]
  records = _records(tmp_path / "out")
  assert len(records) == 2 and not any(r["error"] for r in records)  # save_restore verifies what it loaded
  link = json.loads((tmp_path / "out" / "link.json").read_text())
  assert link["shape"] == "rtt=5ms,bw=0.2GB/s,errors=5%"
  assert link["stats"]["injected_errors"] > 0
  injected = sum(r["metrics"]["checkpoint_5_inventory/store_injected_errors_count"]["value"] for r in records)
  assert injected > 0
  for r in records:  # counted by the link: every client's requests, priced
    m = {k.removeprefix("checkpoint_5_inventory/"): v["value"] for k, v in r["metrics"].items()}
    assert m["store_put_count"] >= r["inventory"]["file_count"] and m["store_get_count"] > 0
    assert m["store_requests_usd"] > 0 and m["store_usd_per_month"] > 0


@pytest.mark.slow
def test_a_save_the_link_keeps_failing_is_a_failed_run_that_says_why(gcs_store, tmp_path, cli):
  # At 90% injected errors the clients' retries run out: the run fails with the injected answer
  # as its message (no hang, no traceback on the console), and the files of the run are complete.
  out = tmp_path / "out"
  done = cli("run", _suite(tmp_path, options="{use_ocdbt: false}"), "-o", str(out),
             "--checkpoint_root", f"{gcs_store.url}/failing", "--link", "errors=90%",
             "--no-views", "--no-probe", "--no-progress", timeout=300)  # fmt: skip
  assert done.returncode == 1, done.stderr[-3000:]
  [record] = _records(out)
  assert record["error"]["message"].startswith("injected by ckptbench --link, ")
  assert record["error"]["message"].removeprefix("injected by ckptbench --link, ") in ("429", "503")
  [bench] = json.loads((out / "summary.json").read_text())["benchmarks"]
  assert bench["failed"] == 1 and bench["errors"][0]["message"] == record["error"]["message"]
  link = json.loads((out / "link.json").read_text())
  assert link["stats"]["injected_errors"] > 0.5 * link["stats"]["requests"]
  assert "Traceback" not in done.stdout + done.stderr and "injected by ckptbench --link" in done.stdout + done.stderr
  assert not list(tmp_path.glob("gs:*"))  # nothing landed beside the store


def test_link_specs_parse_or_fail_in_one_line():
  from ckptbench.storage import parse_link

  shape = parse_link("rtt=20ms,bw=1GB/s,errors=1%")
  assert (shape.rtt_s, shape.bandwidth_bps, shape.error_rate) == (0.02, 1e9, 0.01)
  assert parse_link("bw=100MiB/s").bandwidth_bps == 100 * (1 << 20)
  for bad in ("rtt=fast", "errors=150%", "jitter=1ms", "bw=1GB/h"):
    with pytest.raises(CkptbenchError, match="write e.g. rtt=20ms"):
      parse_link(bad)


def test_price_table_is_documented_and_overridable(tmp_path, monkeypatch):
  from ckptbench.storage import PRICE_TABLE_ENV, checkpoint_cost

  monkeypatch.delenv(PRICE_TABLE_ENV, raising=False)
  cost = checkpoint_cost("gs", 10**9, {"put": 1000, "get": 1000, "list": 0})
  assert cost == pytest.approx({"requests_usd": 0.0054, "storage_usd_per_month": 0.020})
  (tmp_path / "p.json").write_text('{"gs": {"storage_gb_month": 0.026}}')
  monkeypatch.setenv(PRICE_TABLE_ENV, str(tmp_path / "p.json"))
  assert checkpoint_cost("gs", 2 * 10**9, {})["storage_usd_per_month"] == pytest.approx(0.052)
  (tmp_path / "p.json").write_text('{"gs": {"storage_per_tb": 1}}')
  with pytest.raises(CkptbenchError, match=PRICE_TABLE_ENV):
    checkpoint_cost("gs", 1, {})


@pytest.mark.slow
def test_an_existing_checkpoint_and_its_sharding_file_on_gcs_are_loaded(gcs_store, tmp_path, cli):
  import jax
  import numpy as np
  from orbax.checkpoint import v1 as ocp

  import ckptbench

  mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("fsdp",))
  sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("fsdp"))
  tree = {"w": jax.device_put(np.arange(64 * 8, dtype=np.float32).reshape(64, 8), sharding)}
  ocp.save(f"{gcs_store.url}/existing/ckpt", tree)
  ckptbench.write_sharding_config(f"{gcs_store.url}/existing/sharding.json", tree)
  (tmp_path / "s.yaml").write_text(
      "suite_name: existing on gcs\nnum_repeats: 1\nnum_warmups: 0\n"
      f"checkpoint_config: {{path: {gcs_store.url}/existing/ckpt,"
      f" sharding_config_path: {gcs_store.url}/existing/sharding.json}}\n"
      "mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 2}}\n"
      "benchmarks: [{generator: save_restore, options: {use_ocdbt: false}}]\n"
  )
  done = cli("run", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "out"), "--no-views", "--no-probe")
  assert done.returncode == 0, done.stderr[-2000:]
  (record,) = _records(tmp_path / "out")
  assert record["error"] is None and record["metrics"]["save_5_inventory/save_total_gb"]["value"] > 0

  # orbax_load: its digests captured to the store, then checked from there.
  def load_suite(digests_option):
    (tmp_path / "l.yaml").write_text(
        "suite_name: load from gcs\nnum_repeats: 1\nnum_warmups: 0\n"
        "mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 2}}\n"
        f"benchmarks: [{{generator: orbax_load, options: {{checkpoint_path: {gcs_store.url}/existing/ckpt,"
        f" sharding_config_path: {gcs_store.url}/existing/sharding.json, {digests_option}}}}}]\n"
    )
    return str(tmp_path / "l.yaml")

  # The second run's own run directories are on the store too: a load-only run writes nothing
  # there, and that is no misplaced save.
  digests = f"{gcs_store.url}/existing/digests"
  for name, option, root in (("captured", "capture_digests_path", []),
                             ("checked", "reference_digests_path", ["--checkpoint_root", f"{gcs_store.url}/runs"])):
    done = cli("run", load_suite(f"{option}: {digests}"), "-o", str(tmp_path / name), "--no-views", "--no-probe",
               *root)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (record,) = _records(tmp_path / name)
    assert record["error"] is None and record["metrics"]["digest_9_other/arrays"]["value"] == 1
  assert [o.key for o in list_objects(digests)] == ["host_00000.json"]
  done = cli("run", load_suite(f"reference_digests_path: {gcs_store.url}/nowhere"), "-o", str(tmp_path / "missing"),
             "--no-views", "--no-probe")  # fmt: skip
  (record,) = _records(tmp_path / "missing")
  assert f"no reference digests for process 0: {gcs_store.url}/nowhere/host_00000.json does not exist" in (
      record["error"]["message"])


@pytest.mark.slow
def test_the_link_keeps_object_lengths_on_head_requests(s3_store):
  import boto3

  from ckptbench.storage import parse_link, start_link, stop_emulator, write_object

  write_object(f"{s3_store.url}/head/o", b"a" * 1234)
  link, proc = start_link(s3_store.endpoint, parse_link("rtt=2ms"))
  try:
    client = boto3.client("s3", endpoint_url=link.endpoint, region_name="us-east-1")
    assert client.head_object(Bucket=s3_store.bucket, Key="head/o")["ContentLength"] == 1234
    assert client.get_object(Bucket=s3_store.bucket, Key="head/o")["Body"].read() == b"a" * 1234
    stats = link.stats()
    assert stats["get"] == 2 and stats["requests"] == 2 and stats["bytes_down"] == 1234
  finally:
    stop_emulator(proc)
