"""Orbax's `v1.benchmark` on ckptbench: the v1 options, the `Benchmark` generator, `clear_pytree`, `get_metrics_to_measure`.

`BenchmarkOptions.context` builds the `ocp.Context` through
`ckptbench.orbax_v1_context`, which knows the Context of every supported Orbax
release; an option this Orbax lacks makes the sweep point unsupported (with the
reason) instead of failing its runs. Options left at Orbax's default are not set.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Sequence

import jax

import ckptbench
from ckptbench.compat.orbax.core import core, metric

_GIB = 1024**3


def get_metrics_to_measure(options: Any) -> list[str]:
  """The default metric keys, plus `tracemalloc` when `options.metric_tracemalloc_enabled`."""
  keys = metric.default_metrics()
  if getattr(options, "metric_tracemalloc_enabled", False):
    keys.append("tracemalloc")
  return keys


@dataclasses.dataclass(frozen=True)
class BenchmarkOptions(core.BenchmarkOptions):
  """The options of Orbax's v1 save/load benchmarks (a list sweeps), Orbax's names and meanings; the
  `*_concurrent_gb` limits are in GiB, and `enable_replica_parallel_separate_folder` needs
  `use_replica_parallel` and `use_ocdbt`."""

  async_enabled: bool | Sequence[bool] = True
  use_ocdbt: bool | Sequence[bool] = True
  use_zarr3: bool | Sequence[bool] = True
  use_compression: bool | Sequence[bool] = True
  save_concurrent_gb: int | None | Sequence[int | None] = None
  restore_concurrent_gb: int | None | Sequence[int | None] = None
  metric_tracemalloc_enabled: bool = False
  use_load_and_broadcast: bool | Sequence[bool] = False
  use_replica_parallel: bool | Sequence[bool] = False
  enable_replica_parallel_separate_folder: bool | Sequence[bool] = False
  chunk_byte_size: int | None | Sequence[int | None] = None

  def is_valid(self) -> bool:
    return self.invalid_reason() is None

  def invalid_reason(self) -> str | None:
    if self.enable_replica_parallel_separate_folder and not (self.use_replica_parallel and self.use_ocdbt):
      return "enable_replica_parallel_separate_folder needs use_replica_parallel and use_ocdbt"
    return None

  def unsupported_reason(self) -> str | None:
    return super().unsupported_reason() or ckptbench.orbax_capabilities().missing_options(self.context_settings())

  def context_settings(self) -> dict[str, dict[str, Any]]:
    """The `ckptbench.orbax_v1_context` settings these options ask for (None: left at Orbax's default)."""
    gib = lambda value: None if value is None else int(value * _GIB)  # noqa: E731
    blocks = {
        "saving": {"use_ocdbt": self.use_ocdbt, "use_zarr3": self.use_zarr3,
                   "storage_options.chunk_byte_size": self.chunk_byte_size,
                   "use_compression": None if self.use_compression else False,
                   "use_replica_parallel": self.use_replica_parallel or None,
                   "enable_replica_parallel_separate_folder": self.enable_replica_parallel_separate_folder or None},
        "loading": {"use_load_and_broadcast": self.use_load_and_broadcast or None},
        "memory": {"write_concurrent_bytes": gib(self.save_concurrent_gb), "read_concurrent_bytes": gib(self.restore_concurrent_gb)},
    }  # fmt: skip
    given = {name: {k: v for k, v in block.items() if v is not None} for name, block in blocks.items()}
    return {name: block for name, block in given.items() if block or name == "saving"}

  @property
  def context(self) -> Any:
    """The `orbax.checkpoint.v1.Context` these options configure."""
    return ckptbench.orbax_v1_context(self.context_settings())


def clear_pytree(pytree: Any) -> Any:
  """Deletes every `jax.Array` of `pytree` to free its memory (ckptbench builds a later run's data
  again); returns a tree of Nones."""
  return jax.tree.map(lambda x: x.delete() if isinstance(x, jax.Array) else None, pytree)


@core.benchmark_options(BenchmarkOptions)
class Benchmark(core.BenchmarksGenerator):
  """Orbax's v1 generator: saves `context.pytree` under the options' Context and loads it back (`save`,
  `load`). A suite naming it runs ckptbench's `save_restore` built-in instead, which also splits an
  async save and verifies the load; this class is for code that subclasses or calls it."""

  def test_fn(self, context: core.TestContext) -> core.TestResult:
    options = context.options
    metrics = metric.Metrics()
    keys = get_metrics_to_measure(options)
    abstract = ckptbench.abstract_pytree(context.pytree)
    path = context.path / "ckpt"
    io = ckptbench.orbax_v1_io()
    with options.context:
      with _traced(context.trace_path("save")), metrics.measure("save", keys):
        if options.async_enabled:
          io.save_async(path, context.pytree).result()
        else:
          io.save(path, context.pytree)
      context.pytree = clear_pytree(context.pytree)
      with _traced(context.trace_path("load")), metrics.measure("load", keys):
        restored = io.load(path, abstract_state=abstract)
      clear_pytree(restored)
    return core.TestResult(metrics=metrics)



def _traced(trace_dir: Any) -> contextlib.AbstractContextManager[Any]:
  """A JAX profiler trace into `trace_dir` around the block (none when it is None)."""
  return contextlib.nullcontext() if trace_dir is None else jax.profiler.trace(str(trace_dir))
