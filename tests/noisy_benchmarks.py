"""A benchmark that writes to file descriptor 2 below Python, as native libraries do (the AWS SDK, Gloo, glog)."""

from __future__ import annotations

import dataclasses
import os

import ckptbench


@dataclasses.dataclass(frozen=True)
class NoisyOptions(ckptbench.BenchmarkOptions):
  lines: int = 3


@ckptbench.benchmark_options(NoisyOptions)
class NoisyBenchmark(ckptbench.BenchmarksGenerator):
  """Writes `lines` lines straight to descriptor 2, then measures nothing much."""

  def test_fn(self, context):
    metrics = ckptbench.Metrics()
    with metrics.measure("noise", ["time"]):
      for i in range(context.options.lines):
        os.write(2, f"native library noise {i}: Failed to open file path:'/root/.aws/config'\n".encode())
    return ckptbench.TestResult(metrics=metrics)
