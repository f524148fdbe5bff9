"""Loading an existing Orbax checkpoint as the benchmark's pytree.

The optional sharding file (`_sharding_file.py` reads it; docs/builtins.md,
"Sharding files") maps array names to partition specs; arrays it does not name
are replicated over the mesh, and an entry that names no array is an error.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Mapping
from typing import Any

import jax

from ckptbench.data._leaf_names import leaf_name
from ckptbench.data._read_errors import reading_checkpoint
from ckptbench.data._sharding_file import ShardingLayout, check_loaded_shardings, read_sharding_config
from ckptbench.distributed import pathways_load_context
from ckptbench.storage import write_location


def write_sharding_config(path: str | pathlib.Path, pytree: Any, *, name_of: Any = None, layout: str = "ckptbench") -> None:
  """Writes the sharding config of a pytree of NamedSharding arrays.

  `layout` "ckptbench" maps each array's name (default: its keys joined with
  "/") to its partition spec. "orbax" writes the file Orbax's load benchmarks
  read (`abstract_state.json`): each name (default: keys joined with ".") maps
  to its shape, dtype and sharding, the mesh's shape and axes included.
  `name_of(key_path)` names each array.
  """
  if layout not in ("ckptbench", "orbax"):
    raise ValueError(f"layout must be 'ckptbench' or 'orbax', got {layout!r}")
  default_name = leaf_name if layout == "ckptbench" else (lambda key_path: leaf_name(key_path, "."))
  out: dict[str, Any] = {}
  for key_path, leaf in jax.tree_util.tree_leaves_with_path(pytree):
    sharding = getattr(leaf, "sharding", None)
    if not isinstance(sharding, jax.sharding.NamedSharding):
      continue
    spec = [list(e) if isinstance(e, tuple) else e for e in sharding.spec]
    if layout == "orbax":
      mesh = {"shape": list(sharding.mesh.devices.shape), "axes": list(sharding.mesh.axis_names)}
      spec = {"shape": list(leaf.shape), "dtype": str(leaf.dtype), "sharding": {"mesh": mesh, "spec": spec}}
    out[(name_of or default_name)(key_path)] = spec
  write_location(path, json.dumps(out, indent=1, sort_keys=True).encode())


def abstract_from_checkpoint(
    path: str, mesh, shardings: Mapping[str, jax.sharding.PartitionSpec] | None, *, per_replica: bool = False
):
  """ShapeDtypeStructs for every array of a checkpoint, sharded for `mesh` as `shardings` asks.

  `shardings` is a sharding file read (`read_sharding_config`) or a plain
  mapping of array names to partition specs; arrays it does not name are
  replicated. `per_replica`: the file describes one replica of a mesh whose
  first axis is `replica` (see `ckptbench.data._sharding_file`).

  Raises:
    CkptbenchError: naming every entry that matches no array or cannot be laid out.
  """
  metadata = _metadata(path)
  layout = None if mesh is None else ShardingLayout(shardings, mesh, per_replica)

  def to_abstract(key_path, leaf):
    shape = getattr(leaf, "shape", None)
    if shape is None:
      return leaf
    if layout is None:
      sharding = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
    else:
      sharding = layout.sharding(key_path)
    return jax.ShapeDtypeStruct(tuple(shape), leaf.dtype, sharding=sharding)

  abstract = jax.tree_util.tree_map_with_path(to_abstract, metadata)
  if layout is not None:
    layout.raise_problems(str(path))
  return abstract


def load_existing(
    path: str, mesh, sharding_config_path: str | None = None, load_with_colocated_python: bool = False
) -> Any:
  """Loads the checkpoint at `path` onto `mesh` with the configured shardings.

  On Pathways it loads through colocated Python when `load_with_colocated_python`.
  """
  from orbax.checkpoint import v1 as ocp

  shardings = read_sharding_config(sharding_config_path) if sharding_config_path else None
  abstract = abstract_from_checkpoint(path, mesh, shardings)
  with pathways_load_context(load_with_colocated_python), reading_checkpoint(path):
    loaded = _load_pytree_dir(path, abstract) if is_pytree_dir(path) else ocp.load(path, abstract)
  check_loaded_shardings(loaded, abstract, f"loading {path}")
  return loaded


def is_pytree_dir(path: str) -> bool:
  """Whether `path` is a bare PyTree checkpoint (the `items` of a v0 CheckpointManager step).

  Orbax's v1 `load` reads a step directory or a v1 checkpoint, not the item
  inside a v0 step; Orbax's benchmark framework loads `checkpoint_config.path`
  with the v0 PyTree handler, which reads exactly that item. Such a directory
  has the PyTree metadata and no checkpoint metadata of its own.
  """
  from etils import epath  # noqa: PLC0415

  root = epath.Path(path)
  try:
    return (root / "_METADATA").exists() and not (root / "_CHECKPOINT_METADATA").exists()
  except Exception:  # noqa: BLE001  (an unreachable store: the load reports it)
    return False


def _metadata(path: str) -> Any:
  """The checkpoint's tree of array metadata (v1 checkpoints and bare PyTree directories)."""
  import orbax.checkpoint as ocp0  # noqa: PLC0415
  from orbax.checkpoint import v1 as ocp  # noqa: PLC0415

  if not is_pytree_dir(path):
    return ocp.metadata(path).metadata
  with ocp0.Checkpointer(ocp0.PyTreeCheckpointHandler()) as checkpointer:
    return checkpointer.metadata(path).item_metadata.tree


def _load_pytree_dir(path: str, abstract: Any) -> Any:
  """Loads a bare PyTree checkpoint as Orbax's benchmark framework does (v0 PyTree handler)."""
  import orbax.checkpoint as ocp0  # noqa: PLC0415

  restore_args = ocp0.checkpoint_utils.construct_restore_args(abstract)
  with ocp0.Checkpointer(ocp0.PyTreeCheckpointHandler()) as checkpointer:
    return checkpointer.restore(path, args=ocp0.args.PyTreeRestore(item=abstract, restore_args=restore_args))


def abstract_pytree(pytree: Any) -> Any:
  """The pytree with every array replaced by its `jax.ShapeDtypeStruct` (sharding kept).

  Non-array leaves (ints, strings) stay as they are, which is what Orbax's
  `load` expects for them.
  """
  from orbax.checkpoint import v1 as ocp

  return jax.tree.map(
      lambda x: ocp.arrays.to_shape_dtype_struct(x) if hasattr(x, "shape") else x, pytree
  )
