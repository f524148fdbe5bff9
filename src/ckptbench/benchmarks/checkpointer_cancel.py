"""`checkpointer_cancel`: what cancelling an in-flight async save costs, and what it leaves behind.

An async save of step 1 is dispatched; `cancel_delay_secs` later it is
cancelled: with `api: v0` through the `CheckpointManager`'s async checkpointer
(`cancel()`), with `api: v1` through the v1 training `Checkpointer`
(`cancel(step=1)`, which also deletes the step). Then step 2 is saved, to show
the checkpointer still works, and restored. Without `perform_cancellation`
step 1 is saved to the end and restored instead.

Measured: `async_save_dispatch`, `cancel_cost` (the cancel call),
`wait_until_finished` (after it), `save_after_cancel`, `restore`. Recorded, as
0/1 per run (`cancel_cost_9_other/...`): `cancel_raised` (the cancel call
raised OSError, as v1's can while the save still writes the step it deletes;
the message goes to the record's notes), `in_flight_at_cancel` (step 1 was not
committed when cancel was called), `committed_after` (a committed step 1 is on
disk afterwards), `listed_after` (the manager still lists step 1), and
`tmp_dirs_left` (uncommitted step directories left on disk). Verified: every
committed step left on disk restores equal to what was saved; step 2 (or 1)
restores equal. Orbax's own view is recorded, not trusted: with 0.12.8 the v0
manager keeps listing a cancelled step that never committed (see docs).

The Orbax in-tree framework's `v0_checkpointer_cancel_benchmark` and
`v1_checkpointer_cancel_benchmark` resolve here (v0 and v1 defaults), with the
same option names.
"""

from __future__ import annotations

import dataclasses
import pathlib
import time
from collections.abc import Sequence
from typing import Any

import ckptbench

APIS = ("v0", "v1")
_TMP = ".orbax-checkpoint-tmp"


@dataclasses.dataclass(frozen=True, kw_only=True)
class CheckpointerCancelOptions(ckptbench.BenchmarkOptions):
  """Options of `checkpointer_cancel` (the peer's names, plus `api` and the layout).

  Attributes:
    api: "v0" (orbax.checkpoint.CheckpointManager) or "v1" (the v1 training
      Checkpointer).
    cancel_delay_secs: seconds between dispatching the save and cancelling it
      (0: at once, while the save is surely in flight).
    perform_cancellation: cancel (True) or let the save finish (False).
    use_ocdbt: write with the OCDBT driver.
    use_zarr3: write Zarr v3 (else v2).
    use_compression: zstd-compress array data.
    cold_cache: evict the step from the page cache before the restore
      (`restore_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  api: str | Sequence[str] = "v0"
  cancel_delay_secs: float | Sequence[float] = 2.0
  perform_cancellation: bool | Sequence[bool] = True
  use_ocdbt: bool | Sequence[bool] = True
  use_zarr3: bool | Sequence[bool] = True
  use_compression: bool | Sequence[bool] = True
  cold_cache: bool | Sequence[bool] = True

  def invalid_reason(self) -> str | None:
    if self.api not in APIS:
      return f"api must be one of {', '.join(APIS)}"
    if self.cancel_delay_secs < 0:
      return "cancel_delay_secs must not be negative"
    return None


@dataclasses.dataclass(frozen=True, kw_only=True)
class V1CheckpointerCancelOptions(CheckpointerCancelOptions):
  """The same options, with the v1 training Checkpointer by default."""

  api: str | Sequence[str] = "v1"


class _V0:
  """orbax.checkpoint.CheckpointManager with one PyTree item."""

  def __init__(self, directory: pathlib.Path, options: CheckpointerCancelOptions):
    import orbax.checkpoint as ocp

    self._ocp = ocp
    handler = ocp.PyTreeCheckpointHandler(
        use_ocdbt=options.use_ocdbt, use_zarr3=options.use_zarr3, use_compression=options.use_compression
    )
    self._impl = ocp.CheckpointManager(
        directory, options=ocp.CheckpointManagerOptions(create=True), item_handlers=handler
    )

  def save_async(self, step: int, state: Any) -> None:
    self._impl.save(step, args=self._ocp.args.PyTreeSave(state))

  def cancel(self, step: int) -> None:
    del step  # the v0 manager cancels whatever is in flight
    self._impl._checkpointer.cancel()  # noqa: SLF001  (the manager has no public cancel in 0.12.8)

  def wait(self) -> None:
    self._impl.wait_until_finished()

  def steps(self) -> list[int]:
    return sorted(self._impl.all_steps())

  def restore(self, step: int, abstract: Any) -> Any:
    return self._impl.restore(step, args=self._ocp.args.PyTreeRestore(item=abstract))

  def close(self) -> None:
    self._impl.close()


class _V1:
  """The v1 training Checkpointer."""

  def __init__(self, directory: pathlib.Path, options: CheckpointerCancelOptions):
    from orbax.checkpoint import v1 as ocp_v1

    context = ocp_v1.Context()
    context.array.saving.use_ocdbt = options.use_ocdbt
    context.array.saving.use_zarr3 = options.use_zarr3
    context.array.saving.use_compression = options.use_compression
    self._impl = ocp_v1.training.Checkpointer(directory, context=context)

  def save_async(self, step: int, state: Any) -> None:
    if self._impl.save_async(step, state) is None:
      raise ckptbench.CkptbenchError(f"the v1 training Checkpointer skipped the save of step {step}")

  def cancel(self, step: int) -> None:
    self._impl.cancel(step=step)

  def wait(self) -> None:
    self._impl.wait()

  def steps(self) -> list[int]:
    return sorted(c.step for c in self._impl.checkpoints)

  def restore(self, step: int, abstract: Any) -> Any:
    return self._impl.load(step, abstract)

  def close(self) -> None:
    self._impl.close()


def _committed(directory: pathlib.Path, step: int) -> bool:
  return (directory / str(step)).is_dir()


def _tmp_dirs(directory: pathlib.Path) -> int:
  return sum(1 for p in directory.iterdir() if p.name.endswith(_TMP)) if directory.is_dir() else 0


@ckptbench.benchmark_options(CheckpointerCancelOptions)
class CheckpointerCancelBenchmark(ckptbench.BenchmarksGenerator):
  """Cancels an in-flight async save; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="checkpointer_cancel",
      measures="cancelling an in-flight async save (`api: v0` by default, the `CheckpointManager`'s checkpointer): the cancel's cost, what it leaves on disk, whether the checkpointer still saves and restores",
      example="checkpointer_cancel.yaml",
      saves_with=("orbax",),
      cold_load="restore",
      orbax_alias="v0_checkpointer_cancel_benchmark.V0CheckpointerCancelBenchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: CheckpointerCancelOptions = context.options
    if context.pytree is None:
      raise ckptbench.CkptbenchError("checkpointer_cancel needs checkpoint data (checkpoint_config spec or preset)")
    directory = context.path / "checkpoints"
    metrics = ckptbench.Metrics()
    abstract = ckptbench.abstract_pytree(context.pytree)
    manager = (_V0 if options.api == "v0" else _V1)(directory, options)
    notes: list[str] = []
    try:
      with metrics.measure("async_save_dispatch"), context.trace("async_save_dispatch"):
        manager.save_async(1, context.pytree)
      if not options.perform_cancellation:
        with metrics.measure("wait_until_finished"):
          manager.wait()
        check = 1
      else:
        time.sleep(options.cancel_delay_secs)
        in_flight = not _committed(directory, 1)
        raised = None
        with metrics.measure("cancel_cost"), context.trace("cancel"):
          try:
            manager.cancel(1)
          except OSError as e:  # v1 deletes the step while the background save may still write it
            raised = f"{options.api} cancel raised {type(e).__name__}: {e}"
        if raised:
          notes.append(raised)
        with metrics.measure("wait_until_finished"):
          manager.wait()
        for key, value in (
            ("cancel_raised", raised is not None),
            ("in_flight_at_cancel", in_flight),
            ("committed_after", _committed(directory, 1)),
            ("listed_after", 1 in manager.steps()),
            ("tmp_dirs_left", _tmp_dirs(directory)),
        ):
          metrics.record("cancel_cost", f"9_other/{key}", int(value), "count")
        if _committed(directory, 1):  # the save finished before the cancel reached it
          with metrics.measure("verify", ["time"]):
            ckptbench.verify_pytree(context.pytree, manager.restore(1, abstract))
        with metrics.measure("save_after_cancel"):
          manager.save_async(2, context.pytree)
          manager.wait()
        check = 2
      if not _committed(directory, check):
        raise ckptbench.DataMismatchError(
            f"checkpointer_cancel ({options.api}): step {check} was saved to the end but is not on disk"
            f" (found {sorted(p.name for p in directory.iterdir())})"
        )
      ckptbench.evict_for_load(directory / str(check), metrics, "restore", options.cold_cache)
      with metrics.measure("restore"), context.trace("restore"):
        restored = manager.restore(check, abstract)
      with metrics.measure("verify", ["time"]):
        ckptbench.verify_pytree(context.pytree, restored)
    finally:
      manager.close()
    return ckptbench.TestResult(metrics=metrics, notes=tuple(notes))


@ckptbench.benchmark_options(V1CheckpointerCancelOptions)
class V1CheckpointerCancelBenchmark(CheckpointerCancelBenchmark):
  """`checkpointer_cancel` with `api: v1` by default (the peer's v1 generator)."""

  builtin = ckptbench.Builtin(
      name="v1_checkpointer_cancel",
      measures="`checkpointer_cancel` with `api: v1` by default (the v1 training `Checkpointer`, whose cancel also deletes the step)",
      example="checkpointer_cancel.yaml",
      saves_with=("orbax",),
      cold_load="restore",
      orbax_alias="v1_checkpointer_cancel_benchmark.V1CheckpointerCancelBenchmark",
  )
