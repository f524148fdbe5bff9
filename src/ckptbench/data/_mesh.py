"""MeshConfig -> jax.sharding.Mesh, and whether a mesh fits the live devices."""

from __future__ import annotations

import logging

import jax
import numpy as np
from jax.experimental import mesh_utils

from ckptbench.config import MeshConfig

_log = logging.getLogger(__name__)


def build_mesh(config: MeshConfig) -> jax.sharding.Mesh:
  """Builds the mesh over all global devices (ICI within a slice, DCN across)."""
  devices = jax.devices()
  ici = [config.ici_parallelism.get(a, 1) for a in config.mesh_axes]
  dcn_map = config.dcn_parallelism or {}
  dcn = [dcn_map.get(a, 1) for a in config.mesh_axes]
  if any(d > 1 for d in dcn):
    try:
      grid = mesh_utils.create_hybrid_device_mesh(
          ici,
          dcn,
          devices,
          process_is_granule=config.process_is_granule,
          allow_split_physical_axes=config.allow_split_physical_axes,
      )
      return jax.sharding.Mesh(grid, tuple(config.mesh_axes))
    except (ValueError, AssertionError, AttributeError) as e:  # AttributeError: devices without a slice index
      _log.info("hybrid mesh unavailable (%s); laying devices out in order", e)
    shape = [i * d for i, d in zip(ici, dcn)]
    return jax.sharding.Mesh(np.asarray(devices).reshape(shape), tuple(config.mesh_axes))
  try:
    grid = mesh_utils.create_device_mesh(
        ici, devices, allow_split_physical_axes=config.allow_split_physical_axes
    )
  except (ValueError, AssertionError, NotImplementedError) as e:
    _log.info("create_device_mesh failed (%s); laying devices out in order", e)
    grid = np.asarray(devices).reshape(ici)
  return jax.sharding.Mesh(grid, tuple(config.mesh_axes))
