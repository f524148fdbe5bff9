"""A benchmark that waits for the test to let it go: runs that overlap for as long as a test needs."""

from __future__ import annotations

import dataclasses
import pathlib
import time

import ckptbench


@dataclasses.dataclass(frozen=True)
class GatedOptions(ckptbench.BenchmarkOptions):
  gate: str = ""  # repeat i waits until the file f"{gate}{i}" exists
  timeout_s: float = 120.0


@ckptbench.benchmark_options(GatedOptions)
class GatedBenchmark(ckptbench.BenchmarksGenerator):
  """Measures the wait for the gate file; raises when it never appears."""

  def test_fn(self, context):
    metrics = ckptbench.Metrics()
    deadline = time.monotonic() + context.options.timeout_s
    gate = pathlib.Path(f"{context.options.gate}{context.repeat_index}")
    with metrics.measure("wait", ["time"]):
      while not gate.exists():
        if time.monotonic() > deadline:
          raise TimeoutError(f"gate {gate} never opened")
        time.sleep(0.02)
    return ckptbench.TestResult(metrics=metrics)
