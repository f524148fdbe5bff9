"""Deterministic synthetic pytrees, built shard by shard where each shard lives.

Each process builds only the shards of its own devices, through
`jax.make_array_from_callback`, so peak host memory is about the size of the
local shards (never a whole global array on one host). A shard's content
depends only on the seed, the array's path and the shard's position.
"""

from __future__ import annotations

import zlib
from typing import Any

import jax
import numpy as np

from ckptbench.config import ArraySpec, CheckpointConfig, ScalarSpec, SpecTree, parse_spec
from ckptbench.config import numpy_dtype
from ckptbench.errors import ConfigError


def _shard_rng(seed: int, path: tuple, index: tuple[slice, ...], shape: tuple[int, ...]) -> np.random.Generator:
  starts = [s.indices(n)[0] for s, n in zip(index, shape)]
  path_hash = zlib.crc32("/".join(map(str, path)).encode())
  return np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, path_hash, *starts]))


def fill_shard(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, fill: str) -> np.ndarray:
  """One shard's data: "normal" values, incompressible "random_bits", or "zeros"."""
  if fill == "zeros":
    return np.zeros(shape, dtype)
  if fill == "random_bits":
    raw = rng.bytes(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize)
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
  if dtype == np.bool_:
    return rng.random(shape, dtype=np.float32) < 0.5
  if np.issubdtype(dtype, np.integer):
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, dtype=dtype)
  if np.issubdtype(dtype, np.complexfloating):
    return (rng.standard_normal(shape, np.float32) + 1j * rng.standard_normal(shape, np.float32)).astype(dtype)
  return rng.standard_normal(shape, dtype=np.float32).astype(dtype, copy=False)


def sharding_for(array: ArraySpec, mesh: jax.sharding.Mesh | None) -> jax.sharding.Sharding:
  if mesh is None:
    return jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
  entries = [None if not axes else axes[0] if len(axes) == 1 else axes for axes in array.dim_axes()]
  while entries and entries[-1] is None:
    entries.pop()
  return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*entries))


def make_array(array: ArraySpec, mesh, *, seed: int, fill: str, path: tuple) -> jax.Array:
  """One global array, each local shard built and moved to its device in turn.

  Building one shard at a time (instead of handing every shard to XLA at once)
  keeps the host's peak at about the local data plus one shard.
  """
  dtype = numpy_dtype(array.dtype)
  shape = tuple(array.shape)
  sharding = sharding_for(array, mesh)
  buffers = []
  for device, index in sharding.addressable_devices_indices_map(shape).items():
    shard_shape = tuple(len(range(*s.indices(n))) for s, n in zip(index, shape))
    data = fill_shard(_shard_rng(seed, path, index, shape), shard_shape, dtype, fill)
    buffers.append(jax.device_put(data, device))
    del data
  return jax.make_array_from_single_device_arrays(shape, sharding, buffers)


def build_pytree(spec: SpecTree, mesh, *, seed: int = 0, fill: str = "normal", _path: tuple = ()) -> dict[str, Any]:
  """Builds the pytree described by `spec` on `mesh` (None: the first local device)."""
  tree: dict[str, Any] = {}
  for name, node in spec.items():
    path = _path + (name,)
    if isinstance(node, ArraySpec):
      tree[name] = make_array(node, mesh, seed=seed, fill=fill, path=path)
    elif isinstance(node, ScalarSpec):
      rng = np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32("/".join(path).encode())])
      tree[name] = int(rng.integers(0, 2**31)) if node.kind == "int" else f"ckptbench-{seed}-{'/'.join(path)}"
    else:
      tree[name] = build_pytree(node, mesh, seed=seed, fill=fill, _path=path)
  return tree


def synthetic_pytree(config: CheckpointConfig, mesh=None) -> dict[str, Any]:
  """The pytree `config.spec` describes, filled by `config.fill` from `config.random_seed`, on `mesh`.

  Raises:
    ConfigError: naming the spec's key that is wrong.
  """

  def error_at(message: str, path: tuple) -> Exception:
    return ConfigError(f"checkpoint_config.spec{''.join(f'.{p}' for p in path)}: {message}")

  return build_pytree(parse_spec(config.spec, error_at), mesh, seed=config.random_seed, fill=config.fill)
