"""A user-defined benchmark for the storage tests: a plain Orbax v1 save and load of the run path.

Unlike the built-ins it is not refused for s3:// before the run, so the
where-the-bytes-went check after the run is what must catch Orbax's s3:// case.
"""

from __future__ import annotations

import dataclasses

from orbax.checkpoint import v1 as ocp

import ckptbench


@dataclasses.dataclass(frozen=True)
class PlainSaveOptions(ckptbench.BenchmarkOptions):
  use_ocdbt: bool = False


@ckptbench.benchmark_options(PlainSaveOptions)
class PlainSave(ckptbench.BenchmarksGenerator):
  def test_fn(self, context):
    metrics = ckptbench.Metrics()
    ctx = ocp.Context()
    ctx.array.saving.use_ocdbt = context.options.use_ocdbt
    with ctx, metrics.measure("save"):
      ocp.save(context.path / "ckpt", context.pytree)
    return ckptbench.TestResult(metrics=metrics)
