"""`save_restore`: save a pytree with Orbax's v1 API, load it back, check it is the same.

The Orbax in-tree framework's `v1.benchmark.Benchmark` resolves here, with the
same option names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import ckptbench

_GIB = 1 << 30


@dataclasses.dataclass(frozen=True)
class SaveRestoreOptions(ckptbench.BenchmarkOptions):
  """Options of the save/restore round trip (a list sweeps).

  Attributes:
    async_enabled: save with `save_async`; records the blocking part
      (`save_blocking`), the background part (`save_background`) and the whole
      (`save`).
    use_ocdbt: write with the OCDBT driver.
    use_zarr3: write Zarr v3 (else v2).
    use_compression: zstd-compress array data.
    use_replica_parallel: split the writes of replicated shards across replicas.
    enable_replica_parallel_separate_folder: one folder per replica (needs
      use_replica_parallel and use_ocdbt).
    use_load_and_broadcast: one replica loads, then broadcasts to the others.
    chunk_byte_size: target size of array chunks in bytes.
    save_concurrent_gb: limit of bytes in flight while saving (GiB).
    restore_concurrent_gb: limit of bytes in flight while loading (GiB).
    metric_tracemalloc_enabled: add the tracemalloc collector.
    cold_cache: evict the checkpoint from the page cache before the load, so
      the load reads the storage, not memory (default, as MLPerf Storage
      requires). Each file's pages are evicted with posix_fadvise, which
      leaves other processes' cache alone; only where that is unavailable is
      the whole page cache dropped (root). Every load records how it read:
      `load_0_basics/cold_cache_<how>` (see `ckptbench.evict_for_load`).
    verify: compare what was loaded with what was saved (fails the run if not).
  """

  async_enabled: bool | Sequence[bool] = True
  use_ocdbt: bool | Sequence[bool] = True
  use_zarr3: bool | Sequence[bool] = True
  use_compression: bool | Sequence[bool] = True
  use_replica_parallel: bool | Sequence[bool] = False
  enable_replica_parallel_separate_folder: bool | Sequence[bool] = False
  use_load_and_broadcast: bool | Sequence[bool] = False
  chunk_byte_size: int | None | Sequence[int | None] = None
  save_concurrent_gb: float | None | Sequence[float | None] = None
  restore_concurrent_gb: float | None | Sequence[float | None] = None
  metric_tracemalloc_enabled: bool = False
  cold_cache: bool | Sequence[bool] = True
  verify: bool = True

  def invalid_reason(self) -> str | None:
    if self.enable_replica_parallel_separate_folder and not (
        self.use_replica_parallel and self.use_ocdbt
    ):
      return "enable_replica_parallel_separate_folder needs use_replica_parallel and use_ocdbt"
    return None

  def unsupported_reason(self) -> str | None:
    return ckptbench.orbax_capabilities().missing_options(orbax_settings(self))


def orbax_settings(options: SaveRestoreOptions) -> dict[str, dict[str, object]]:
  """The Orbax v1 Context settings the options ask for (see `ckptbench.orbax_v1_context`).

  Options left at Orbax's own default are not set, so a release that lacks the option
  still runs them.
  """
  saving = {
      "use_ocdbt": options.use_ocdbt,
      "use_zarr3": options.use_zarr3,
      "use_replica_parallel": options.use_replica_parallel,
      "storage_options.chunk_byte_size": options.chunk_byte_size,
  }
  if not options.use_compression:
    saving["use_compression"] = False
  if options.enable_replica_parallel_separate_folder:
    saving["enable_replica_parallel_separate_folder"] = True
  settings: dict[str, dict[str, object]] = {"saving": saving}
  if options.use_load_and_broadcast:
    settings["loading"] = {"use_load_and_broadcast": True}
  memory = {}
  if options.save_concurrent_gb is not None:
    memory["write_concurrent_bytes"] = int(options.save_concurrent_gb * _GIB)
  if options.restore_concurrent_gb is not None:
    memory["read_concurrent_bytes"] = int(options.restore_concurrent_gb * _GIB)
  if memory:
    settings["memory"] = memory
  return settings


def orbax_context(options: SaveRestoreOptions):
  """An Orbax v1 Context configured from the options."""
  return ckptbench.orbax_v1_context(orbax_settings(options))


def collector_keys(options: SaveRestoreOptions) -> list[str] | None:
  """The collectors to measure with: the defaults, plus tracemalloc when asked for."""
  if options.metric_tracemalloc_enabled:
    return ckptbench.default_collectors() + ["tracemalloc"]
  return None


@ckptbench.benchmark_options(SaveRestoreOptions)
class SaveRestoreBenchmark(ckptbench.BenchmarksGenerator):
  """Saves `context.pytree`, loads it back and verifies it."""

  builtin = ckptbench.Builtin(
      name="save_restore",
      measures="save (sync or async: blocking, background, whole) and load with Orbax v1",
      example="quickstart.yaml",
      saves_with=("orbax",),
      cold_load="load",
      orbax_alias="v1.benchmark.Benchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: SaveRestoreOptions = context.options
    if context.pytree is None:
      raise ValueError("save_restore needs checkpoint data: give checkpoint_config.spec, preset or path")
    metrics = ckptbench.Metrics()
    keys = collector_keys(options)
    path = context.path / "ckpt"
    abstract = ckptbench.abstract_pytree(context.pytree)

    io = ckptbench.orbax_v1_io()
    with orbax_context(options):
      with context.trace("save"), metrics.measure("save", keys):
        if options.async_enabled:
          with metrics.measure("save_blocking", keys):
            response = io.save_async(path, context.pytree)
          with metrics.measure("save_background", keys):
            response.result()
        else:
          io.save(path, context.pytree)
      ckptbench.evict_for_load(path, metrics, "load", options.cold_cache)
      with context.trace("load"), metrics.measure("load", keys), ckptbench.reading_checkpoint(path):
        restored = io.load(path, abstract)

    if options.verify:
      with metrics.measure("verify", ["time"]):
        ckptbench.verify_pytree(context.pytree, restored)
    del restored
    return ckptbench.TestResult(metrics=metrics)
