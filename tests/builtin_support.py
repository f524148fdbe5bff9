"""Helpers for the built-in benchmark tests: small sharded trees and hand-built contexts."""

from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import pathlib  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

import ckptbench  # noqa: E402


def make_mesh(**sizes: int) -> Mesh:
  count = int(np.prod(list(sizes.values())))
  return Mesh(np.array(jax.devices()[:count]).reshape(tuple(sizes.values())), tuple(sizes))


def sharded(mesh: Mesh, shape: tuple[int, ...], spec: tuple, seed: int, dtype=np.float32) -> jax.Array:
  data = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
  return jax.device_put(data, NamedSharding(mesh, PartitionSpec(*spec)))


def context(generator, path: pathlib.Path, pytree=None, mesh=None, **options) -> ckptbench.TestContext:
  opts = generator.options_class(**options)
  assert opts.is_valid(), opts.invalid_reason()
  path.mkdir(parents=True, exist_ok=True)
  return ckptbench.TestContext(pytree=pytree, path=path, options=opts, mesh=mesh, name=type(generator).__name__)
