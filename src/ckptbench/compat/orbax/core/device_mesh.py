"""Orbax's `core.device_mesh` on ckptbench: a `MeshConfig` -> `jax.sharding.Mesh` (ckptbench's `build_mesh`).

A hybrid (ICI x DCN) mesh on an accelerator is checked with Orbax's rules and messages first: the
devices split evenly into granules (slices; processes with `process_is_granule` or on SimDevice), the
DCN degrees multiply to the granule count and the ICI degrees to one granule's devices. A mesh that
breaks them is an error here, where `build_mesh` would lay the devices out in order.
"""

from __future__ import annotations

import logging
import math

import jax

import ckptbench
from ckptbench.compat.orbax.core import backends

_log = logging.getLogger(__name__)


def _num_slices() -> int:
  """How many slices the devices span (1 when devices carry no slice index)."""
  devices = jax.devices()
  if hasattr(devices[0], "slice_index"):
    return max(d.slice_index for d in devices) + 1
  return 1


def _process_is_dcn_granule(config: ckptbench.MeshConfig) -> bool:
  """Whether processes, not slices, are what DCN connects (SimDevice's hosts stand in for slices)."""
  return config.process_is_granule or backends.is_simdevice()


def _check_hybrid(config: ckptbench.MeshConfig, ici_shape: list[int], dcn_shape: list[int]) -> bool:
  """Raises ValueError (Orbax's messages) unless the shapes fit the devices; returns process_is_granule."""
  num_devices = len(jax.devices())
  process_is_granule = _process_is_dcn_granule(config)
  if process_is_granule:
    granule, granules = "process_count", jax.process_count()
  else:
    granule, granules = "num_slices", _num_slices()
  if num_devices % granules != 0:
    raise ValueError(f"Total devices ({num_devices}) must be divisible by {granule} ({granules}).")
  if math.prod(dcn_shape) != granules:
    raise ValueError(f"The product of DCN parallelism values {math.prod(dcn_shape)} must equal {granule} {granules}.")
  per_granule = num_devices // granules
  if math.prod(ici_shape) != per_granule:
    raise ValueError(f"The product of ICI parallelism values {math.prod(ici_shape)} must equal num_devices_per_granule {per_granule}.")
  return process_is_granule


def create_mesh(config: ckptbench.MeshConfig) -> jax.sharding.Mesh:
  """The mesh `config` describes, over every global device: ckptbench's `build_mesh`, after Orbax's
  checks of a hybrid mesh on an accelerator (ValueError when its degrees do not fit the devices)."""
  _log.info("Creating mesh with config: %s", config)
  if config.dcn_parallelism is not None and jax.default_backend() != "cpu":
    ici_shape = [config.ici_parallelism.get(axis, 1) for axis in config.mesh_axes]
    dcn_shape = [config.dcn_parallelism.get(axis, 1) for axis in config.mesh_axes]
    config = config.model_copy(update={"process_is_granule": _check_hybrid(config, ici_shape, dcn_shape)})
  return ckptbench.build_mesh(config)
