"""A benchmark whose time has planted multiplicative effects per option: the truth the effects and `tune`
are checked against (tests/test_effects_run.py)."""

from __future__ import annotations

import dataclasses
import time

import ckptbench

BASE_S = 0.06
# The factor each option's level multiplies the time by (the first level of each is the reference, 1.0).
PLANTS = {"use_ocdbt": {True: 0.7}, "use_zarr3": {True: 1.3}, "concurrent_gb": {4: 0.95, 8: 0.7}}
INTERACTION = 1.2  # use_ocdbt=True with use_zarr3=True: 1.2x on top of their own effects


def planted_time(use_ocdbt: bool, use_zarr3: bool, concurrent_gb: int) -> float:
  factor = INTERACTION if use_ocdbt and use_zarr3 else 1.0
  for name, level in (("use_ocdbt", use_ocdbt), ("use_zarr3", use_zarr3), ("concurrent_gb", concurrent_gb)):
    factor *= PLANTS[name].get(level, 1.0)
  return BASE_S * factor


@dataclasses.dataclass(frozen=True)
class PlantedOptions(ckptbench.BenchmarkOptions):
  use_ocdbt: bool | list[bool] = False
  use_zarr3: bool | list[bool] = False
  concurrent_gb: int | list[int] = 1


@ckptbench.benchmark_options(PlantedOptions)
class PlantedSleepBenchmark(ckptbench.BenchmarksGenerator):
  """Sleeps the planted time as its `save`, then leaves a small file where its checkpoint goes (a run on an
  object store checks that the save's bytes landed there)."""

  def test_fn(self, context):
    options = context.options
    metrics = ckptbench.Metrics()
    with metrics.measure("save", ["time"]):
      time.sleep(planted_time(options.use_ocdbt, options.use_zarr3, options.concurrent_gb))
    ckptbench.write_location(f"{context.path}/planted.bin", b"0" * 1024)
    return ckptbench.TestResult(metrics=metrics)
