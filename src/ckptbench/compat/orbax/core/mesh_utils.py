"""Orbax's `core.mesh_utils`: log a mesh, and the replica of a mesh this process holds."""

from __future__ import annotations

import collections
import logging

import jax
import numpy as np

_log = logging.getLogger(__name__)


def pretty_log_mesh(msg: str, mesh: jax.sharding.Mesh) -> None:
  """Logs the mesh's axes and shape, its device grid (id, process, slice), and its processes."""
  grid = np.vectorize(lambda d: f"(id={d.id}, proc={d.process_index}, slice={getattr(d, 'slice_index', None)})")(mesh.devices)
  per_process = collections.Counter(d.process_index for d in mesh.devices.flat)
  in_mesh = {d.id for d in mesh.devices.flat}
  outside = collections.defaultdict(list)
  for device in jax.devices():
    if device.process_index in per_process and device.id not in in_mesh:
      outside[device.process_index].append(device.id)
  _log.info(
      "%s\nprocess %d: mesh axes %s, shape %s, device grid:\n%s\ndevices per process: %s"
      "\ndevices of these processes outside the mesh: %s",
      msg, jax.process_index(), mesh.axis_names, dict(mesh.shape), grid, dict(per_process), dict(outside),
  )  # fmt: skip


def get_local_replica_mesh(mesh: jax.sharding.Mesh, replica_axis_index: int) -> jax.sharding.Mesh:
  """The replica of `mesh` (its slice along `replica_axis_index`, kept as an axis of size 1) holding this
  process's devices; ValueError when none does."""
  me = jax.process_index()
  for i in range(mesh.devices.shape[replica_axis_index]):
    replica = np.take(mesh.devices, i, axis=replica_axis_index)
    if any(d.process_index == me for d in replica.flat):
      return jax.sharding.Mesh(np.expand_dims(replica, axis=replica_axis_index), mesh.axis_names)
  raise ValueError(f"no replica along axis {replica_axis_index} of mesh {dict(mesh.shape)} holds a device of process {me}")
