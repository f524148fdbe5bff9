"""`snapshotter`: Orbax's v1 Snapshotter backing state up to host memory, then loading it onto fewer or more slices.

The Snapshotter (Orbax v1 training, Pathways) copies every array to pinned
host memory, split per replica, in a background thread; `load` rebuilds the
arrays from the replicas still alive and puts them onto a target layout, which
may span fewer slices (scale down) or more (scale up).

CPU JAX has no slices: the devices of the suite's mesh (all devices without
one; `ckptbench run --devices N` simulates more) are split into
`num_scale_up_slices` equal groups standing for slices, and a state is a mesh
(replica, model) over the first `n` groups, each array replicated over
`replica` and sharded over `model`. Per saving: the state on
`num_scale_up_slices` slices is saved (`save`, up to the end of the background
copy) and loaded onto `num_scale_down_slices` (`load_scale_down`); then the
state on the smaller layout is saved (`save_scale_down_state`) and loaded onto
the larger one (`load_scale_up`). Each load is checked against the data saved.
Orbax's split/concatenate-by-mesh-axis come from `pathwaysutils` (the
`pathways` extra), run here on jaxlib's CPU implementation, not a Pathways
backend; `pinned_host` memory is ordinary host RAM. The record's notes say so.
The loads read that host copy, not files: there is nothing to evict, so no
`cold_cache` option (docs/builtins.md, "Cold loads").

The Orbax in-tree framework's `v1.snapshotter_benchmark` resolves here, with
the same option names (its suite has no checkpoint data: the state is built
here, `rows_per_slice` x `cols_per_device` float32 per slice and device).
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

import ckptbench

_NAME = "snapshotter"


@dataclasses.dataclass(frozen=True, kw_only=True)
class SnapshotterOptions(ckptbench.BenchmarkOptions):
  """Options of `snapshotter` (the peer's names, plus the state's size).

  Attributes:
    num_scale_down_slices: slices of the smaller layout.
    num_scale_up_slices: slices of the larger layout (the devices are split
      into this many emulated slices).
    num_savings: save/load cycles per run.
    rows_per_slice: rows of the state's array per slice of the larger layout.
    cols_per_device: columns of the array per device of one slice.
  """

  num_scale_down_slices: int | Sequence[int] = 1
  num_scale_up_slices: int | Sequence[int] = 2
  num_savings: int = 1
  rows_per_slice: int | Sequence[int] = 16
  cols_per_device: int | Sequence[int] = 64

  def invalid_reason(self) -> str | None:
    if not 1 <= self.num_scale_down_slices < self.num_scale_up_slices:
      return "need 1 <= num_scale_down_slices < num_scale_up_slices"
    if min(self.num_savings, self.rows_per_slice, self.cols_per_device) < 1:
      return "num_savings, rows_per_slice and cols_per_device must be at least 1"
    return None

  def unsupported_reason(self) -> str | None:
    if importlib.util.find_spec("pathwaysutils") is None:
      return "Orbax's Snapshotter needs pathwaysutils: pip install 'ckptbench[pathways]'"
    return None


def _layout(devices: np.ndarray, slices: int, shape: tuple[int, int]) -> jax.sharding.NamedSharding:
  mesh = jax.sharding.Mesh(devices[:slices], ("replica", "model"))
  return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(None, "model"))


def _abstract(value: np.ndarray, sharding: jax.sharding.NamedSharding) -> dict[str, Any]:
  return {"weights": jax.ShapeDtypeStruct(value.shape, value.dtype, sharding=sharding)}


@ckptbench.benchmark_options(SnapshotterOptions)
class SnapshotterBenchmark(ckptbench.BenchmarksGenerator):
  """Snapshot, then load onto fewer and onto more emulated slices; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="snapshotter",
      measures="Orbax's v1 `Snapshotter`: state backed up to host memory, then loaded onto fewer (scale down) or more (scale up) emulated slices",
      example="snapshotter.yaml",
      extras=("pathways",),
      orbax_alias="v1.snapshotter_benchmark.SnapshotterBenchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    from orbax.checkpoint.experimental.v1._src.training.pathways import snapshotter

    options: SnapshotterOptions = context.options
    if jax.process_count() > 1:
      raise ckptbench.CkptbenchError(
          f"{_NAME} emulates slices with the devices of one process (the Snapshotter is written for"
          " Pathways' single controller): run it with `ckptbench run`, not `launch`"
      )
    up, down = options.num_scale_up_slices, options.num_scale_down_slices
    devices = np.asarray(jax.devices() if context.mesh is None else list(context.mesh.devices.flat))
    if len(devices) % up:
      raise ckptbench.CkptbenchError(
          f"{_NAME}: {len(devices)} devices cannot be split into num_scale_up_slices={up} equal slices"
      )
    per_slice = len(devices) // up
    grid = devices.reshape(up, per_slice)
    shape = (up * options.rows_per_slice, per_slice * options.cols_per_device)
    value = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    large, small = _layout(grid, up, shape), _layout(grid, down, shape)
    metrics = ckptbench.Metrics()
    for key, n in (("slices_up", up), ("slices_down", down), ("devices_per_slice", per_slice)):
      metrics.record("save", f"9_other/{key}", n, "count")
    for _ in range(options.num_savings):
      self._cycle(snapshotter, metrics, context, value, large, small, "save", "load_scale_down")
      self._cycle(snapshotter, metrics, context, value, small, large, "save_scale_down_state", "load_scale_up")
    notes = (
        f"emulated slices: this process's {len(devices)} CPU devices were split into {up} groups of"
        f" {per_slice} standing for slices; no Pathways backend (pathwaysutils' split/concatenate ran on"
        " jaxlib's CPU implementation) and pinned_host memory is ordinary host RAM",
    )
    return ckptbench.TestResult(metrics=metrics, notes=notes)

  @staticmethod
  def _cycle(snapshotter, metrics, context, value, source, target, save_op: str, load_op: str) -> None:
    """Snapshots `value` laid out as `source`, loads it as `target`, checks it."""
    state = {"weights": jax.device_put(value, source)}
    manager = snapshotter.Snapshotter(replica_axis_index=0)
    with metrics.measure(save_op), context.trace(save_op):
      manager.save(0, state)
      manager.join()
    if manager.latest is None:
      raise ckptbench.CkptbenchError(f"{_NAME}: the Snapshotter kept no snapshot (its background copy failed)")
    with metrics.measure(load_op), context.trace(load_op):
      restored = jax.block_until_ready(manager.load(_abstract(value, target)))
    with metrics.measure("verify", ["time"]):
      if restored["weights"].sharding != target:
        raise ckptbench.DataMismatchError(
            f"{_NAME}: {load_op} gave sharding {restored['weights'].sharding}, expected {target}"
        )
      ckptbench.verify_pytree({"weights": jax.device_put(value, target)}, restored)
