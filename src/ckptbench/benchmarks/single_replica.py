"""`single_replica`: save, then restore with one replica reading and broadcasting to the others.

Orbax's `SingleReplicaArrayHandler` (v0 API): on restore only the processes of
the primary replica (`primary_replica_id` along mesh axis
`replica_axis_index`) read the checkpoint; they broadcast what they read to
the other replicas, in rounds bounded by `broadcast_memory_limit_bytes` (or
`broadcast_memory_scaling_factor` of the free device memory). Saving may split
the writes of replicated shards across replicas (`use_replica_parallel`).

The Orbax in-tree framework's `single_replica_benchmark.SingleReplicaBenchmark`
resolves here, with the same option names. `use_colocated_python` dispatches
the handler's work through Orbax's `ColocatedPythonDispatcher`, as the peer's
Pathways handler registry does; on the CPU backend (one process, cloudpickle
from the `pathways` extra) the colocated CPU devices are the devices
themselves, as the peer's runner has them on CPU; the record's notes say so.
`use_distributed_process_id` is accepted; on CPU jax.distributed the runtime
and distributed process ids are the same, so it changes nothing here.

Every array must be whole on each replica (sharded over the other axes only).
The handler is registered for the run only; the previous one is put back.
Measured: `save` (the blocking part), `wait_until_finished`, `restore` (with
`construct_restore_args` inside it); verified: the restored tree equals the
saved one on every process. The broadcast is a sum over replicas, which turns
-0.0 into +0.0 (orbax-checkpoint 0.12.8): the check accepts that difference
alone and counts it as `restore_9_other/signed_zero_flips`. The record's notes
say how the replicas were emulated.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
from collections.abc import Iterator, Sequence
from typing import Any

import jax

import ckptbench
from ckptbench.benchmarks import _multislice
from ckptbench.benchmarks.restore_and_broadcast import signed_zero_flips

_NAME = "single_replica"


@dataclasses.dataclass(frozen=True, kw_only=True)
class SingleReplicaOptions(ckptbench.BenchmarkOptions):
  """Options of `single_replica` (the peer's names; a list sweeps).

  Attributes:
    replica_axis_index: the index in mesh_axes of the replica axis.
    primary_replica_id: the replica that reads the checkpoint.
    use_replica_parallel: split the writes of replicated shards across replicas.
    broadcast_memory_limit_bytes: bytes broadcast per round (None: estimated
      from free device memory and the scaling factor).
    broadcast_memory_scaling_factor: fraction of free device memory to use.
    use_colocated_python: dispatch through colocated Python (Orbax's
      ColocatedPythonDispatcher; single-controller: one process).
    use_distributed_process_id: accepted for the peer's suites; no effect on
      CPU jax.distributed (runtime and distributed ids agree).
    use_ocdbt: write with the OCDBT driver.
    use_zarr3: write Zarr v3 (else v2).
    use_compression: zstd-compress array data.
    verify: compare what was restored with what was saved.
    cold_cache: evict the checkpoint from the page cache before the restore
      (`restore_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  replica_axis_index: int | Sequence[int] = 0
  primary_replica_id: int | Sequence[int] = 0
  use_replica_parallel: bool | Sequence[bool] = True
  broadcast_memory_limit_bytes: int | None | Sequence[int | None] = None
  broadcast_memory_scaling_factor: float | Sequence[float] = 0.75
  use_colocated_python: bool | Sequence[bool] = False
  use_distributed_process_id: bool | Sequence[bool] = True
  use_ocdbt: bool | Sequence[bool] = True
  use_zarr3: bool | Sequence[bool] = True
  use_compression: bool | Sequence[bool] = True
  verify: bool = True
  cold_cache: bool | Sequence[bool] = True

  def invalid_reason(self) -> str | None:
    if self.broadcast_memory_limit_bytes is not None and self.broadcast_memory_limit_bytes < 1:
      return "broadcast_memory_limit_bytes must be positive (or null)"
    if not 0 < self.broadcast_memory_scaling_factor <= 1:
      return "broadcast_memory_scaling_factor must be in (0, 1]"
    return None

  def unsupported_reason(self) -> str | None:
    if self.use_colocated_python and importlib.util.find_spec("cloudpickle") is None:
      return "use_colocated_python needs cloudpickle: pip install 'ckptbench[pathways]'"
    return None


@contextlib.contextmanager
def array_handler(handler: Any) -> Iterator[None]:
  """Registers `handler` for jax.Array for the block; puts the previous one back."""
  from orbax.checkpoint import type_handlers

  previous = type_handlers.get_type_handler(jax.Array)
  type_handlers.register_type_handler(jax.Array, handler, override=True)
  try:
    yield
  finally:
    type_handlers.register_type_handler(jax.Array, previous, override=True)


def _restore_args(abstract: Any) -> Any:
  """Single-replica restore arguments for the arrays; plain ones for other leaves."""
  import orbax.checkpoint as ocp

  def one(leaf: Any) -> Any:
    if isinstance(leaf, jax.ShapeDtypeStruct):
      return ocp.type_handlers.SingleReplicaArrayRestoreArgs(
          sharding=leaf.sharding, global_shape=leaf.shape, dtype=leaf.dtype
      )
    return ocp.RestoreArgs()

  return jax.tree.map(one, abstract)


@ckptbench.benchmark_options(SingleReplicaOptions)
class SingleReplicaBenchmark(ckptbench.BenchmarksGenerator):
  """Save, then single-replica restore and broadcast; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="single_replica",
      measures="Orbax's `SingleReplicaArrayHandler` (v0): save, then a restore that one replica reads and broadcasts to the others, in rounds bounded by a memory limit",
      example="single_replica.yaml",
      saves_with=("orbax",),
      cold_load="restore",
      orbax_alias="single_replica_benchmark.SingleReplicaBenchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    import orbax.checkpoint as ocp
    from orbax.checkpoint import type_handlers
    from orbax.checkpoint._src.metadata import array_metadata_store

    options: SingleReplicaOptions = context.options
    if context.pytree is None:
      raise ckptbench.CkptbenchError(f"{_NAME} needs checkpoint data (checkpoint_config spec or preset)")
    mesh = context.mesh
    axis = _multislice.replica_axis(mesh, options.replica_axis_index, _NAME)
    _multislice.require_replicated(context.pytree, axis, _NAME)
    replicas = mesh.shape[axis]
    if not 0 <= options.primary_replica_id < replicas:
      raise ckptbench.CkptbenchError(f"{_NAME}: primary_replica_id {options.primary_replica_id} is not a replica of {replicas}")
    owners = _multislice.processes_per_replica(mesh, options.replica_axis_index)
    metrics = ckptbench.Metrics()
    metrics.record("restore", "9_other/replicas", replicas, "count")
    metrics.record(
        "restore", "9_other/reads_checkpoint", int(jax.process_index() in owners[options.primary_replica_id]), "count"
    )
    notes = _multislice.emulation_notes(mesh, options.replica_axis_index)
    if options.use_colocated_python:
      notes = [*notes, *_colocated_notes()]
    handler = type_handlers.SingleReplicaArrayHandler(
        dispatcher=_dispatcher(options.use_colocated_python),
        replica_axis_index=options.replica_axis_index,
        primary_replica_id=options.primary_replica_id,
        broadcast_memory_limit_bytes=options.broadcast_memory_limit_bytes,
        broadcast_memory_scaling_factor=options.broadcast_memory_scaling_factor,
        use_replica_parallel=options.use_replica_parallel,
        # As the default handler: without it OCDBT saves find no array metadata on restore.
        array_metadata_store=array_metadata_store.Store(),
    )
    path = context.path / "single_replica_ckpt"
    pytree_handler = ocp.PyTreeCheckpointHandler(
        use_ocdbt=options.use_ocdbt, use_zarr3=options.use_zarr3, use_compression=options.use_compression
    )
    with array_handler(handler), ocp.AsyncCheckpointer(pytree_handler) as checkpointer:
      with metrics.measure("save"), context.trace("save"):
        checkpointer.save(path, args=ocp.args.PyTreeSave(context.pytree))
      with metrics.measure("wait_until_finished"):
        checkpointer.wait_until_finished()
      abstract = ckptbench.abstract_pytree(context.pytree)
      ckptbench.evict_for_load(path, metrics, "restore", options.cold_cache)
      with metrics.measure("restore"), context.trace("restore"):
        with metrics.measure("construct_restore_args", ["time"]):
          restore_args = _restore_args(abstract)
        restored = checkpointer.restore(path, args=ocp.args.PyTreeRestore(item=abstract, restore_args=restore_args))
    if options.verify:
      with metrics.measure("verify", ["time"]):
        try:
          ckptbench.verify_pytree(context.pytree, restored)
          flips = 0
        except ckptbench.DataMismatchError:
          flips = signed_zero_flips(context.pytree, restored)
          if flips is None:
            raise
      metrics.record("restore", "9_other/signed_zero_flips", flips, "count")
    return ckptbench.TestResult(metrics=metrics, notes=notes)


def _dispatcher(colocated: bool) -> Any:
  """Orbax's colocated-Python dispatcher when asked for (what its Pathways registry builds), else None."""
  if not colocated:
    return None
  from orbax.checkpoint._src.multihost import dispatchers  # noqa: PLC0415

  return dispatchers.ColocatedPythonDispatcher()


def _colocated_notes() -> list[str]:
  """The note of a colocated run; raises under several processes (colocated Python is single-controller)."""
  if jax.process_count() > 1:
    raise ckptbench.CkptbenchError(f"{_NAME}: use_colocated_python is single-controller (Pathways); run it in one process")
  if jax.default_backend() == "cpu":
    return ["colocated Python on the CPU backend: the colocated CPU devices are the devices themselves"]
  return []
