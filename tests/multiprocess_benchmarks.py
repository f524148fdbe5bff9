"""Benchmark classes for the multi-process tests that need `launch`, written as a user would."""

from __future__ import annotations

import dataclasses

import jax
from jax.experimental import multihost_utils
from orbax.checkpoint import multihost

import ckptbench


@dataclasses.dataclass(frozen=True)
class DivergingOptions(ckptbench.BenchmarkOptions):
  raise_on_process: int | list[int] = -1  # -1: no process raises
  # "devices": a JAX collective (Orbax's default barrier); "service": a barrier of the
  # jax.distributed service (Orbax's barrier over a subset of processes), which waits out its timeout.
  collective: str | list[str] = "devices"


@ckptbench.benchmark_options(DivergingOptions)
class DivergingBenchmark(ckptbench.BenchmarksGenerator):
  """Enters a collective (as an Orbax save does), except on `raise_on_process`, which raises first."""

  def test_fn(self, context):
    metrics = ckptbench.Metrics()
    with metrics.measure("sync", ["time"]):
      if jax.process_index() == context.options.raise_on_process:
        raise RuntimeError(f"process {jax.process_index()} fails before the collective")
      if context.options.collective == "devices":
        multihost_utils.sync_global_devices("inside test_fn")
      else:
        multihost.sync_global_processes("inside test_fn", processes={0, 1}, timeout=3600)
    return ckptbench.TestResult(metrics=metrics)
