"""A benchmark whose time has planted multiplicative effects per option: the truth the effects and `tune`
are checked against (tests/test_effects_run.py, measurements/tune_acceptance.py)."""

from __future__ import annotations

import dataclasses
import math
import random
import time

import ckptbench

BASE_S = 0.06
# The factor each option's level multiplies the time by (the first level of each is the reference, 1.0).
PLANTS = {"use_ocdbt": {True: 0.8}, "use_zarr3": {True: 1.3}, "concurrent_gb": {4: 1.15, 8: 0.7}}
INTERACTION = 1.2  # use_ocdbt=True with use_zarr3=True: 1.2x on top of their own effects
BEST = {"use_ocdbt": True, "use_zarr3": False, "concurrent_gb": 8}  # 0.56x the reference (all first levels)
BURST = 2.5  # a busy machine's burst: the run takes this many times as long


def planted_time(use_ocdbt: bool = False, use_zarr3: bool = False, concurrent_gb: int = 1, base_s: float = BASE_S) -> float:
  factor = INTERACTION if use_ocdbt and use_zarr3 else 1.0
  for name, level in (("use_ocdbt", use_ocdbt), ("use_zarr3", use_zarr3), ("concurrent_gb", concurrent_gb)):
    factor *= PLANTS[name].get(level, 1.0)
  return base_s * factor


@dataclasses.dataclass(frozen=True)
class PlantedOptions(ckptbench.BenchmarkOptions):
  """The swept options, the reference cell's time `base_s`, and the noise planted on top: `noise` the log-normal
  spread of each run's time, `burst_every` a `BURST`x run in that many (0: none). A sleep on a busy machine
  overshoots by milliseconds, which pull every ratio towards 1: a longer `base_s` keeps them nearer the plant."""

  use_ocdbt: bool | list[bool] = False
  use_zarr3: bool | list[bool] = False
  concurrent_gb: int | list[int] = 1
  base_s: float = BASE_S
  noise: float = 0.0
  burst_every: int = 0


@ckptbench.benchmark_options(PlantedOptions)
class PlantedSleepBenchmark(ckptbench.BenchmarksGenerator):
  """Sleeps the planted time (with its planted noise) as its `save`, then leaves a small file where its checkpoint
  goes (a run on an object store checks that the save's bytes landed there)."""

  def test_fn(self, context):
    options = context.options
    seconds = planted_time(options.use_ocdbt, options.use_zarr3, options.concurrent_gb, options.base_s)
    seconds *= math.exp(random.gauss(0.0, options.noise)) if options.noise else 1.0
    seconds *= BURST if options.burst_every and random.random() < 1 / options.burst_every else 1.0
    metrics = ckptbench.Metrics()
    with metrics.measure("save", ["time"]):
      time.sleep(seconds)
    ckptbench.write_location(f"{context.path}/planted.bin", b"0" * 1024)
    return ckptbench.TestResult(metrics=metrics)
