"""`restore_and_broadcast`: one replica reads the checkpoint, then broadcasts it to the others.

The mesh is 2-D, (replica, model); every replica holds a full copy of the
data, sharded over `model` (the sharding names no `replica` axis). With
`use_load_and_broadcast` Orbax reads each array once, on replica 0, and copies
it to the other replicas; without it every replica reads the whole checkpoint
itself. Sweep `use_load_and_broadcast: [true, false]` to compare the two.

Load-and-broadcast turns negative zeros into positive ones (orbax-checkpoint
0.12.8); the check accepts that difference alone and counts it as
`load_9_other/signed_zero_flips`, and fails on any other.

The data is the suite's (saved first within the run) or a reference
checkpoint laid out by its sharding file. The loaded data is checked against
what was saved.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import numpy as np

import ckptbench
from ckptbench.benchmarks._reference import (
    ReferenceOptions,
    load_reference_unsharded,
    reference_abstract,
    require_data,
    require_replica_mesh,
)
from ckptbench.benchmarks.save_restore import collector_keys, orbax_context


@dataclasses.dataclass(frozen=True, kw_only=True)
class RestoreAndBroadcastOptions(ReferenceOptions):
  """Options of `restore_and_broadcast` (plus those of save_restore and the reference checkpoint).

  Attributes:
    use_load_and_broadcast: replica 0 reads and broadcasts (True, the default)
      or every replica reads for itself (False).
  """

  use_load_and_broadcast: bool | list[bool] = True


@ckptbench.benchmark_options(RestoreAndBroadcastOptions)
class RestoreAndBroadcastBenchmark(ckptbench.BenchmarksGenerator):
  """Measures `load` onto every replica of a (replica, model) mesh; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="restore_and_broadcast",
      measures="one replica loads then broadcasts, against every replica loading",
      example="restore_and_broadcast.yaml",
      saves_with=("orbax",),
      cold_load="load",
      orbax_alias="v1.restore_and_broadcast_benchmark.RestoreAndBroadcastBenchmark",
  )

  orbax_requires = ("v1_save_load",)  # v1.save/v1.load (0.12+)

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    from orbax.checkpoint import v1 as ocp

    options = context.options
    require_data(context.pytree, options, "restore_and_broadcast")
    replicas = require_replica_mesh(context.mesh, "restore_and_broadcast")
    metrics = ckptbench.Metrics()
    keys = collector_keys(options)
    metrics.record("load", "9_other/replicas", replicas, "count")
    if options.reference_checkpoint_path is not None:
      path = options.reference_checkpoint_path
      target = reference_abstract(options, context.mesh, per_replica=True)
    else:
      path = context.path / "checkpoint"
      target = ckptbench.abstract_pytree(context.pytree)
      with orbax_context(options), metrics.measure("save", keys):
        ocp.save(path, context.pytree)
    ckptbench.evict_for_load(path, metrics, "load", options.cold_cache)
    with orbax_context(options), metrics.measure("load", keys), context.trace("load"):
      restored = ocp.load(path, target)
    ckptbench.check_loaded_shardings(restored, target, "restore_and_broadcast's load")
    if options.verify:
      expected = context.pytree
      if options.reference_checkpoint_path is not None:
        expected = load_reference_unsharded(options)
      with metrics.measure("verify", ["time"]):
        try:
          ckptbench.verify_pytree(expected, restored)
          flips = 0
        except ckptbench.DataMismatchError:
          flips = signed_zero_flips(expected, restored)
          if flips is None or not options.use_load_and_broadcast:
            raise
      metrics.record("load", "9_other/signed_zero_flips", flips, "count")
    return ckptbench.TestResult(metrics=metrics)


def signed_zero_flips(expected: Any, restored: Any) -> int | None:
  """How many restored elements differ from the saved ones only in the sign of a zero.

  Orbax's load-and-broadcast turns -0.0 into +0.0 (seen with orbax-checkpoint
  0.12.8 on CPU), as a sum of replica 0's data with zeros from the others would.
  Returns None when anything else differs.
  """
  flips = 0
  pairs = zip(jax.tree.leaves(expected), jax.tree.leaves(restored))
  for want, got in pairs:
    if not isinstance(got, jax.Array):
      continue
    if not want.sharding.is_equivalent_to(got.sharding, got.ndim):
      want = jax.device_put(want, got.sharding)
    # Each process compares the shards it holds, keyed by their index.
    saved = {str(s.index): s.data for s in want.addressable_shards}
    bits = f"u{want.dtype.itemsize}"
    for shard in got.addressable_shards:
      have, need = np.asarray(shard.data), np.asarray(saved[str(shard.index)])
      differs = have.view(bits) != need.view(bits)
      if not differs.any():
        continue
      if not (np.all(have[differs] == 0) and np.all(need[differs] == 0)):
        return None
      flips += int(differs.sum())
  return flips
