"""A benchmark that writes to file descriptors 1 and 2 below Python, as native libraries do (the AWS SDK, Gloo, glog)."""

from __future__ import annotations

import dataclasses
import os

import ckptbench


@dataclasses.dataclass(frozen=True)
class NoisyOptions(ckptbench.BenchmarkOptions):
  lines: int = 3


@ckptbench.benchmark_options(NoisyOptions)
class NoisyBenchmark(ckptbench.BenchmarksGenerator):
  """Writes `lines` lines straight to descriptor 2 and one to descriptor 1."""

  def test_fn(self, context):
    metrics = ckptbench.Metrics()
    with metrics.measure("noise", ["time"]):
      for i in range(context.options.lines):
        os.write(2, f"native library noise {i}: Failed to open file path:'/root/.aws/config'\n".encode())
      if context.options.lines:
        os.write(1, b"[Gloo] native library noise on stdout: Rank 0 is connected to 1 peer ranks\n")
    return ckptbench.TestResult(metrics=metrics)
