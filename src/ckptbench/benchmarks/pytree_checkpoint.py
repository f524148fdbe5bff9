"""`pytree_checkpoint`: the classic v0 path, a PyTreeCheckpointHandler behind a (Async)Checkpointer.

Orbax's in-tree `pytree_checkpoint_benchmark.PyTreeCheckpointBenchmark`
resolves here, with the same option names. Measured: `save` (the call; for an
async checkpointer only its blocking part), `wait_until_finished` (async: the
rest of the save), `restore` (into the saved shardings) and `verify` (what was
restored equals what was saved; a mismatch fails the run).

The array handler with the replica-parallel options goes into a type-handler
registry of this benchmark's own, so the options of one run never leak into
another benchmark through Orbax's global registry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp

import ckptbench
from ckptbench.benchmarks.save_restore import collector_keys


@dataclasses.dataclass(frozen=True)
class PyTreeCheckpointOptions(ckptbench.BenchmarkOptions):
  """Options of `pytree_checkpoint` (a list sweeps).

  Attributes:
    async_enabled: an AsyncCheckpointer (else a synchronous Checkpointer).
    use_ocdbt: write with the OCDBT driver.
    use_zarr3: write Zarr v3 (else v2).
    use_compression: zstd-compress array data.
    save_concurrent_gb: limit of bytes in flight while saving (GiB).
    restore_concurrent_gb: limit of bytes in flight while restoring (GiB).
    save_device_host_concurrent_gb: limit of bytes copied device-to-host at
      once while saving (GiB).
    metric_tracemalloc_enabled: add the tracemalloc collector.
    use_replica_parallel: split the writes of replicated shards across replicas.
    enable_replica_parallel_separate_folder: one folder per replica (needs
      use_replica_parallel and use_ocdbt).
    use_colocated_python: Pathways' colocated-Python handlers; needs a Pathways
      backend, so on CPU/GPU JAX such a combination is listed as invalid.
    cold_cache: evict the checkpoint from the page cache before the restore
      (`restore_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  async_enabled: bool | Sequence[bool] = True
  use_ocdbt: bool | Sequence[bool] = True
  use_zarr3: bool | Sequence[bool] = False
  use_compression: bool | Sequence[bool] = True
  save_concurrent_gb: int | None | Sequence[int | None] = None
  restore_concurrent_gb: int | None | Sequence[int | None] = None
  save_device_host_concurrent_gb: int | None | Sequence[int | None] = None
  metric_tracemalloc_enabled: bool = False
  use_replica_parallel: bool | Sequence[bool] = False
  enable_replica_parallel_separate_folder: bool | Sequence[bool] = False
  use_colocated_python: bool | Sequence[bool] = False
  cold_cache: bool | Sequence[bool] = True

  def invalid_reason(self) -> str | None:
    if self.enable_replica_parallel_separate_folder and not (
        self.use_replica_parallel and self.use_ocdbt
    ):
      return "enable_replica_parallel_separate_folder needs use_replica_parallel and use_ocdbt"
    return None

  def unsupported_reason(self) -> str | None:
    if self.use_colocated_python and not ocp.multihost.is_pathways_backend():
      return "use_colocated_python needs a Pathways backend; this JAX has none"
    return None


def array_registry(array_handler: Any) -> Any:
  """A type-handler registry of our own: `array_handler` for jax.Array, Orbax's defaults otherwise."""
  th = ocp.type_handlers
  return th.create_type_handler_registry(
      (int, th.ScalarHandler()),
      (float, th.ScalarHandler()),
      (bytes, th.ScalarHandler()),
      (np.number, th.ScalarHandler()),
      (np.ndarray, th.NumpyHandler()),
      (jax.Array, array_handler),
      (str, th.StringHandler()),
  )


@ckptbench.benchmark_options(PyTreeCheckpointOptions)
class PyTreeCheckpointBenchmark(ckptbench.BenchmarksGenerator):
  """Saves `context.pytree` through a PyTreeCheckpointHandler, restores and verifies it."""

  builtin = ckptbench.Builtin(
      name="pytree_checkpoint",
      measures="Orbax's classic v0 path: `PyTreeCheckpointHandler` behind an (Async)Checkpointer, save / wait / restore",
      example="pytree_checkpoint.yaml",
      saves_with=("orbax",),
      cold_load="restore",
      orbax_alias="pytree_checkpoint_benchmark.PyTreeCheckpointBenchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: PyTreeCheckpointOptions = context.options
    if context.pytree is None:
      raise ckptbench.CkptbenchError(
          "pytree_checkpoint needs checkpoint data: give checkpoint_config spec, preset or path"
      )
    metrics = ckptbench.Metrics()
    keys = collector_keys(options)
    path = context.path / "pytree"
    handler = ocp.PyTreeCheckpointHandler(
        use_ocdbt=options.use_ocdbt,
        use_zarr3=options.use_zarr3,
        use_compression=options.use_compression,
        save_concurrent_gb=options.save_concurrent_gb,
        restore_concurrent_gb=options.restore_concurrent_gb,
        save_device_host_concurrent_gb=options.save_device_host_concurrent_gb,
        type_handler_registry=array_registry(
            ocp.type_handlers.ArrayHandler(
                use_replica_parallel=options.use_replica_parallel,
                enable_replica_parallel_separate_folder=options.enable_replica_parallel_separate_folder,
            )
        ),
    )
    checkpointer = ocp.AsyncCheckpointer(handler) if options.async_enabled else ocp.Checkpointer(handler)
    try:
      with context.trace("save"), metrics.measure("save", keys):
        checkpointer.save(path, args=ocp.args.PyTreeSave(context.pytree))
      if options.async_enabled:
        with metrics.measure("wait_until_finished", keys):
          checkpointer.wait_until_finished()
      restore_args = ocp.checkpoint_utils.construct_restore_args(context.pytree)
      ckptbench.evict_for_load(path, metrics, "restore", options.cold_cache)
      with context.trace("restore"), metrics.measure("restore", keys), ckptbench.reading_checkpoint(path):
        restored = checkpointer.restore(
            path, args=ocp.args.PyTreeRestore(item=context.pytree, restore_args=restore_args)
        )
    finally:
      checkpointer.close()
    with metrics.measure("verify", ["time"]):
      ckptbench.verify_pytree(context.pytree, restored)
    return ckptbench.TestResult(metrics=metrics)
