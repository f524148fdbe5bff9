"""`emergency_checkpoint_manager`: multi-tier checkpointing, a local tier per host plus a persistent one.

Orbax's `experimental.emergency.CheckpointManager`: the primary replica
(replica 0 along mesh axis `replica_axis_index`) saves to the persistent
directory every `persistent_save_interval_steps` steps; every other replica
saves to each host's local directory (`--local_directory`, else a directory per
process under the run directory) every `local_save_interval_steps` steps. A
restore takes the latest step from a replica whose hosts all still hold it
locally (that replica reads and broadcasts), else from the persistent tier.

A training loop of `train_steps` jitted steps saves through the manager at
every step (the manager decides per tier). Then `lose_local_data` simulates a
lost host: `none`, `one_process` (the last process's local directory is
emptied, as a replaced host with a fresh RAM disk) or `all_processes`. The
latest step left is restored. Measured: `create_checkpoint_manager`, `save`
(each step's call), `wait_until_finished`, `restore`. Recorded:
`restore_9_other/step`, `restore_9_other/restoring_replica` (-1: persistent
tier) and `restore_9_other/from_local_tier`. Verified: the steps kept on disk
in each tier are those the intervals and `max_to_keep` call for, and the
restored state equals the state saved at that step.

A single process holding every replica is in the primary replica, so it has no
local tier; use `ckptbench launch -n N` with the replica axis in
`dcn_parallelism` (3 or more replicas to restore from the local tier after a
host is lost). The record's notes say how replicas were emulated. The Orbax
in-tree framework's `emergency_checkpoint_manager_benchmark` resolves here,
with the same option names; its two `experimental_*` options set Orbax's absl
flags of the same names for the run.

Every process reaches every collective: the checks run after the restore, so a
failed check on one process cannot leave the others waiting.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Sequence
from typing import Any

import jax

import ckptbench
from ckptbench.benchmarks import _multislice
from ckptbench.benchmarks.checkpoint_manager import steps_on_disk, train_step_fn

_NAME = "emergency_checkpoint_manager"
LOSSES = ("none", "one_process", "all_processes")


@dataclasses.dataclass(frozen=True, kw_only=True)
class EmergencyCheckpointManagerOptions(_multislice.TwoTierOptions):
  """Options of `emergency_checkpoint_manager` (the peer's names, plus `lose_local_data`).

  The tiers' intervals and retention, replica_axis_index and train_steps are
  `_multislice.TwoTierOptions`'s.

  Attributes:
    single_host_load_and_broadcast: one host finds the persistent steps and
      broadcasts them (Orbax's option of the same name).
    lose_local_data: "none", "one_process" or "all_processes": whose local
      checkpoints are deleted before the restore.
    experimental_use_distributed_id_for_mesh_consistency: Orbax's absl flag.
    experimental_orbax_use_distributed_process_id: Orbax's absl flag.
    cold_cache: each process evicts both its tiers from the page cache before
      the restore; `restore_0_basics/cold_cache_<how>` (a local tier on a RAM
      disk records `memory`), see `ckptbench.evict_for_load`.
  """

  single_host_load_and_broadcast: bool | Sequence[bool] = True
  lose_local_data: str | Sequence[str] = "one_process"
  experimental_use_distributed_id_for_mesh_consistency: bool | Sequence[bool] = True
  experimental_orbax_use_distributed_process_id: bool | Sequence[bool] = True
  cold_cache: bool | Sequence[bool] = True

  def invalid_reason(self) -> str | None:
    reason = self.tiers_invalid_reason()
    if reason:
      return reason
    if self.lose_local_data not in LOSSES:
      return f"lose_local_data must be one of {', '.join(LOSSES)}"
    return None


def _expected(interval: int, keep: int, train_steps: int) -> list[int]:
  return [s for s in range(train_steps) if s % interval == 0][-keep:]


def _kept_mismatch(tier: str, found: list[int], want: list[int]) -> str | None:
  if found != want:
    return f"{_NAME}: {tier} steps on disk are {found}, the options call for {want}"
  return None


def _manager(
    local: Any, persistent: Any, mesh: jax.sharding.Mesh, abstract: Any, options: EmergencyCheckpointManagerOptions
):
  """An emergency CheckpointManager over the two tiers, with the options' intervals and retention."""
  from orbax.checkpoint.experimental.emergency import checkpoint_manager as emergency

  return emergency.CheckpointManager(
      local_directory=local,
      persistent_directory=persistent,
      global_mesh=mesh,
      abstract_state=abstract,
      options=emergency.CheckpointManagerOptions(
          local=emergency.LocalCheckpointOptions(
              save_interval_steps=options.local_save_interval_steps, max_to_keep=options.local_max_to_keep
          ),
          persistent=emergency.PersistentCheckpointOptions(
              save_interval_steps=options.persistent_save_interval_steps,
              max_to_keep=options.persistent_max_to_keep,
          ),
          replica_axis_index=options.replica_axis_index,
          single_host_load_and_broadcast=options.single_host_load_and_broadcast,
      ),
  )


def _train_and_save(
    manager: Any, context: ckptbench.TestContext, options: EmergencyCheckpointManagerOptions, metrics: ckptbench.Metrics
) -> dict[int, Any]:
  """Trains `train_steps` steps, offering each to the manager; returns the states of the steps it saved."""
  import orbax.checkpoint as ocp

  step_fn = train_step_fn(context.pytree)
  state = context.pytree
  saved: dict[int, Any] = {}
  for step in range(options.train_steps):
    state = jax.block_until_ready(step_fn(state))
    with metrics.measure("save"), context.trace("save"):
      did_save = manager.save(step, args=ocp.args.Composite(state=ocp.args.PyTreeSave(state)))
    with metrics.measure("wait_until_finished", ["time"]):
      manager.wait_until_finished()
    if did_save:
      saved[step] = state
  metrics.record("save", "9_other/saved_steps", len(saved), "count")
  return saved


@ckptbench.benchmark_options(EmergencyCheckpointManagerOptions)
class EmergencyCheckpointManagerBenchmark(ckptbench.BenchmarksGenerator):
  """Multi-tier saves, a lost host, a restore; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="emergency_checkpoint_manager",
      measures="Orbax's emergency (multi-tier) `CheckpointManager`: a local tier per host plus a persistent one, a lost host, a restore from the tier that still holds the step (`ckptbench launch -n 3` for the local tier)",
      example="emergency_checkpoint_manager.yaml",
      saves_with=("orbax",),
      cold_load="restore",
      orbax_alias="emergency_checkpoint_manager_benchmark.EmergencyCheckpointManagerBenchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    # Defines the absl flags set below.
    from orbax.checkpoint.experimental.emergency import checkpoint_manager  # noqa: F401

    options: EmergencyCheckpointManagerOptions = context.options
    id_flags = {
        "experimental_use_distributed_id_for_mesh_consistency": (
            options.experimental_use_distributed_id_for_mesh_consistency
        ),
        "experimental_orbax_use_distributed_process_id": options.experimental_orbax_use_distributed_process_id,
    }
    notes: tuple[str, ...] = ()
    if jax.process_count() == 1 and any(id_flags.values()):
      # Orbax's id maps need a jax.distributed client; one process has no ids to map.
      notes = ("one process without jax.distributed: the experimental_* distributed-id flags were left off",)
      id_flags = dict.fromkeys(id_flags, False)
    with _multislice.orbax_flags(**id_flags):
      result = self._run(context, options)
    result.notes = result.notes + notes
    return result

  def _run(self, context: ckptbench.TestContext, options: EmergencyCheckpointManagerOptions) -> ckptbench.TestResult:
    from orbax.checkpoint._src.multihost import multihost

    if context.pytree is None:
      raise ckptbench.CkptbenchError(f"{_NAME} needs checkpoint data (checkpoint_config spec or preset)")
    mesh = context.mesh
    persistent, local = _multislice.prepare_tiers(context, options.replica_axis_index, _NAME, "local_tier")
    owners = _multislice.processes_per_replica(mesh, options.replica_axis_index)
    process = jax.process_index()
    in_primary = process in owners[0]

    metrics = ckptbench.Metrics()
    with metrics.measure("create_checkpoint_manager", ["time"]):
      manager = _manager(local, persistent, mesh, ckptbench.abstract_pytree(context.pytree), options)
    try:
      saved = _train_and_save(manager, context, options, metrics)
      if in_primary:
        mismatch = _kept_mismatch("persistent", steps_on_disk(persistent), _expected(
            options.persistent_save_interval_steps, options.persistent_max_to_keep, options.train_steps))
      else:
        mismatch = _kept_mismatch(f"local (process {process})", steps_on_disk(local), _expected(
            options.local_save_interval_steps, options.local_max_to_keep, options.train_steps))

      lose = options.lose_local_data == "all_processes" or (
          options.lose_local_data == "one_process" and process == jax.process_count() - 1
      )
      if lose:
        shutil.rmtree(local)
        local.mkdir()
      multihost.sync_global_processes(f"{_NAME}:local_data_lost")
      manager.reload()
      manager.all_steps()  # reads both tiers on every process (a collective)
      step = manager.latest_step()
      if step is None:
        raise ckptbench.CkptbenchError(f"{_NAME}: no step left to restore in either tier")
      replica = manager._checkpoint_manager._find_slice_with_complete_local_checkpoint(step)  # noqa: SLF001
      metrics.record("restore", "9_other/step", step, "count")
      metrics.record("restore", "9_other/restoring_replica", replica, "count")
      metrics.record("restore", "9_other/from_local_tier", int(replica >= 0), "count")
      ckptbench.evict_for_load([persistent, local], metrics, "restore", options.cold_cache)
      with metrics.measure("restore"), context.trace("restore"):
        restored = manager.restore(step)["state"]
      with metrics.measure("verify", ["time"]):
        ckptbench.verify_pytree(saved[step], restored)
      if mismatch:
        raise ckptbench.DataMismatchError(mismatch)
    finally:
      manager.close()
    return ckptbench.TestResult(metrics=metrics, notes=_multislice.emulation_notes(mesh, options.replica_axis_index))
