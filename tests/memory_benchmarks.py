"""Benchmarks with a planted host-memory truth, for the memory pass's tests (tests/test_memory_pass.py)."""

from __future__ import annotations

import dataclasses
import json
import os
import time

import numpy as np

import ckptbench

_MIB = 1 << 20


@dataclasses.dataclass(frozen=True)
class PlantedOptions(ckptbench.BenchmarkOptions):
  allocate_mib: int | list[int] = 64
  fail_in_memory_pass: bool | list[bool] = False


@ckptbench.benchmark_options(PlantedOptions)
class PlantedAllocation(ckptbench.BenchmarksGenerator):
  """Leaves 160 MiB in the allocator's free lists (below a live 4 MiB), then allocates and touches
  `allocate_mib` MiB in 4 MiB arrays inside `measure("alloc")`: the block needs exactly that."""

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    if context.options.fail_in_memory_pass and "MALLOC_MMAP_THRESHOLD_" in os.environ:
      raise RuntimeError("planted failure: this benchmark fails in the memory pass only")
    churn = [np.ones(4 * _MIB, np.uint8) for _ in range(40)]
    live = np.ones(4 * _MIB, np.uint8)
    del churn
    metrics = ckptbench.Metrics()
    with metrics.measure("alloc"):
      block = [np.ones(4 * _MIB, np.uint8) for _ in range(context.options.allocate_mib // 4)]
    del block, live
    peak = metrics.to_dict().get("alloc_7_memory/host_rss_peak_diff_mib")
    if peak is not None:  # a figure derived from host memory, as training_interference's peak growth
      metrics.record("derived", "9_other/peak_over_planted", peak.value / context.options.allocate_mib, "ratio")
    return ckptbench.TestResult(metrics=metrics)


@dataclasses.dataclass(frozen=True)
class LabelledOptions(ckptbench.BenchmarkOptions):
  label: str | list[str] = "a"
  extra_mib: int | list[int] = 0


@ckptbench.benchmark_options(LabelledOptions)
class LabelledSaveLoad(ckptbench.BenchmarksGenerator):
  """An Orbax save and load of the suite's data. `label` changes nothing (two variants of it are an
  A/A pair); `extra_mib` MiB more are allocated and touched inside the save (a planted difference)."""

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    io = ckptbench.orbax_v1_io()
    path = context.path / "ckpt"
    metrics = ckptbench.Metrics()
    with metrics.measure("save"):
      extra = np.ones(context.options.extra_mib * _MIB, np.uint8) if context.options.extra_mib else None
      io.save(path, context.pytree)
      del extra
    with metrics.measure("load"):
      io.load(path, ckptbench.abstract_pytree(context.pytree))
    return ckptbench.TestResult(metrics=metrics)


# A 1 MiB save/load twice over, differing only in a label (an A/A pair), and again with 64 MiB more
# allocated: tests/test_memory_verdicts.py and measurements/memory_rule.py run it.
LABELLED_PAIR_SUITE = """\
suite_name: labelled pair
checkpoint_config:
  spec:
    params: {dtype: float32, shape: [512, 512], sharding: [fsdp]}
mesh_config:
  mesh_axes: [fsdp]
  ici_parallelism: {fsdp: 8}
benchmarks:
  - generator: memory_benchmarks.LabelledSaveLoad
    options:
      label: [a, b]
      extra_mib: [0, 64]
"""


@dataclasses.dataclass(frozen=True)
class TimelineOptions(ckptbench.BenchmarkOptions):
  label: str | list[str] = "a"
  sleep_s: float = 0.1  # each timed run's; a warm-up's is 5 times longer
  crash_in_memory_pass: bool = False


# Where `Timeline` appends its runs: the test's file, named in the environment the run and its pass share.
TIMELINE_ENV = "CKPTBENCH_TEST_TIMELINE"


@ckptbench.benchmark_options(TimelineOptions)
class Timeline(ckptbench.BenchmarksGenerator):
  """Sleeps inside `measure("alloc")` with 8 MiB allocated, and appends the run (its process, whether it
  is the memory pass's, a warm-up, and its start and end times) as a JSON line to $CKPTBENCH_TEST_TIMELINE.
  With `crash_in_memory_pass` the pass's process exits in its warm-up, as a crash would end it."""

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    in_pass = "MALLOC_MMAP_THRESHOLD_" in os.environ
    if context.options.crash_in_memory_pass and in_pass:
      os._exit(3)
    start = time.time()
    metrics = ckptbench.Metrics()
    with metrics.measure("alloc"):
      block = np.ones(8 * _MIB, np.uint8)
      time.sleep(context.options.sleep_s * (5 if context.warmup else 1))
    del block
    line = {"pid": os.getpid(), "memory_pass": in_pass, "warmup": context.warmup, "label": context.options.label,
            "start": start, "end": time.time()}  # fmt: skip
    with open(os.environ[TIMELINE_ENV], "a") as timeline:
      timeline.write(json.dumps(line) + "\n")
    return ckptbench.TestResult(metrics=metrics)
