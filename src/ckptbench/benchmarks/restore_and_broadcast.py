"""`restore_and_broadcast`: one replica reads the checkpoint, then broadcasts it to the others.

The mesh is 2-D, (replica, model); every replica holds a full copy of the
data, sharded over `model` (the sharding names no `replica` axis). With
`use_load_and_broadcast` Orbax reads each array once, on replica 0, and copies
it to the other replicas; without it every replica reads the whole checkpoint
itself. Sweep `use_load_and_broadcast: [true, false]` to compare the two.

The data is the suite's (saved first within the run) or a reference
checkpoint laid out by its sharding file. The loaded data is checked against
what was saved.
"""

from __future__ import annotations

import dataclasses

import ckptbench
from ckptbench.benchmarks._reference import (
    ReferenceOptions,
    collector_keys,
    load_reference_unsharded,
    reference_abstract,
    require_data,
    require_replica_mesh,
)
from ckptbench.benchmarks.save_restore import orbax_context


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
      target = reference_abstract(options, context.mesh)
    else:
      path = context.path / "checkpoint"
      target = ckptbench.abstract_pytree(context.pytree)
      with orbax_context(options), metrics.measure("save", keys):
        ocp.save(path, context.pytree)
    with orbax_context(options), metrics.measure("load", keys), context.trace("load"):
      restored = ocp.load(path, target)
    if options.verify:
      expected = context.pytree
      if options.reference_checkpoint_path is not None:
        expected = load_reference_unsharded(options)
      with metrics.measure("verify", ["time"]):
        ckptbench.verify_pytree(expected, restored)
    return ckptbench.TestResult(metrics=metrics)
