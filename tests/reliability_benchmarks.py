"""Benchmark classes for the reliability tests, written as a user would."""

from __future__ import annotations

import dataclasses
import time

import ckptbench


@dataclasses.dataclass(frozen=True)
class StubbornOptions(ckptbench.BenchmarkOptions):
  sleep_s: float | list[float] = 0.0
  label: str | list[str] = "x"


@ckptbench.benchmark_options(StubbornOptions)
class StubbornBenchmark(ckptbench.BenchmarksGenerator):
  """Sleeps, swallowing every Exception (a timeout must still stop it), and writes a file."""

  def test_fn(self, context):
    metrics = ckptbench.Metrics()
    with metrics.measure("work", ["time"]):
      deadline = time.monotonic() + context.options.sleep_s
      while time.monotonic() < deadline:
        try:
          time.sleep(0.05)
        except Exception:  # noqa: BLE001,S110  (what a careless benchmark does)
          pass
      (context.path / "data.bin").write_bytes(b"\0" * 1024)
      context.trace_path(f"../{context.options.label}")  # a directory named after the option
    return ckptbench.TestResult(metrics=metrics)


class CheckpointFailure(BaseException):
  """Derives from BaseException, as DCP's CheckpointException does."""


@dataclasses.dataclass(frozen=True)
class FailingOptions(ckptbench.BenchmarkOptions):
  fail: bool | list[bool] = False


@ckptbench.benchmark_options(FailingOptions)
class BaseExceptionBenchmark(ckptbench.BenchmarksGenerator):
  """Writes a file and measures it, or raises a BaseException that is neither an exit nor an interrupt."""

  def test_fn(self, context):
    metrics = ckptbench.Metrics()
    with metrics.measure("work", ["time"]):
      if context.options.fail:
        raise CheckpointFailure("rank 0 failed to write its shard")
      (context.path / "data.bin").write_bytes(b"\0" * 1024)
    return ckptbench.TestResult(metrics=metrics)
