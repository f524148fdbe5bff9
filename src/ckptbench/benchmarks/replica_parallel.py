"""`replica_parallel`: save replicated data with the writes split across replicas, or not.

The mesh is 2-D, (replica, model); every replica holds a full copy of the
data. With `use_replica_parallel` each replica writes a share of every array;
without it replica 0 writes everything. Sweep `use_replica_parallel:
[true, false]` to compare. Each save is loaded back and compared with the data.

The data comes from the suite (spec or preset) or from
`reference_checkpoint_path` + `reference_sharding_path` (one replica's
shardings, extended to all replicas), loaded before the measured saves.
"""

from __future__ import annotations

import dataclasses
import gc

from ckptbench import (
    BenchmarksGenerator,
    CkptbenchError,
    Metrics,
    TestContext,
    TestResult,
    benchmark_options,
)
from ckptbench.benchmarks._orbax import OrbaxOptions
from ckptbench.benchmarks._reference import (
    abstract_from_sharding_file,
    over_replicas,
    replica_mesh_devices,
)
from ckptbench.benchmarks._trees import abstract_of, assert_same_data


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReplicaParallelOptions(OrbaxOptions):
  """Options of `replica_parallel` (plus the Orbax storage options).

  Attributes:
    reference_checkpoint_path: an existing checkpoint to save again instead of
      the suite's data; needs `reference_sharding_path`.
    reference_sharding_path: the sharding JSON of one replica.
    num_savings: saves per run, each to its own directory.
  """

  reference_checkpoint_path: str | None = None
  reference_sharding_path: str | None = None
  num_savings: int = 1

  def invalid_reason(self) -> str | None:
    if (self.reference_checkpoint_path is None) != (self.reference_sharding_path is None):
      return "reference_checkpoint_path and reference_sharding_path go together"
    if self.num_savings < 1:
      return "num_savings must be at least 1"
    return super().invalid_reason()


@benchmark_options(ReplicaParallelOptions)
class ReplicaParallelBenchmark(BenchmarksGenerator):
  """Measures `save` (and `save_blocking` when async) of replicated data; see the module docstring."""

  def test_fn(self, context: TestContext) -> TestResult:
    from orbax.checkpoint import v1 as ocp

    options = context.options
    replica0 = replica_mesh_devices(context.mesh, "replica_parallel")
    metrics = Metrics()
    metrics.record("save", "9_other/replicas", context.mesh.shape["replica"], "count")
    if options.reference_checkpoint_path is not None:
      path = options.reference_checkpoint_path
      one_replica = abstract_from_sharding_file(options.reference_sharding_path, path, replica0)
      with options.orbax_context():
        data = ocp.load(path, over_replicas(one_replica, context.mesh))
    elif context.pytree is not None:
      data = context.pytree
    else:
      raise CkptbenchError(
          "replica_parallel needs checkpoint data (checkpoint_config spec or preset) or"
          " reference_checkpoint_path + reference_sharding_path"
      )
    for i in range(options.num_savings):
      target = context.path / f"save_{i}"
      with options.orbax_context(), metrics.measure("save"), context.trace("save"):
        if options.async_enabled:
          with metrics.measure("save_blocking"):
            pending = ocp.save_async(target, data)
          pending.result()
        else:
          ocp.save(target, data)
      with options.orbax_context():
        restored = ocp.load(target, abstract_of(data))
      verified = assert_same_data(data, restored, what=f"replica_parallel save {i}")
      del restored
      gc.collect()
    metrics.record("save", "9_other/bytes_verified", verified, "bytes")
    return TestResult(metrics=metrics)
