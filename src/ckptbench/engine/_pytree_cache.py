"""The checkpoint data of a run, built once for the benchmarks that share it."""

from __future__ import annotations

import logging
import time
from typing import Any

import jax

from ckptbench.data import build_mesh, build_pytree, load_existing
from ckptbench.engine._sweep import PlannedBenchmark

_log = logging.getLogger(__name__)


class PytreeCache:
  """Keeps the most recent checkpoint data, so benchmarks sharing it build it once.

  With `reuse` False (the suite's `reuse_checkpoint: false`) every run builds its own.
  Data a run deleted or donated (`jax.Array.delete()`, a donating jit) is built
  again for the next, so every run starts from intact data.
  """

  def __init__(self, reuse: bool = True):
    self._reuse = reuse
    self._key: tuple[int, int] | None = None
    self._value: Any = None
    self._mesh: Any = None

  def get(self, bench: PlannedBenchmark) -> tuple[Any, Any]:
    key = (bench.checkpoint_index, bench.mesh_index)
    if key != self._key or not self._reuse or _deleted(self._value):
      if key == self._key and self._reuse:
        _log.info("a previous run deleted or donated arrays of the checkpoint data; building it again")
      self._key, self._value, self._mesh = None, None, None  # free the old data first
      mesh = None if bench.mesh is None else build_mesh(bench.mesh)
      ckpt = bench.checkpoint
      t0 = time.perf_counter()
      if ckpt.spec is not None:
        value = build_pytree(ckpt.spec, mesh, seed=ckpt.config.random_seed, fill=ckpt.config.fill)
      elif ckpt.config.path is not None:
        value = load_existing(
            ckpt.config.path, mesh, ckpt.config.sharding_config_path,
            ckpt.config.load_with_colocated_python,
        )  # fmt: skip
      else:
        value = None
      # device_put returns before its copy is done, holding the host shard until then: the run
      # starts once its data is in place (else its first block pays for the copies and its memory
      # readings see the shards freed inside it).
      jax.block_until_ready(value)
      _log.info("checkpoint data for %s ready in %.2f s", bench.name, time.perf_counter() - t0)
      self._key, self._value, self._mesh = key, value, mesh
    return self._value, self._mesh


def _deleted(pytree: Any) -> bool:
  """Whether any array of `pytree` has been deleted (freed, or donated to a computation)."""
  return any(isinstance(x, jax.Array) and x.is_deleted() for x in jax.tree.leaves(pytree))
