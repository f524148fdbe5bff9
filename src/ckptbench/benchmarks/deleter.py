"""`deleter`: the cost of deleting old checkpoints through a CheckpointManager, swept over deletion threads.

Orbax's in-tree `deleter_benchmark.DeleterBenchmark` resolves here, with the
same option names. A CheckpointManager (`num_deletion_threads` threads for
deletions) saves the checkpoint data at each of `train_steps` steps (on its
`save_interval_steps` schedule, waiting for each save); after each step the
previous saved step is deleted explicitly. Measured per step: `save`,
`wait_until_finished`, and `delete` (with `delete_9_other/deleted_bytes` and
`deleted_files`, so the time can be read per byte and per file). Checked: each
deleted step is gone from the manager and from disk while the latest stays,
and the latest step restores to what was saved.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Sequence

import orbax.checkpoint as ocp

import ckptbench


@dataclasses.dataclass(frozen=True)
class DeleterOptions(ckptbench.BenchmarkOptions):
  """Options of `deleter` (a list sweeps).

  Attributes:
    save_interval_steps: the manager saves at steps 0, n, 2n, ...
    max_to_keep: checkpoints the manager itself keeps; at least 2, else the
      manager deletes each old step itself while saving and nothing is left
      for the timed deletions (Orbax's default is 1; its suite sets 10).
    train_steps: steps of the loop.
    num_deletion_threads: threads the manager deletes with.
    cold_cache: evict the latest step from the page cache before the restore
      (`restore_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  save_interval_steps: int | Sequence[int] = 1
  max_to_keep: int | Sequence[int] = 2
  train_steps: int | Sequence[int] = 5
  num_deletion_threads: int | Sequence[int] = 1
  cold_cache: bool | Sequence[bool] = True

  def invalid_reason(self) -> str | None:
    if min(self.save_interval_steps, self.max_to_keep, self.train_steps, self.num_deletion_threads) < 1:
      return "save_interval_steps, max_to_keep, train_steps and num_deletion_threads must be at least 1"
    if self.max_to_keep < 2:
      return "max_to_keep 1 lets the manager delete each old step itself while saving: nothing left to time"
    if (self.train_steps - 1) // self.save_interval_steps < 1:
      return "fewer than 2 saved steps: nothing to delete (raise train_steps)"
    return None


def _size(directory: pathlib.Path) -> tuple[int, int]:
  """(bytes, files) under `directory`."""
  total = files = 0
  for root, _, names in os.walk(directory):
    for name in names:
      total += os.path.getsize(os.path.join(root, name))
      files += 1
  return total, files


@ckptbench.benchmark_options(DeleterOptions)
class DeleterBenchmark(ckptbench.BenchmarksGenerator):
  """Saves every step and deletes the previous one; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="deleter",
      measures="deleting old checkpoints through a `CheckpointManager`, over deletion threads (bytes and files per deletion)",
      example="deleter.yaml",
      saves_with=("orbax",),
      cold_load="restore",
      orbax_alias="deleter_benchmark.DeleterBenchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: DeleterOptions = context.options
    if context.pytree is None:
      raise ckptbench.CkptbenchError("deleter needs checkpoint data (checkpoint_config spec, preset or path)")
    directory = context.path / "checkpoints"
    metrics = ckptbench.Metrics()
    manager = ocp.CheckpointManager(
        directory,
        options=ocp.CheckpointManagerOptions(
            save_interval_steps=options.save_interval_steps,
            max_to_keep=options.max_to_keep,
            num_deletion_threads=options.num_deletion_threads,
        ),
    )
    saved: list[int] = []
    try:
      for step in range(options.train_steps):
        with metrics.measure("save"):
          if manager.save(step, args=ocp.args.StandardSave(context.pytree)):
            saved.append(step)
        with metrics.measure("wait_until_finished"):
          manager.wait_until_finished()
        if len(saved) >= 2 and saved[-2] in manager.all_steps():
          victim = saved[-2]  # the step before the one just saved
          nbytes, nfiles = _size(directory / str(victim))
          with metrics.measure("delete"), context.trace("delete"):
            manager.delete(victim)
          metrics.record("delete", "9_other/deleted_bytes", nbytes, "bytes", "sum")
          metrics.record("delete", "9_other/deleted_files", nfiles, "count", "sum")
          if victim in manager.all_steps() or (directory / str(victim)).exists():
            raise ckptbench.DataMismatchError(f"step {victim} is still there after its deletion")
      if not saved:
        raise ckptbench.CkptbenchError(f"no step was saved in {options.train_steps} steps")
      latest = manager.latest_step()
      if latest != saved[-1]:
        raise ckptbench.DataMismatchError(f"the latest step is {latest}, expected {saved[-1]}")
      ckptbench.evict_for_load(directory / str(latest), metrics, "restore", options.cold_cache)
      with metrics.measure("restore"), ckptbench.reading_checkpoint(directory / str(latest)):
        restored = manager.restore(latest, args=ocp.args.StandardRestore(ckptbench.abstract_pytree(context.pytree)))
    finally:
      manager.close()
    with metrics.measure("verify", ["time"]):
      ckptbench.verify_pytree(context.pytree, restored)
    return ckptbench.TestResult(metrics=metrics)
