"""Sharding files: matched to the checkpoint's arrays by name, laid out as asked, checked after the load.

Real Orbax saves and loads on 8 simulated CPU devices.
"""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from orbax.checkpoint import v1 as ocp

import ckptbench


@pytest.fixture
def checkpoint(tmp_path):
  path = tmp_path / "ckpt"
  tree = {"params": {"layers": {"0": {"w": np.arange(64 * 8, dtype=np.float32).reshape(64, 8)}}, "norm": np.ones(8)}}
  ocp.save(path, tree)
  return path


def _orbax_entry(shape, spec, mesh_shape, mesh_axes):
  return {"shape": shape, "dtype": "float32", "sharding": {"mesh": {"shape": mesh_shape, "axes": mesh_axes}, "spec": spec}}


def _write(tmp_path, content) -> str:
  path = tmp_path / "sharding.json"
  path.write_text(json.dumps(content))
  return str(path)


def test_orbax_format_names_match_by_dots_and_plain_names_by_slashes(tmp_path, checkpoint):
  mesh = jax.make_mesh((8,), ("fsdp",))
  dotted = _write(tmp_path, {"params.layers.0.w": _orbax_entry([64, 8], ["fsdp", None], [8], ["fsdp"])})
  abstract = ckptbench.abstract_from_checkpoint(str(checkpoint), mesh, ckptbench.read_sharding_config(dotted))
  assert abstract["params"]["layers"]["0"]["w"].sharding.spec == jax.sharding.PartitionSpec("fsdp", None)
  assert abstract["params"]["norm"].sharding.spec == jax.sharding.PartitionSpec()
  slashed = _write(tmp_path, {"params/layers/0/w": ["fsdp"]})
  abstract = ckptbench.abstract_from_checkpoint(str(checkpoint), mesh, ckptbench.read_sharding_config(slashed))
  assert abstract["params"]["layers"]["0"]["w"].sharding.spec == jax.sharding.PartitionSpec("fsdp")


def test_an_entry_that_matches_no_array_is_an_error_naming_it(tmp_path, checkpoint):
  mesh = jax.make_mesh((8,), ("fsdp",))
  path = _write(tmp_path, {"params/layers/0/w": ["fsdp"], "params.layers.7.w": ["fsdp"], "model/embed": [None]})
  with pytest.raises(ckptbench.CkptbenchError) as e:
    ckptbench.abstract_from_checkpoint(str(checkpoint), mesh, ckptbench.read_sharding_config(path))
  message = str(e.value)
  assert message.startswith(f"sharding file {path}: ")
  assert "model/embed matches no array" in message and "params.layers.7.w matches no array" in message


def test_a_per_replica_file_is_laid_out_on_each_replica_with_replica_in_front(tmp_path, checkpoint):
  mesh = jax.make_mesh((2, 4), ("replica", "model"))
  path = _write(tmp_path, {"params.layers.0.w": _orbax_entry([64, 8], ["fsdp", None], [1, 4, 1], ["data", "fsdp", "tensor"])})
  shardings = ckptbench.read_sharding_config(path)
  abstract = ckptbench.abstract_from_checkpoint(str(checkpoint), mesh, shardings, per_replica=True)
  sharding = abstract["params"]["layers"]["0"]["w"].sharding
  assert sharding.mesh.axis_names == ("replica", "data", "fsdp", "tensor")
  assert sharding.mesh.devices.shape == (2, 1, 4, 1)
  assert (sharding.mesh.devices.reshape(2, 4) == mesh.devices).all()  # replica 0's devices first
  loaded = ocp.load(str(checkpoint), abstract)
  ckptbench.check_loaded_shardings(loaded, abstract)
  assert {s.data.shape for s in loaded["params"]["layers"]["0"]["w"].addressable_shards} == {(16, 8)}
  with pytest.raises(ckptbench.CkptbenchError, match="names axes \\['fsdp'\\] that mesh \\['replica', 'model'\\] lacks"):
    ckptbench.abstract_from_checkpoint(str(checkpoint), mesh, shardings)  # not per replica: no such axis


def test_a_spec_on_axes_the_run_mesh_lacks_uses_the_recorded_mesh(tmp_path, checkpoint):
  mesh = jax.make_mesh((8,), ("tp",))
  path = _write(tmp_path, {"params.layers.0.w": _orbax_entry([64, 8], ["fsdp", None], [8], ["fsdp"])})
  abstract = ckptbench.abstract_from_checkpoint(str(checkpoint), mesh, ckptbench.read_sharding_config(path))
  sharding = abstract["params"]["layers"]["0"]["w"].sharding
  assert sharding.mesh.axis_names == ("fsdp",) and list(sharding.mesh.devices.flat) == list(mesh.devices.flat)


def test_a_load_that_returns_another_sharding_is_an_error(checkpoint):
  mesh = jax.make_mesh((8,), ("fsdp",))
  asked = ckptbench.abstract_from_checkpoint(str(checkpoint), mesh, {"params/layers/0/w": jax.sharding.PartitionSpec("fsdp")})
  replicated = ckptbench.abstract_from_checkpoint(str(checkpoint), mesh, None)
  loaded = ocp.load(str(checkpoint), replicated)
  with pytest.raises(ckptbench.CkptbenchError, match=r"the load did not return the sharding asked for: \['params'\]\['layers'\]\['0'\]\['w'\]"):
    ckptbench.check_loaded_shardings(loaded, asked)
  ckptbench.check_loaded_shardings(loaded, replicated)
