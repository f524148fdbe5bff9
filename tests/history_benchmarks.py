"""A small save/load benchmark whose save can be made slower by a planted sleep (the history tests)."""

from __future__ import annotations

import dataclasses
import os
import time

import jax
from orbax.checkpoint import v1 as ocp

import ckptbench

PLANTED_SAVE_S = "CKPTBENCH_TEST_PLANTED_SAVE_S"  # seconds added inside the measured save


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
      time.sleep(float(os.environ.get(PLANTED_SAVE_S, "0")))
    with metrics.measure("load"):
      ocp.load(path, abstract_state=abstract)
    return ckptbench.TestResult(metrics=metrics)
