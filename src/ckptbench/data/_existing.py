"""Loading an existing Orbax checkpoint as the benchmark's pytree.

The optional sharding config is a JSON object mapping each array's path (keys
joined with "/", e.g. "params/layer_0/w") to its PartitionSpec as a list of
mesh-axis names, null, or lists of names:

    {"params/embed": ["fsdp", null], "params/layer_0/w": [null, ["fsdp", "tensor"]]}

Arrays it does not name are replicated over the mesh. The file that Orbax's
in-tree resharding benchmark reads is accepted too: keys joined with ".", each
entry `{"shape": [...], "dtype": "...", "sharding": {"mesh": {...}, "spec": [...]}}`;
its spec is used on the run's mesh (its recorded mesh shape is ignored).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import jax

from ckptbench.data._read_errors import reading_checkpoint
from ckptbench.distributed import pathways_load_context
from ckptbench.errors import CkptbenchError
from ckptbench.storage import read_location, write_location


def read_sharding_config(path: str | pathlib.Path) -> dict[str, jax.sharding.PartitionSpec]:
  try:
    raw = json.loads(read_location(path))
  except CkptbenchError as e:
    raise CkptbenchError(f"cannot read the sharding config: {e}") from None
  except (json.JSONDecodeError, UnicodeDecodeError) as e:
    raise CkptbenchError(f"{path}: the sharding config is not JSON: {e}") from None
  if not isinstance(raw, dict):
    raise CkptbenchError(f"{path}: the sharding config must map array paths to partition specs")
  out = {}
  for name, spec in raw.items():
    if isinstance(spec, dict) and isinstance(spec.get("sharding"), dict):  # Orbax's format
      name, spec = name.replace(".", "/"), spec["sharding"].get("spec")
    if not isinstance(spec, list):
      raise CkptbenchError(f"{path}: key '{name}': a partition spec is a list, got {spec!r}")
    out[name] = jax.sharding.PartitionSpec(*[tuple(e) if isinstance(e, list) else e for e in spec])
  return out


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
  default_name = leaf_name if layout == "ckptbench" else (lambda key_path: leaf_name(key_path).replace("/", "."))
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


def leaf_name(key_path) -> str:
  """A pytree key path as "a/b/c"."""
  parts = []
  for k in key_path:
    for attr in ("key", "idx", "name"):
      if hasattr(k, attr):
        parts.append(str(getattr(k, attr)))
        break
    else:
      parts.append(str(k))
  return "/".join(parts)


def abstract_from_checkpoint(path: str, mesh, shardings: dict[str, jax.sharding.PartitionSpec] | None):
  """ShapeDtypeStructs for every array of a checkpoint, sharded for `mesh`."""
  from orbax.checkpoint import v1 as ocp

  metadata = ocp.metadata(path).metadata
  shardings = shardings or {}

  def to_abstract(key_path, leaf):
    shape = getattr(leaf, "shape", None)
    if shape is None:
      return leaf
    name = leaf_name(key_path)
    if mesh is None:
      sharding = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
    else:
      sharding = jax.sharding.NamedSharding(mesh, shardings.get(name, jax.sharding.PartitionSpec()))
    return jax.ShapeDtypeStruct(tuple(shape), leaf.dtype, sharding=sharding)

  return jax.tree_util.tree_map_with_path(to_abstract, metadata)


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
    return ocp.load(path, abstract)


def abstract_pytree(pytree: Any) -> Any:
  """The pytree with every array replaced by its `jax.ShapeDtypeStruct` (sharding kept).

  Non-array leaves (ints, strings) stay as they are, which is what Orbax's
  `load` expects for them.
  """
  from orbax.checkpoint import v1 as ocp

  return jax.tree.map(
      lambda x: ocp.arrays.to_shape_dtype_struct(x) if hasattr(x, "shape") else x, pytree
  )
