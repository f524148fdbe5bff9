"""What an expanded suite's synthetic data weighs: per benchmark (the whole and the most loaded
device's part), and the disk its checkpoints hold at once.

Pure arithmetic over the plan (dtype sizes from config's table), so `ckptbench plan`
states the disk a run needs without importing the runner's storage and metrics.
"""

from __future__ import annotations

import dataclasses
import math

from ckptbench.config import dtype_itemsize, iter_arrays
from ckptbench.engine._sweep import Plan, PlannedBenchmark


def format_bytes(n: float) -> str:
  for unit in ("B", "KiB", "MiB", "GiB"):
    if n < 1024 or unit == "GiB":
      return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
    n /= 1024
  raise AssertionError("unreachable")


def checkpoint_bytes(bench: PlannedBenchmark) -> tuple[int, int] | None:
  """(global bytes, bytes on the most loaded device) of a benchmark's synthetic data."""
  spec = bench.checkpoint.spec
  if spec is None:
    return None
  sizes = bench.mesh.axis_sizes() if bench.mesh is not None else {}
  total = per_device = 0
  for _, array in iter_arrays(spec):
    nbytes = array.num_elements * dtype_itemsize(array.dtype)
    total += nbytes
    split = math.prod(sizes.get(a, 1) for axes in array.dim_axes() for a in axes)
    per_device += nbytes // split
  return total, per_device


@dataclasses.dataclass(frozen=True)
class DiskNeed:
  """The bytes of checkpoints a suite holds on disk at once, and the run that sets it."""

  bytes: int
  largest_run_bytes: int
  largest_benchmark: str | None
  keep: bool  # every run's checkpoint is kept: `bytes` is the sum over runs

  def describe(self) -> str:
    if self.largest_benchmark is None:
      return "no synthetic checkpoint data to estimate"
    if self.keep:
      return f"about {format_bytes(self.bytes)} (every run's checkpoint kept)"
    return (
        f"about {format_bytes(self.bytes)} (the largest run's checkpoint, {self.largest_benchmark};"
        " each run's is removed after it)"
    )


def disk_need(plan: Plan, runs_per_benchmark: int, keep: bool) -> DiskNeed:
  """What `plan` needs on disk: its largest run's data, or with `keep` the sum over every run."""
  sizes = [(s[0], b.name) for b in plan.benchmarks if (s := checkpoint_bytes(b)) is not None]
  if not sizes:
    return DiskNeed(0, 0, None, keep)
  largest, name = max(sizes)
  total = sum(s for s, _ in sizes) * runs_per_benchmark if keep else largest
  return DiskNeed(total, largest, name, keep)
