"""orbax_load: loading an existing checkpoint, per-host SHA-256 digests captured and checked."""

from __future__ import annotations

import json

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
  assert m["load_0_basics/time_s"]["value"] > 0 and m["digest_9_other/arrays"]["value"] == 2
  digests = json.loads((tmp_path / "digests" / "host_00000.json").read_text())
  assert sorted(digests) == ["['b']", "['w']"] and all(len(d) == 64 for d in digests.values())
  checked = run_text(tmp_path / "b", _suite(ckpt, sharding, f"reference_digests_path: {tmp_path / 'digests'}"))
  assert len(ok_metrics(checked)) == 1
  assert checked.records[0]["metrics"]["checkpoint_5_inventory/total_gb"]["value"] > 0


def test_orbax_load_fails_when_the_checkpoint_changed_since_the_digests(tmp_path):
  ckpt, sharding = _checkpoint(tmp_path)
  ok_metrics(run_text(tmp_path / "a", _suite(ckpt, sharding, f"capture_digests_path: {tmp_path / 'd'}")))
  with corrupt_before(1, lambda: flip_chunks(tmp_path / "ckpt")):  # before the load
    outcome = run_text(tmp_path / "b", _suite(ckpt, sharding, f"reference_digests_path: {tmp_path / 'd'}"))
  ((kind, message),) = errors(outcome)
  assert kind == "DataMismatchError" and "['w']: digest differs" in message


def test_orbax_load_options_that_cannot_go_together_drop_the_only_sweep_point_and_say_why(tmp_path):
  ckpt, sharding = _checkpoint(tmp_path)
  with pytest.raises(ckptbench.CkptbenchError, match="every sweep point was dropped.*not both"):
    run_text(tmp_path / "a", _suite(ckpt, sharding, "capture_digests_path: x\n      reference_digests_path: y"))
  assert not (tmp_path / "a" / "out" / "results.jsonl").exists()
