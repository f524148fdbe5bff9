"""Orbax's `v1.multi_slice_util` on ckptbench: abstract state for every replica of a multi-slice mesh."""

from __future__ import annotations

from typing import Any

import jax

from ckptbench.compat.orbax.core import checkpoint_generation


def get_multi_slice_abstract_state(context: Any, global_mesh: jax.sharding.Mesh, *, reference_checkpoint_path: Any,
                                   reference_sharding_path: Any) -> Any:  # fmt: skip
  """The checkpoint's abstract state (its metadata read under the v1 `context`), sharded by the sharding
  file (Orbax's format) on replica 0 (the first slice of `global_mesh`'s axis 0), then widened: each
  array's mesh gains a leading "replica" axis over all of `global_mesh`'s devices, its spec kept."""
  from orbax.checkpoint import v1 as ocp

  with ocp.Context(context=context):
    metadata = ocp.metadata(reference_checkpoint_path)
  replica_devices = list(global_mesh.devices[0].flat)
  one_replica = checkpoint_generation.get_abstract_state_from_sharding_config(
      reference_sharding_path, metadata.metadata, devices=replica_devices
  )

  def widened(abstract: jax.ShapeDtypeStruct) -> jax.ShapeDtypeStruct:
    mesh = abstract.sharding.mesh
    everywhere = jax.sharding.Mesh(global_mesh.devices.reshape(-1, *mesh.devices.shape), ("replica", *mesh.axis_names))
    sharding = jax.sharding.NamedSharding(everywhere, abstract.sharding.spec)
    return jax.ShapeDtypeStruct(abstract.shape, abstract.dtype, sharding=sharding)

  return jax.tree.map(widened, one_replica)
