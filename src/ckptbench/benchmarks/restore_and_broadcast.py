"""`restore_and_broadcast`: one replica reads the checkpoint, then broadcasts it to the others.

The mesh is 2-D, (replica, model); every replica holds a full copy of the
data, sharded over `model`. With `use_load_and_broadcast` Orbax reads each
array once (on replica 0) and copies it to the other replicas; without it every
replica reads the whole checkpoint itself. Sweep `use_load_and_broadcast:
[true, false]` to compare the two.

The data comes from the suite (spec or preset, saved first within the run) or
from `reference_checkpoint_path` + `reference_sharding_path`, whose shardings
describe one replica and are extended to all of them.
"""

from __future__ import annotations

import dataclasses

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
    load_on_one_device,
    over_replicas,
    replica_mesh_devices,
)
from ckptbench.benchmarks._trees import abstract_of, assert_same_data


@dataclasses.dataclass(frozen=True, kw_only=True)
class RestoreAndBroadcastOptions(OrbaxOptions):
  """Options of `restore_and_broadcast` (plus the Orbax storage options).

  Attributes:
    reference_checkpoint_path: an existing checkpoint to load instead of the
      suite's data; needs `reference_sharding_path`.
    reference_sharding_path: the sharding JSON of one replica.
    use_load_and_broadcast: replica 0 reads and broadcasts (True) or every
      replica reads for itself (False).
  """

  reference_checkpoint_path: str | None = None
  reference_sharding_path: str | None = None
  use_load_and_broadcast: bool | list[bool] = True

  def invalid_reason(self) -> str | None:
    if (self.reference_checkpoint_path is None) != (self.reference_sharding_path is None):
      return "reference_checkpoint_path and reference_sharding_path go together"
    return super().invalid_reason()


@benchmark_options(RestoreAndBroadcastOptions)
class RestoreAndBroadcastBenchmark(BenchmarksGenerator):
  """Measures `load` onto every replica of a (replica, model) mesh; see the module docstring."""

  def test_fn(self, context: TestContext) -> TestResult:
    from orbax.checkpoint import v1 as ocp

    options = context.options
    replica0 = replica_mesh_devices(context.mesh, "restore_and_broadcast")
    metrics = Metrics()
    metrics.record("load", "9_other/replicas", context.mesh.shape["replica"], "count")
    if options.reference_checkpoint_path is not None:
      path = options.reference_checkpoint_path
      one_replica = abstract_from_sharding_file(options.reference_sharding_path, path, replica0)
      target = over_replicas(one_replica, context.mesh)
      with options.orbax_context():
        expected = load_on_one_device(path, target, replica0[0])
    else:
      if context.pytree is None:
        raise CkptbenchError(
            "restore_and_broadcast needs checkpoint data (checkpoint_config spec or preset) or"
            " reference_checkpoint_path + reference_sharding_path"
        )
      expected = context.pytree
      target = abstract_of(expected)
      path = context.path / "checkpoint"
      with options.orbax_context(), metrics.measure("save"):
        ocp.save(path, expected)
    with options.orbax_context(), metrics.measure("load"), context.trace("load"):
      restored = ocp.load(path, target)
    verified = assert_same_data(expected, restored, what="restore_and_broadcast load", target=target)
    metrics.record("load", "9_other/bytes_verified", verified, "bytes")
    return TestResult(metrics=metrics)
