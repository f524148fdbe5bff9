"""Per-tensor sharding files: how a checkpoint on disk is to be loaded.

The format is the one Orbax's in-tree resharding benchmark reads: a JSON object
mapping each array's dotted path (`params.layers.layer_0.mlp.up`) to

    {"shape": [4096, 14336], "dtype": "bfloat16",
     "sharding": {"mesh": {"shape": [2, 4], "axes": ["fsdp", "tensor"]},
                  "spec": ["fsdp", "tensor"]}}

`spec` has one entry per dimension: an axis name, null (not sharded) or a list
of axis names. The mesh takes the first `prod(shape)` devices in order.
"""

from __future__ import annotations

import json
import math
import pathlib
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ckptbench import CkptbenchError


def _dotted(path: tuple) -> str:
  parts = []
  for key in path:
    for attr in ("key", "idx", "name"):
      if hasattr(key, attr):
        parts.append(str(getattr(key, attr)))
        break
    else:
      parts.append(str(key))
  return ".".join(parts)


def _spec_entry(entry: Any) -> Any:
  return list(entry) if isinstance(entry, tuple) else entry


def sharding_file_entries(tree: Any) -> dict[str, Any]:
  """The sharding-file JSON object of a tree of arrays (or ShapeDtypeStructs) with NamedShardings."""
  entries = {}
  for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
    if not hasattr(leaf, "shape"):
      continue
    sharding = leaf.sharding
    if not isinstance(sharding, NamedSharding):
      raise CkptbenchError(
          f"{_dotted(path)}: a sharding file needs a NamedSharding, got {type(sharding).__name__}"
      )
    entries[_dotted(path)] = {
        "shape": list(leaf.shape),
        "dtype": np.dtype(leaf.dtype).name,
        "sharding": {
            "mesh": {
                "shape": list(sharding.mesh.devices.shape),
                "axes": list(sharding.mesh.axis_names),
            },
            "spec": [_spec_entry(e) for e in sharding.spec],
        },
    }
  return entries


def write_sharding_file(path: str | pathlib.Path, tree: Any) -> None:
  """Writes the sharding file of `tree` (see the module docstring)."""
  pathlib.Path(path).write_text(json.dumps(sharding_file_entries(tree), indent=1) + "\n")


def read_sharding_file(path: str | pathlib.Path) -> dict[str, Any]:
  """The parsed sharding file.

  Raises:
    CkptbenchError: when the file is missing or is not a JSON object.
  """
  try:
    entries = json.loads(pathlib.Path(path).read_text())
  except (OSError, json.JSONDecodeError) as e:
    raise CkptbenchError(f"cannot read sharding file {path}: {e}") from None
  if not isinstance(entries, dict):
    raise CkptbenchError(f"sharding file {path} must hold a JSON object of path -> sharding")
  return entries


def abstract_from_sharding_file(
    sharding_path: str | pathlib.Path, checkpoint_path: str | pathlib.Path, devices: list
) -> Any:
  """The abstract tree that loads `checkpoint_path` with the shardings of the file.

  Raises:
    CkptbenchError: when the file and the checkpoint name different arrays, an
      entry is malformed, or a mesh needs more devices than `devices` has.
  """
  from orbax.checkpoint import v1 as ocp

  entries = read_sharding_file(sharding_path)
  metadata = ocp.metadata(checkpoint_path).metadata
  meshes: dict[tuple, Mesh] = {}
  problems: list[str] = []

  def one(path, _leaf):
    name = _dotted(path)
    entry = entries.get(name)
    if entry is None:
      problems.append(f"{name} has no entry")
      return None
    try:
      mesh_shape = tuple(entry["sharding"]["mesh"]["shape"])
      axes = tuple(entry["sharding"]["mesh"]["axes"])
      spec = [tuple(e) if isinstance(e, list) else e for e in entry["sharding"]["spec"]]
      shape, dtype = tuple(entry["shape"]), np.dtype(entry["dtype"])
    except (KeyError, TypeError) as e:
      problems.append(f"{name}: malformed entry ({e!r})")
      return None
    if math.prod(mesh_shape) > len(devices):
      problems.append(f"{name}: mesh {list(mesh_shape)} needs more than the {len(devices)} devices")
      return None
    mesh = meshes.get((mesh_shape, axes))
    if mesh is None:
      chosen = np.array(devices[: math.prod(mesh_shape)]).reshape(mesh_shape)
      mesh = meshes[(mesh_shape, axes)] = Mesh(chosen, axes)
    return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, PartitionSpec(*spec)))

  abstract = jax.tree_util.tree_map_with_path(one, metadata)
  if problems:
    raise CkptbenchError(
        f"sharding file {sharding_path} does not fit checkpoint {checkpoint_path}: "
        + "; ".join(problems[:10])
    )
  return abstract


def over_replicas(abstract: Any, mesh: Mesh) -> Any:
  """Extends single-replica shardings to every replica of a (replica, ...) `mesh`.

  Each array keeps its partition spec; its mesh gains a leading `replica` axis,
  so every replica holds a full copy.
  """

  def one(leaf):
    if not isinstance(leaf, jax.ShapeDtypeStruct):
      return leaf
    inner = leaf.sharding.mesh
    if mesh.devices.size % inner.devices.size:
      raise CkptbenchError(
          f"a replica mesh of {inner.devices.size} devices does not divide the"
          f" {mesh.devices.size} devices of mesh {dict(mesh.shape)}"
      )
    devices = mesh.devices.reshape(-1, *inner.devices.shape)
    sharding = NamedSharding(Mesh(devices, ("replica", *inner.axis_names)), leaf.sharding.spec)
    return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding)

  return jax.tree.map(one, abstract)


def load_on_one_device(path: str | pathlib.Path, abstract: Any, device: Any) -> Any:
  """Loads `path` with every array whole on `device`: the reference to verify a sharded load against."""
  from orbax.checkpoint import v1 as ocp

  one = jax.sharding.SingleDeviceSharding(device)
  return ocp.load(
      path,
      jax.tree.map(
          lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=one)
          if isinstance(x, jax.ShapeDtypeStruct)
          else x,
          abstract,
      ),
  )


def replica_mesh_devices(mesh: Mesh, benchmark: str) -> list:
  """The devices of replica 0 of a 2-D (replica, model) mesh.

  Raises:
    CkptbenchError: when the mesh is not (replica, model).
  """
  if mesh is None or tuple(mesh.axis_names) != ("replica", "model"):
    got = None if mesh is None else list(mesh.axis_names)
    raise CkptbenchError(
        f"{benchmark} needs a mesh_config with mesh_axes [replica, model]; got {got}"
    )
  return list(mesh.devices[0].flat)
