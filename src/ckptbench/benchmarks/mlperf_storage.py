"""`mlperf_storage`: the MLPerf Storage checkpointing method, with Orbax doing the I/O.

MLPerf Storage (v2.0 on, DLIO's checkpointing workload) writes N checkpoints
(10 in a CLOSED submission), clears the page cache when the checkpoints could
fit in it, then reads N back. Here: the suite's checkpoint data (a preset such
as `llama-3.1-8b`, scaled down to fit, optimizer state included, is the
intended input) is saved `num_checkpoints_write` times with `ocp.save`, each
into its own directory; the checkpoints are evicted from the page cache
(`cold_cache`); then `num_checkpoints_read` loads read them back in turn
(checkpoint i % N). With several processes, each reads the shards another
process wrote: the load's mesh is the run's mesh with its devices rolled by one
process's worth, so the shard a process wrote goes to the next process.

Every checkpoint's duration is that of the slowest process (all processes
start together behind a barrier; the per-process times are gathered), and its
rate is the checkpoint's total size (all processes, binary GiB) over that
duration. The figures published by MLPerf are the means of the N per-checkpoint
rates and durations; they are recorded under DLIO's field names:
`mlperf_9_other/save_checkpoint_io_mean_GB_per_second`,
`save_checkpoint_duration_mean_seconds`, `load_checkpoint_io_mean_GB_per_second`,
`load_checkpoint_duration_mean_seconds` (GiB/s and s, as DLIO computes them),
with `checkpoint_size_GB` (GiB), `num_processes`, `num_checkpoints_write` and
`num_checkpoints_read`. Each write and read is also a measured block
(`checkpoint_write_*`, `checkpoint_read_*`: this process's time, Orbax's stages).

A warm-up run (`TestContext.warmup`) that measures no host memory (the timed
runs while a memory pass reads it, or `host_memory off`) writes and reads one
checkpoint, with the same data, options, cache eviction and checks: its purpose
is the first-run costs (compilation, Orbax's and TensorStore's start-up), which
the first write and read pay; the method's other writes and reads would only
repeat what the counted runs measure. Its record says so in a note. A warm-up
that measures host memory does the whole method: a process's read peak grows
over its first reads, so after a one-checkpoint warm-up the first reading of
the reads' peak reads low (docs/performance.md, *The test suite*).

Verified: every checkpoint read equals the data that was written.
"""

from __future__ import annotations

import dataclasses
import statistics
import time

import jax
import numpy as np
from jax.experimental import multihost_utils
from orbax.checkpoint import v1 as ocp

import ckptbench

_GIB = float(1 << 30)


@dataclasses.dataclass(frozen=True, kw_only=True)
class MlperfStorageOptions(ckptbench.BenchmarkOptions):
  """Options of `mlperf_storage`.

  Attributes:
    num_checkpoints_write: checkpoints written (MLPerf CLOSED: 10).
    num_checkpoints_read: checkpoints read back (MLPerf CLOSED: 10; at most
      one read per written checkpoint is fresh, later ones read them again).
    cold_cache: evict the checkpoints from the page cache between the phases
      (MLPerf requires it unless the checkpoints exceed 3x the client's memory);
      recorded as `checkpoint_read_0_basics/cold_cache_<how>`.
    read_by_other_process: with several processes, each reads shards another
      process wrote.
    use_ocdbt: write with Orbax's OCDBT driver (its default).
    use_compression: zstd-compress array data (Orbax's default; DLIO writes
      incompressible random bytes, so compare uncompressed runs with it).
  """

  num_checkpoints_write: int | list[int] = 10
  num_checkpoints_read: int | list[int] = 10
  cold_cache: bool | list[bool] = True
  read_by_other_process: bool | list[bool] = True
  use_ocdbt: bool | list[bool] = True
  use_compression: bool | list[bool] = True

  def invalid_reason(self) -> str | None:
    if self.num_checkpoints_write < 1 or self.num_checkpoints_read < 0:
      return "num_checkpoints_write must be at least 1 and num_checkpoints_read at least 0"
    return None


def _slowest(seconds: float) -> float:
  """The longest of every process's `seconds`."""
  if jax.process_count() == 1:
    return seconds
  return float(np.max(multihost_utils.process_allgather(np.float64(seconds))))


def _rolled_abstract(pytree, shift: bool):
  """The abstract tree to load into, on a mesh rolled by one process's devices when `shift`."""
  abstract = ckptbench.abstract_pytree(pytree)
  if not shift:
    return abstract

  def roll(leaf):
    sharding = getattr(leaf, "sharding", None)
    mesh = getattr(sharding, "mesh", None)
    if mesh is None:
      return leaf
    devices = np.roll(mesh.devices.reshape(-1), jax.local_device_count()).reshape(mesh.devices.shape)
    rolled = jax.sharding.NamedSharding(jax.sharding.Mesh(devices, mesh.axis_names), sharding.spec)
    return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=rolled)

  return jax.tree.map(roll, abstract)


def _timed(name: str, action) -> tuple[float, object]:
  multihost_utils.sync_global_devices(f"mlperf_storage_{name}")
  start = time.perf_counter()
  result = action()
  return _slowest(time.perf_counter() - start), result


@ckptbench.benchmark_options(MlperfStorageOptions)
class MlperfStorageBenchmark(ckptbench.BenchmarksGenerator):
  """Writes N checkpoints, drops caches, reads N; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="mlperf_storage",
      measures="the MLPerf Storage checkpointing method: write N, drop caches, read N (by another process when several run), DLIO's summary fields from the slowest process",
      example="mlperf_storage.yaml",
      saves_with=("orbax",),
      cold_load="checkpoint_read",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: MlperfStorageOptions = context.options
    if context.pytree is None:
      raise ckptbench.CkptbenchError(
          "mlperf_storage needs checkpoint data (checkpoint_config preset or spec)"
      )
    metrics = ckptbench.Metrics()
    size_gib = sum(getattr(x, "nbytes", 0) for x in jax.tree.leaves(context.pytree)) / _GIB
    light = context.warmup and context.host_memory_absent is not None  # see the module's docstring
    num_write, num_read = options.num_checkpoints_write, options.num_checkpoints_read
    if light:
      num_write, num_read = 1, min(num_read, 1)
    paths = [context.path / f"checkpoint_{i}" for i in range(num_write)]

    orbax_context = ocp.Context()
    orbax_context.array.saving.use_ocdbt = options.use_ocdbt
    orbax_context.array.saving.use_compression = options.use_compression
    with orbax_context:
      write_s, read_s, shift = _write_then_read(context, options, metrics, paths, num_read)
    _record(metrics, size_gib, write_s, read_s)
    metrics.record("mlperf", "9_other/reads_by_other_process", float(shift), "count")
    notes = ()
    if light:
      notes = (f"warm-up: {num_write} checkpoint(s) written and {num_read} read; the counted runs write"
               f" {options.num_checkpoints_write} and read {options.num_checkpoints_read}",)  # fmt: skip
    return ckptbench.TestResult(metrics=metrics, notes=notes)


def _write_then_read(
    context: ckptbench.TestContext,
    options: MlperfStorageOptions,
    metrics: ckptbench.Metrics,
    paths: list,
    num_read: int,
) -> tuple[list[float], list[float], bool]:
  """The two phases (a write to each of `paths`, then `num_read` reads); returns the slowest process's
  seconds per write and per read, and the shift."""
  write_s = []
  for i, path in enumerate(paths):
    with metrics.measure("checkpoint_write"):
      seconds, _ = _timed(f"write_{i}", lambda: ocp.save(path, context.pytree))
    write_s.append(seconds)

  if num_read:
    multihost_utils.sync_global_devices("mlperf_storage_evict")
    ckptbench.evict_for_load(paths, metrics, "checkpoint_read", options.cold_cache)

  shift = options.read_by_other_process and jax.process_count() > 1
  abstract = _rolled_abstract(context.pytree, shift)
  read_s = []
  for i in range(num_read):
    path = paths[i % len(paths)]
    with metrics.measure("checkpoint_read"), ckptbench.reading_checkpoint(path):
      seconds, restored = _timed(f"read_{i}", lambda: ocp.load(path, abstract))
    read_s.append(seconds)
    with metrics.measure("verify", ["time"]):
      ckptbench.verify_pytree(context.pytree, restored)
    del restored
  return write_s, read_s, shift


def _record(metrics: ckptbench.Metrics, size_gib: float, write_s: list[float], read_s: list[float]) -> None:
  """DLIO's summary fields: means of the per-checkpoint rates and durations."""
  metrics.record("mlperf", "9_other/checkpoint_size_GB", size_gib, "GiB")
  metrics.record("mlperf", "9_other/num_processes", jax.process_count(), "count")
  for phase, times, count in (("save", write_s, "write"), ("load", read_s, "read")):
    metrics.record("mlperf", f"9_other/num_checkpoints_{count}", len(times), "count")
    if not times:
      continue
    metrics.record("mlperf", f"9_other/{phase}_checkpoint_duration_mean_seconds",
                   statistics.fmean(times), "s")  # fmt: skip
    metrics.record("mlperf", f"9_other/{phase}_checkpoint_io_mean_GB_per_second",
                   statistics.fmean(size_gib / t for t in times), "GiB/s")  # fmt: skip
