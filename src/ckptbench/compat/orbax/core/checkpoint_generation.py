"""Orbax's `core.checkpoint_generation` on ckptbench: synthetic checkpoints, abstract state from Orbax's sharding file.

The data is ckptbench's `synthetic_pytree` (what a suite's `checkpoint_config`
gives a run). Orbax's sharding config (`abstract_state.json`) maps each array,
its keys joined with ".", to its shape, dtype and sharding (`{"params.w":
{"shape": [8, 4], "dtype": "float32", "sharding": {"mesh": {"shape": [2, 4],
"axes": ["data", "model"]}, "spec": ["data", null]}}}`); ckptbench's
`read_sharding_config` reads its partition specs onto the suite's mesh, this
the whole of it, meshes included, as Orbax's load benchmarks do.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import jax
import numpy as np
from etils import epath

import ckptbench

_log = logging.getLogger(__name__)


def _entry_key(key_path: Any) -> str:
  """A key path as Orbax's sharding files name it: "a.b.c"."""
  return jax.tree_util.keystr(tuple(key_path), simple=True, separator=".")


def _spec_entry(e: Any) -> Any:
  return tuple(e) if isinstance(e, list) else e


def _abstract_array(key: str, entry: Any, devices: list[jax.Device], where: str) -> jax.ShapeDtypeStruct:
  try:
    mesh_shape, axes = entry["sharding"]["mesh"]["shape"], entry["sharding"]["mesh"]["axes"]
    mesh = jax.sharding.Mesh(np.array(devices).reshape(mesh_shape), axes)
    spec = jax.sharding.PartitionSpec(*[_spec_entry(e) for e in entry["sharding"]["spec"]])
    return jax.ShapeDtypeStruct(tuple(entry["shape"]), np.dtype(entry["dtype"]), sharding=jax.sharding.NamedSharding(mesh, spec))
  except (KeyError, TypeError, ValueError) as e:
    raise ckptbench.CkptbenchError(f"{where}: entry {key!r} is not a sharding entry Orbax writes: {type(e).__name__}: {e}") from None


def get_abstract_state_from_sharding_config(sharding_config_path: Any, metadata: Any, *, devices: list[jax.Device]) -> Any:
  """`metadata`'s tree (`ocp.metadata(path).metadata`) with every array replaced by its
  `jax.ShapeDtypeStruct` from the sharding file (local, gs:// or s3://), each entry's mesh laid over
  `devices` in order. CkptbenchError when the file cannot be read or parsed, or lacks an array."""
  where = str(sharding_config_path)
  try:
    entries = json.loads(ckptbench.read_location(where))
  except (json.JSONDecodeError, UnicodeDecodeError) as e:
    raise ckptbench.CkptbenchError(f"{where}: the sharding config is not JSON: {e}") from None
  if not isinstance(entries, dict):
    raise ckptbench.CkptbenchError(f"{where}: the sharding config must map array names to entries")

  def abstract(key_path: Any, _: Any) -> jax.ShapeDtypeStruct:
    key = _entry_key(key_path)
    if key not in entries:
      raise ckptbench.CkptbenchError(f"{where}: no entry for array {key!r} of the checkpoint")
    return _abstract_array(key, entries[key], devices, where)

  return jax.tree_util.tree_map_with_path(abstract, metadata)


def generate_checkpoint(config: ckptbench.CheckpointConfig, mesh: jax.sharding.Mesh | None = None) -> Any:
  """The pytree `config.spec` describes, on `mesh` (ckptbench's `synthetic_pytree`); ValueError
  (Orbax's) without a `spec`, ConfigError naming a wrong key of it."""
  if config.spec is None:
    raise ValueError("CheckpointConfig must have a `spec` if `path` is not provided.")
  return ckptbench.synthetic_pytree(config, mesh)


def generate_and_save_checkpoint(config: ckptbench.CheckpointConfig, output_dir: Any, mesh: jax.sharding.Mesh | None = None) -> None:
  """Writes the checkpoint `config.spec` describes to `output_dir` with Orbax's v1 `save`, replacing
  one there (the same config and seed write the same bytes, so a load's digests can be checked)."""
  out = epath.Path(output_dir)
  if out.exists() and any(out.iterdir()):
    _log.warning("A fixture is already present at %s; overwriting it.", out)
  ckptbench.orbax_v1_io().save(out, generate_checkpoint(config, mesh), overwrite=True)


def load_checkpoint(config: ckptbench.CheckpointConfig) -> Any:
  """Loads the checkpoint at `config.path` (ValueError, Orbax's, without one) onto the first local device:
  ckptbench's `abstract_from_checkpoint` and Orbax's v1 `load`, checked to land where asked."""
  if config.path is None:
    raise ValueError("CheckpointConfig must have a `path` to load a checkpoint from.")
  abstract = ckptbench.abstract_from_checkpoint(config.path, None, None)
  with ckptbench.reading_checkpoint(config.path):
    loaded = ckptbench.orbax_v1_io().load(config.path, abstract_state=abstract)
  ckptbench.check_loaded_shardings(loaded, abstract, f"loading {config.path}")
  return loaded
