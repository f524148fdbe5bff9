"""A small save/load benchmark beside a 50 ms step that can be made slower by a factor (the history tests)."""

from __future__ import annotations

import dataclasses
import os
import time

import jax
from orbax.checkpoint import v1 as ocp

import ckptbench

STEP_FACTOR = "CKPTBENCH_TEST_STEP_FACTOR"  # the 50 ms step's slowdown
STEP_S = 0.05


@dataclasses.dataclass(frozen=True)
class SaveLoadOptions(ckptbench.BenchmarkOptions):
  pass


@ckptbench.benchmark_options(SaveLoadOptions)
class SaveLoadBenchmark(ckptbench.BenchmarksGenerator):
  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    metrics = ckptbench.Metrics()
    abstract = jax.tree.map(ocp.arrays.to_shape_dtype_struct, context.pytree)
    path = context.path / "ckpt"
    with metrics.measure("save"):
      ocp.save(path, context.pytree)
    with metrics.measure("load"):
      ocp.load(path, abstract_state=abstract)
    with metrics.measure("step"):  # a 50 ms benchmark: a training step's stand-in
      time.sleep(STEP_S * float(os.environ.get(STEP_FACTOR, "1")))
    return ckptbench.TestResult(metrics=metrics)
