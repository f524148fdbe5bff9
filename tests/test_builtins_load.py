"""orbax_load: loading an existing checkpoint, per-host SHA-256 digests captured and checked."""

from __future__ import annotations

import json
import pathlib

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from orbax.checkpoint import v1 as ocp

import ckptbench
from builtin_support import corrupt_before, errors, flip_chunks, ok_metrics, run_text

MESH = "mesh_config: {mesh_axes: [fsdp, tensor], ici_parallelism: {fsdp: 4, tensor: 2}}\n"


def _checkpoint(tmp_path):
  """A raw (no OCDBT, no compression) Zarr 3 checkpoint of two arrays, and its sharding file."""
  mesh = Mesh(np.asarray(jax.devices()).reshape(4, 2), ("fsdp", "tensor"))
  tree = {
      "w": jax.device_put(np.arange(64 * 32, dtype=np.float32).reshape(64, 32), NamedSharding(mesh, PartitionSpec("fsdp", "tensor"))),
      "b": jax.device_put(np.ones(32, np.float32), NamedSharding(mesh, PartitionSpec())),
  }
  ctx = ocp.Context()
  ctx.array.saving.use_ocdbt = False
  ctx.array.saving.use_compression = False
  with ctx:
    ocp.save(tmp_path / "ckpt", tree)
  ckptbench.write_sharding_config(tmp_path / "sharding.json", tree)
  return tmp_path / "ckpt", tmp_path / "sharding.json"


def _suite(ckpt, sharding, digests_option: str) -> str:
  return (
      f"suite_name: load\n{MESH}benchmarks:\n  - generator: orbax_load\n    options:\n"
      f"      checkpoint_path: {ckpt}\n      sharding_config_path: {sharding}\n      {digests_option}\n"
  )


def test_orbax_load_captures_digests_then_checks_a_later_load_against_them(tmp_path):
  ckpt, sharding = _checkpoint(tmp_path)
  captured = run_text(tmp_path / "a", _suite(ckpt, sharding, f"capture_digests_path: {tmp_path / 'digests'}"))
  (m,) = ok_metrics(captured)
  assert m["load_0_basics/time_s"].value > 0 and m["digest_9_other/arrays"].value == 2
  digests = json.loads((tmp_path / "digests" / "host_00000.json").read_text())
  assert sorted(digests) == ["['b']", "['w']"] and all(len(d) == 64 for d in digests.values())
  checked = run_text(tmp_path / "b", _suite(ckpt, sharding, f"reference_digests_path: {tmp_path / 'digests'}"))
  assert len(ok_metrics(checked)) == 1
  assert checked.records[0].metrics["checkpoint_5_inventory/total_gb"].value > 0


def test_orbax_load_fails_when_the_checkpoint_changed_since_the_digests(tmp_path):
  ckpt, sharding = _checkpoint(tmp_path)
  ok_metrics(run_text(tmp_path / "a", _suite(ckpt, sharding, f"capture_digests_path: {tmp_path / 'd'}")))
  with corrupt_before(1, lambda: flip_chunks(tmp_path / "ckpt")):  # before the load
    outcome = run_text(tmp_path / "b", _suite(ckpt, sharding, f"reference_digests_path: {tmp_path / 'd'}"))
  ((kind, message),) = errors(outcome)
  assert kind == "DataMismatchError" and "['w']: digest differs" in message


def test_orbax_load_options_that_cannot_go_together_are_refused(tmp_path):
  ckpt, sharding = _checkpoint(tmp_path)
  with pytest.raises(ckptbench.ConfigError, match="give capture_digests_path or reference_digests_path, not both"):
    run_text(tmp_path / "a", _suite(ckpt, sharding, "capture_digests_path: x\n      reference_digests_path: y"))


def _safetensors_fixture(tmp_path):
  """Writes a scaled Mistral 7B as sharded safetensors (tensor-parallel sharding file) with `fixture`."""
  pytest.importorskip("safetensors", reason="the torch extra is not installed (pip install 'ckptbench[torch]')")
  from ckptbench.data import write_fixture

  suite = tmp_path / "prepare.yaml"
  suite.write_text(
      "suite_name: p\ncheckpoint_config: {preset: mistral-7b, scale: 0.0002}\n"
      "mesh_config: {mesh_axes: [tensor], ici_parallelism: {tensor: 8}}\nbenchmarks: [{generator: safetensors_load}]\n"
  )
  written = write_fixture(str(suite), tmp_path / "fx", "safetensors", shard_mb=2)
  return pathlib.Path(written["checkpoint"]), pathlib.Path(written["sharding"])


def _st_suite(files, sharding, extra: str) -> str:
  return (
      "suite_name: st\nmesh_config: {mesh_axes: [tensor], ici_parallelism: {tensor: 8}}\n"
      f"benchmarks:\n  - generator: safetensors_load\n    options:\n      checkpoint_path: {files}\n"
      f"      sharding_config_path: {sharding}\n{extra}"
  )


def test_fixture_writes_hub_style_sharded_safetensors(tmp_path):
  files, sharding = _safetensors_fixture(tmp_path)
  shards = sorted(p.name for p in files.glob("*.safetensors"))
  assert len(shards) > 1 and shards[0] == f"model-00001-of-{len(shards):05d}.safetensors"
  index = json.loads((files / "model.safetensors.index.json").read_text())
  assert index["weight_map"]["params.layers.layer_0.attention.wq"].endswith(".safetensors")
  assert json.loads(sharding.read_text())["params.layers.layer_0.attention.wq"] == [None, "tensor"]


def test_safetensors_load_sweeps_read_options_and_checks_digests(tmp_path):
  files, sharding = _safetensors_fixture(tmp_path)
  digests = tmp_path / "digests"
  ok_metrics(run_text(tmp_path / "a", _st_suite(files, sharding, f"      capture_digests_path: {digests}\n")))
  outcome = run_text(tmp_path / "b", _st_suite(files, sharding, (
      f"      reference_digests_path: {digests}\n"
      "      safetensors_max_over_read_ratio: [1.0, 4.0]\n      safetensors_read_chunk_mb: [1, 8]\n"
  )))
  metrics = ok_metrics(outcome)
  assert len(metrics) == 4
  by_chunk = {r.options["safetensors_read_chunk_mb"]: r.metrics for r in outcome.records}
  reads = lambda m: m["load_9_other/orbax_read_safetensors_storage_reads"].value  # noqa: E731
  assert reads(by_chunk[1]) > reads(by_chunk[8]) > 0  # smaller chunks, more ranged reads


def test_safetensors_load_fails_when_a_file_changed_since_the_digests(tmp_path):
  files, sharding = _safetensors_fixture(tmp_path)
  digests = tmp_path / "digests"
  ok_metrics(run_text(tmp_path / "a", _st_suite(files, sharding, f"      capture_digests_path: {digests}\n")))
  target = sorted(files.glob("*.safetensors"))[0]
  data = bytearray(target.read_bytes())
  data[-1] ^= 0xFF  # the last byte of the last tensor's data
  target.write_bytes(bytes(data))
  outcome = run_text(tmp_path / "b", _st_suite(files, sharding, f"      reference_digests_path: {digests}\n"))
  ((kind, message),) = errors(outcome)
  assert kind == "DataMismatchError" and "digest differs" in message
