"""Benchmark classes used by the tests, written as a user would."""

from __future__ import annotations

import dataclasses
import json
import time

import jax
from orbax.checkpoint import v1 as ocp

import ckptbench as benchmarks_core
import ckptbench as metric_lib


# The guide's section-3 example, with only its imports changed to ckptbench.
@dataclasses.dataclass(frozen=True)
class SaveRestoreOptions(benchmarks_core.BenchmarkOptions):
  use_ocdbt: bool | list[bool] = True

  def is_valid(self) -> bool:
    return True


@benchmarks_core.benchmark_options(SaveRestoreOptions)
class SaveRestoreBenchmark(benchmarks_core.BenchmarksGenerator):

  def test_fn(self, context: benchmarks_core.TestContext) -> benchmarks_core.TestResult:
    metrics = metric_lib.Metrics()

    options = context.options
    pytree = context.pytree
    abstract = jax.tree.map(ocp.arrays.to_shape_dtype_struct, pytree)
    path = context.path / "ckpt"

    with ocp.Context(
        array_options=ocp.options.ArrayOptions(
            saving=ocp.options.ArrayOptions.Saving(use_ocdbt=options.use_ocdbt)
        )
    ):
      with metrics.measure("save"):
        ocp.save(path, pytree)
      with metrics.measure("load"):
        _ = ocp.load(path, abstract_state=abstract)

    return benchmarks_core.TestResult(metrics=metrics)


@dataclasses.dataclass(frozen=True)
class FlakyOptions(benchmarks_core.BenchmarkOptions):
  fail: bool | list[bool] = False
  sleep_s: float | list[float] = 0.0

  def __post_init__(self):
    if self.sleep_s < 0:
      raise ValueError(f"sleep_s must be >= 0, got {self.sleep_s}")


@benchmarks_core.benchmark_options(FlakyOptions)
class FlakyBenchmark(benchmarks_core.BenchmarksGenerator):
  """Measures a sleep, then raises when `fail` is set."""

  def test_fn(self, context):
    metrics = metric_lib.Metrics()
    with metrics.measure("work", ["time"]):
      time.sleep(context.options.sleep_s)
    if context.options.fail:
      raise RuntimeError("planted failure")
    return benchmarks_core.TestResult(metrics=metrics)


class NotABenchmark:
  pass


not_a_class = 42


class _Opaque:
  """Not JSON: what a generator written for another framework may hand back."""


@dataclasses.dataclass(frozen=True)
class BadResultOptions(benchmarks_core.BenchmarkOptions):
  bad: str | list[str] = "none"  # none | inventory | notes


@benchmarks_core.benchmark_options(BadResultOptions)
class BadResultBenchmark(benchmarks_core.BenchmarksGenerator):
  """Measures a short sleep, then returns a result the framework cannot take as it is (`bad`)."""

  def test_fn(self, context):
    metrics = metric_lib.Metrics()
    with metrics.measure("work", ["time"]):
      time.sleep(0.001)
    inventory = _Opaque() if context.options.bad == "inventory" else None
    notes = 5 if context.options.bad == "notes" else ()
    return benchmarks_core.TestResult(metrics=metrics, inventory=inventory, notes=notes)


@dataclasses.dataclass(frozen=True)
class KindLogOptions(benchmarks_core.BenchmarkOptions):
  log_path: str = ""


@benchmarks_core.benchmark_options(KindLogOptions)
class KindLogBenchmark(benchmarks_core.BenchmarksGenerator):
  """Appends what its context says about the run (warm-up or not, host memory measured or not) to
  `log_path`, one JSON line a run, from whichever process runs it (the memory pass's too)."""

  def test_fn(self, context):
    entry = {"warmup": context.warmup, "measures_host_memory": context.host_memory_absent is None}
    with open(context.options.log_path, "a") as log:
      log.write(json.dumps(entry) + "\n")
    metrics = metric_lib.Metrics()
    with metrics.measure("work"):  # the default collectors: the memory pass has host memory to read
      time.sleep(0.001)
    return benchmarks_core.TestResult(metrics=metrics)
