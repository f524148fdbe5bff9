"""`array_handler`: serialize and deserialize arrays with Orbax's ArrayHandler directly, below any checkpointer.

Orbax's in-tree `array_handler_benchmark.ArrayHandlerBenchmark` resolves here,
with the same option names. Every jax.Array of the checkpoint data is one
parameter (Orbax's suite has a single one named `array`). Measured:
`serialize` (until every write has finished), `merge_ocdbt` (with OCDBT: merging
the per-process databases into one), `metadata` (reading each array's metadata
back and checking its shape, dtype and sharding), `deserialize` (into the
saved shardings) and `verify` (the values; a mismatch fails the run).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import orbax.checkpoint as ocp
from etils import epath
from orbax.checkpoint._src.metadata import array_metadata_store

import ckptbench

th = ocp.type_handlers


@dataclasses.dataclass(frozen=True)
class ArrayHandlerOptions(ckptbench.BenchmarkOptions):
  """Options of `array_handler` (a list sweeps).

  Attributes:
    use_ocdbt: write into an OCDBT database (merged after the writes).
    use_zarr3: write Zarr v3 (else v2).
    use_colocated_python: dispatch through Pathways' colocated Python; needs a
      Pathways backend, so on CPU/GPU JAX such a combination is invalid.
    use_replica_parallel: split the writes of replicated shards across replicas.
    enable_replica_parallel_separate_folder: one folder per replica (needs
      use_replica_parallel and use_ocdbt).
    use_metadata_store: also write Orbax's array metadata store.
    cold_cache: evict the arrays from the page cache before they are deserialized
      (`deserialize_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  use_ocdbt: bool | Sequence[bool] = True
  use_zarr3: bool | Sequence[bool] = False
  use_colocated_python: bool | Sequence[bool] = False
  use_replica_parallel: bool | Sequence[bool] = False
  enable_replica_parallel_separate_folder: bool | Sequence[bool] = False
  use_metadata_store: bool | Sequence[bool] = False
  cold_cache: bool | Sequence[bool] = True

  def invalid_reason(self) -> str | None:
    if self.enable_replica_parallel_separate_folder and not (
        self.use_replica_parallel and self.use_ocdbt
    ):
      return "enable_replica_parallel_separate_folder needs use_replica_parallel and use_ocdbt"
    if self.use_colocated_python and not ocp.multihost.is_pathways_backend():
      return "use_colocated_python needs a Pathways backend; this JAX has none"
    return None


def _arrays(pytree: Any) -> dict[str, jax.Array]:
  """The jax.Array leaves, named by their key paths joined with '.'."""
  leaves = jax.tree_util.tree_flatten_with_path(pytree)[0]
  return {
      ".".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path): leaf
      for path, leaf in leaves
      if isinstance(leaf, jax.Array)
  }


def _check_metadata(name: str, metadata: Any, array: jax.Array) -> None:
  problems = []
  if tuple(metadata.shape) != array.shape:
    problems.append(f"shape {tuple(metadata.shape)} instead of {array.shape}")
  if metadata.dtype != array.dtype:
    problems.append(f"dtype {metadata.dtype} instead of {array.dtype}")
  sharding = None if metadata.sharding is None else metadata.sharding.to_jax_sharding()
  if sharding != array.sharding:
    problems.append(f"sharding {sharding} instead of {array.sharding}")
  if problems:
    raise ckptbench.DataMismatchError(f"metadata of {name!r}: {'; '.join(problems)}")


@ckptbench.benchmark_options(ArrayHandlerOptions)
class ArrayHandlerBenchmark(ckptbench.BenchmarksGenerator):
  """Writes and reads the arrays through an ArrayHandler; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="array_handler",
      measures="`ArrayHandler` serialize, OCDBT merge, metadata check, deserialize, below any checkpointer",
      example="array_handler.yaml",
      saves_with=("orbax",),
      cold_load="deserialize",
      orbax_alias="array_handler_benchmark.ArrayHandlerBenchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: ArrayHandlerOptions = context.options
    arrays = _arrays(context.pytree)
    if not arrays:
      raise ckptbench.CkptbenchError(
          "array_handler needs checkpoint data with arrays (checkpoint_config spec, preset or path)"
      )
    dispatcher = None
    if options.use_colocated_python:
      from orbax.checkpoint._src.multihost import dispatchers  # noqa: PLC0415  (Pathways only)

      dispatcher = dispatchers.ColocatedPythonDispatcher()
    handler = th.ArrayHandler(
        use_replica_parallel=options.use_replica_parallel,
        enable_replica_parallel_separate_folder=options.enable_replica_parallel_separate_folder,
        array_metadata_store=array_metadata_store.Store() if options.use_metadata_store else None,
        dispatcher=dispatcher,
    )
    ts_context = th.get_ts_context(use_ocdbt=options.use_ocdbt)
    directory = epath.Path(context.path)  # Orbax's metadata store needs an epath, not a pathlib.Path
    infos = [
        th.ParamInfo(
            name=name, parent_dir=directory, use_zarr3=options.use_zarr3,
            is_ocdbt_checkpoint=options.use_ocdbt, ts_context=ts_context,
            value_typestr=handler.typestr(), raise_array_data_missing_error=True,
        )
        for name in arrays
    ]  # fmt: skip
    values = list(arrays.values())
    metrics = ckptbench.Metrics()

    async def serialize() -> None:
      futures = await handler.serialize(values, infos, args=[th.SaveArgs()] * len(values))
      await asyncio.gather(*(asyncio.to_thread(f.result) for f in futures))

    with context.trace("serialize"), metrics.measure("serialize"):
      asyncio.run(serialize())
      ocp.multihost.sync_global_processes("ckptbench-array-handler-serialized")
    if options.use_ocdbt:
      with metrics.measure("merge_ocdbt"):
        asyncio.run(
            th.merge_ocdbt_per_process_files(directory, ts_context=ts_context, use_zarr3=options.use_zarr3)
        )
        ocp.multihost.sync_global_processes("ckptbench-array-handler-merged")
    with metrics.measure("metadata"):
      for info, value, metadata in zip(infos, values, asyncio.run(handler.metadata(infos))):
        _check_metadata(info.name, metadata, value)
    restore_args = [
        th.ArrayRestoreArgs(sharding=v.sharding, global_shape=v.shape, dtype=v.dtype) for v in values
    ]
    ckptbench.evict_for_load(context.path, metrics, "deserialize", options.cold_cache)
    with context.trace("deserialize"), metrics.measure("deserialize"), ckptbench.reading_checkpoint(context.path):
      restored = jax.block_until_ready(asyncio.run(handler.deserialize(infos, args=restore_args)))
    with metrics.measure("verify", ["time"]):
      ckptbench.verify_pytree(arrays, dict(zip(arrays, restored)))
    metrics.record("serialize", "9_other/arrays", len(values), "count")
    return ckptbench.TestResult(metrics=metrics)
