"""`replica_parallel`: save replicated data with the writes split across replicas, or not.

The mesh is 2-D, (replica, model); every replica holds a full copy of the
data. With `use_replica_parallel` each replica writes a share of every array;
without it one replica writes everything. Sweep `use_replica_parallel:
[true, false]` to compare. Each save is loaded back (`load`) and checked.

The data is the suite's, or a reference checkpoint laid out by its sharding
file and loaded before the measured saves. Also named
`replica_parallel_multislice` (the peer's v1 generator): the record's notes
say how the replicas (slices) were emulated.
"""

from __future__ import annotations

import dataclasses
import gc

import ckptbench
from ckptbench.benchmarks import _multislice
from ckptbench.benchmarks._reference import (
    ReferenceOptions,
    reference_abstract,
    require_data,
    require_replica_mesh,
)
from ckptbench.benchmarks.save_restore import collector_keys, orbax_context


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReplicaParallelOptions(ReferenceOptions):
  """Options of `replica_parallel` (plus those of save_restore and the reference checkpoint).

  Attributes:
    num_savings: saves per run, each to its own directory.
  """

  num_savings: int = 1

  def invalid_reason(self) -> str | None:
    if self.num_savings < 1:
      return "num_savings must be at least 1"
    return super().invalid_reason()


@ckptbench.benchmark_options(ReplicaParallelOptions)
class ReplicaParallelBenchmark(ckptbench.BenchmarksGenerator):
  """Measures `save` (and `save_blocking` when async) of replicated data; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="replica_parallel",
      measures="saving with writes split across replicas against one replica writing",
      example="replica_parallel.yaml",
      saves_with=("orbax",),
      cold_load="load",
      orbax_alias="v1.replica_parallel_multislice_benchmark.ReplicaParallelMultislice",
      also_named=("replica_parallel_multislice",),
  )

  orbax_requires = ("v1_save_load",)  # v1.save/v1.load (0.12+)

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    from orbax.checkpoint import v1 as ocp

    options = context.options
    require_data(context.pytree, options, "replica_parallel")
    replicas = require_replica_mesh(context.mesh, "replica_parallel")
    metrics = ckptbench.Metrics()
    keys = collector_keys(options)
    metrics.record("save", "9_other/replicas", replicas, "count")
    data = context.pytree
    if options.reference_checkpoint_path is not None:
      with orbax_context(options):
        reference = reference_abstract(options, context.mesh, per_replica=True)
        data = ocp.load(options.reference_checkpoint_path, reference)
      ckptbench.check_loaded_shardings(data, reference, "replica_parallel's reference load")
    abstract = ckptbench.abstract_pytree(data)
    for i in range(options.num_savings):
      path = context.path / f"save_{i}"
      with orbax_context(options), metrics.measure("save", keys), context.trace("save"):
        if options.async_enabled:
          with metrics.measure("save_blocking", keys):
            pending = ocp.save_async(path, data)
          pending.result()
        else:
          ocp.save(path, data)
      if options.verify:
        ckptbench.evict_for_load(path, metrics, "load", options.cold_cache)
        with orbax_context(options), metrics.measure("load", keys):
          restored = ocp.load(path, abstract)
        ckptbench.check_loaded_shardings(restored, abstract, "replica_parallel's load")
        with metrics.measure("verify", ["time"]):
          ckptbench.verify_pytree(data, restored)
        del restored
      gc.collect()
    return ckptbench.TestResult(metrics=metrics, notes=_multislice.emulation_notes(context.mesh, 0))
