"""Orbax's `v1.multi_slice_util` on ckptbench: abstract state for every replica of a multi-slice mesh."""

from __future__ import annotations

from typing import Any

import jax

from ckptbench.compat.orbax.core import checkpoint_generation


def get_multi_slice_abstract_state(
    context: Any,
    global_mesh: jax.sharding.Mesh,
    *,
    reference_checkpoint_path: Any,
    reference_sharding_path: Any,
) -> Any:
  """The checkpoint's abstract state, sharded on one replica by the sharding file, widened to all replicas.

  The sharding file (Orbax's format, see `core.checkpoint_generation`) lays
  each array out on the devices of replica 0 (the first slice of
  `global_mesh`'s axis 0); every array then gets a mesh with a leading
  "replica" axis over all of `global_mesh`'s devices and the same partition spec.

  Args:
    context: the `orbax.checkpoint.v1.Context` to read the metadata under.
    global_mesh: the mesh whose axis 0 is the replica axis.
    reference_checkpoint_path: the checkpoint.
    reference_sharding_path: its sharding file.
  """
  from orbax.checkpoint import v1 as ocp

  with ocp.Context(context=context):
    metadata = ocp.metadata(reference_checkpoint_path)
  replica_devices = list(global_mesh.devices[0].flat)
  one_replica = checkpoint_generation.get_abstract_state_from_sharding_config(
      reference_sharding_path, metadata.metadata, devices=replica_devices
  )

  def widened(abstract: jax.ShapeDtypeStruct) -> jax.ShapeDtypeStruct:
    mesh = abstract.sharding.mesh
    everywhere = jax.sharding.Mesh(
        global_mesh.devices.reshape(-1, *mesh.devices.shape), ("replica", *mesh.axis_names)
    )
    sharding = jax.sharding.NamedSharding(everywhere, abstract.sharding.spec)
    return jax.ShapeDtypeStruct(abstract.shape, abstract.dtype, sharding=sharding)

  return jax.tree.map(widened, one_replica)
