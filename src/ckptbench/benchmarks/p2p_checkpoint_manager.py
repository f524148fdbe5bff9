"""`p2p_checkpoint_manager`: restore a lost host's shards from its peers' local checkpoints.

Orbax's `experimental.emergency.p2p.CheckpointManager`: every process saves
its own shards to its local directory every `local_save_interval_steps` steps
(and the state goes to the persistent directory every
`persistent_save_interval_steps`); each process runs a small TCP service that
serves its local steps to peers. A restore reads the local disk, else fetches
the missing shards from a process of another replica holding the same data,
else (if any host cannot) every host falls back to the persistent tier.

A loop of `train_steps` jitted updates calls `save` at every step. Then
`delete_before_restore` (the peer's values) removes local data: `none`,
`local_p0` (process 0's latest step: restored from a peer) or `local_all`
(every process's: restored from the persistent tier). The step restored is the
latest local save, or with `local_all` the latest persistent one, restored by
a new manager (a restarted job's). Measured:
`create_checkpoint_manager`, `save` (summed over the steps),
`wait_until_finished`, `restore`. Recorded: `restore_9_other/step` and
`restore_9_other/source` (0 this host's disk, 1 a peer, 2 the persistent tier:
the manager's own rule, evaluated just before the restore). Verified: the
restored state equals the state saved at that step.

The peer's suite (`p2p_checkpoint_manager_benchmark`) resolves here with its
option names; it runs the three deletions one after another in each run, a
sweep `delete_before_restore: [none, local_p0, local_all]` does the same as
three benchmarks. Needs `ckptbench launch -n N` (2 or more replicas); the
peers' service listens on this machine's address, so "peer" traffic is
loopback TCP here.
"""

from __future__ import annotations

import dataclasses
import pathlib
import shutil
from collections.abc import Sequence
from typing import Any

import jax

import ckptbench
from ckptbench.benchmarks import _multislice
from ckptbench.benchmarks.checkpoint_manager import train_step_fn

_NAME = "p2p_checkpoint_manager"
DELETIONS = ("none", "local_p0", "local_all")
LOCAL, PEER, PERSISTENT = 0, 1, 2


@dataclasses.dataclass(frozen=True, kw_only=True)
class P2PCheckpointManagerOptions(_multislice.TwoTierOptions):
  """Options of `p2p_checkpoint_manager` (the peer's names).

  The tiers' intervals and retention, replica_axis_index and train_steps are
  `_multislice.TwoTierOptions`'s.

  Attributes:
    delete_before_restore: "none", "local_p0" or "local_all".
    cold_cache: each process evicts both its tiers from the page cache before
      the restore (a peer serves the files it evicted itself);
      `restore_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`.
  """

  delete_before_restore: str | Sequence[str] = "local_p0"
  cold_cache: bool | Sequence[bool] = True

  def invalid_reason(self) -> str | None:
    reason = self.tiers_invalid_reason()
    if reason:
      return reason
    if self.delete_before_restore not in DELETIONS:
      return f"delete_before_restore must be one of {', '.join(DELETIONS)}"
    return None


def _source(manager: Any, step: int) -> int:
  """Where the manager will restore `step` from, by its own rule (private state of orbax 0.12.8)."""
  from orbax.checkpoint._src.multihost import multihost

  manager._p2p.sync_registry_if_stale()  # noqa: SLF001  (a collective; the restore would do it first)
  if step in manager._local_manager.all_steps():  # noqa: SLF001
    mine = LOCAL
  elif manager._p2p.has_shard_for_step(step):  # noqa: SLF001
    mine = PEER
  else:
    mine = PERSISTENT
  # One host that cannot restore from local or peers sends every host to the persistent tier.
  return PERSISTENT if multihost.global_max([int(mine == PERSISTENT)])[0] else mine


def _manager(
    mesh: jax.sharding.Mesh, abstract: Any, local: Any, persistent: Any, options: P2PCheckpointManagerOptions
):
  """A P2P CheckpointManager over the local and persistent tiers, with the options' intervals and retention."""
  from orbax.checkpoint.experimental.emergency.p2p import checkpoint_manager as p2p
  from orbax.checkpoint.experimental.emergency.p2p import options as p2p_options

  return p2p.CheckpointManager(
      mesh, abstract, local, persistent,
      options=p2p_options.CheckpointManagerOptions(
          local=p2p_options.LocalCheckpointOptions(
              save_interval_steps=options.local_save_interval_steps, max_to_keep=options.local_max_to_keep
          ),
          persistent=p2p_options.PersistentCheckpointOptions(
              save_interval_steps=options.persistent_save_interval_steps,
              max_to_keep=options.persistent_max_to_keep,
          ),
          replica_axis_index=options.replica_axis_index,
      ),
  )  # fmt: skip


def _lose_local_step(saved: dict[int, Any], local: Any, options: P2PCheckpointManagerOptions, process: int) -> int:
  """The step to restore (the latest in the tier it is to come from); deletes its local copy as asked."""
  interval = options.local_save_interval_steps
  if options.delete_before_restore == "local_all":
    interval = options.persistent_save_interval_steps
  step = max(s for s in saved if s % interval == 0)
  if options.delete_before_restore == "local_all" or (options.delete_before_restore == "local_p0" and process == 0):
    shutil.rmtree(pathlib.Path(local) / str(step), ignore_errors=True)
  return step


@ckptbench.benchmark_options(P2PCheckpointManagerOptions)
class P2PCheckpointManagerBenchmark(ckptbench.BenchmarksGenerator):
  """Local saves, a lost local step, a restore through peers; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="p2p_checkpoint_manager",
      measures="Orbax's peer-to-peer `CheckpointManager`: local saves per process, then a restore from this host's disk, a peer's or the persistent tier (`ckptbench launch -n 2` or more)",
      example="p2p_checkpoint_manager.yaml",
      saves_with=("orbax",),
      cold_load="restore",
      orbax_alias="p2p_checkpoint_manager_benchmark.P2pCheckpointManagerBenchmark",
      processes=2,
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: P2PCheckpointManagerOptions = context.options
    with _multislice.orbax_flags():  # Orbax reads its absl flags (at their defaults) on this path
      return self._run(context, options)

  def _run(self, context: ckptbench.TestContext, options: P2PCheckpointManagerOptions) -> ckptbench.TestResult:
    import orbax.checkpoint as ocp
    from orbax.checkpoint import checkpoint_utils
    from orbax.checkpoint._src.multihost import multihost
    from orbax.checkpoint.experimental.emergency.p2p import args as p2p_args

    if context.pytree is None:
      raise ckptbench.CkptbenchError(f"{_NAME} needs checkpoint data (checkpoint_config spec or preset)")
    if jax.process_count() == 1:  # the runner refuses this before any run (`builtin.processes`)
      raise ckptbench.CkptbenchError(
          f"{_NAME} restores from peer processes: run it with `ckptbench launch -n N` (N >= 2), one or more"
          " processes per replica"
      )
    mesh = context.mesh
    persistent, local = _multislice.prepare_tiers(context, options.replica_axis_index, _NAME, "p2p_local")
    process = jax.process_index()

    metrics = ckptbench.Metrics()
    abstract = ckptbench.abstract_pytree(context.pytree)
    with metrics.measure("create_checkpoint_manager", ["time"]):
      manager = _manager(mesh, abstract, local, persistent, options)
    try:
      step_fn = train_step_fn(context.pytree)
      state = context.pytree
      saved: dict[int, Any] = {}
      for step in range(options.train_steps):
        state = jax.block_until_ready(step_fn(state))
        with metrics.measure("save"), context.trace("save"):
          manager.save(step, args=p2p_args.Composite(state=ocp.args.PyTreeSave(state)))
        with metrics.measure("wait_until_finished", ["time"]):
          manager.wait_until_finished()
        if step % options.local_save_interval_steps == 0 or step % options.persistent_save_interval_steps == 0:
          saved[step] = state  # a step that may be restored
      # The job restarts: a new manager restores. Why not reload() the old one, as Orbax's suite does:
      # its local tier deletes the steps past max_to_keep in a background thread that only close()
      # waits for, and a reload while it deletes lists a step whose files are going (FileNotFoundError
      # on one host under load, the other hosts stuck in the next collective).
      manager, closing = None, manager
      closing.close()
      step = _lose_local_step(saved, local, options, process)
      multihost.sync_global_processes(f"{_NAME}:local_data_lost")
      manager = _manager(mesh, abstract, local, persistent, options)
      source = _source(manager, step)
      metrics.record("restore", "9_other/step", step, "count")
      metrics.record("restore", "9_other/source", source, "count")
      restore_args = checkpoint_utils.construct_restore_args(abstract)
      ckptbench.evict_for_load([persistent, local], metrics, "restore", options.cold_cache)
      with metrics.measure("restore"), context.trace("restore"):
        restored = manager.restore(
            step, args=p2p_args.Composite(state=ocp.args.PyTreeRestore(item=abstract, restore_args=restore_args))
        )["state"]
      with metrics.measure("verify", ["time"]):
        ckptbench.verify_pytree(saved[step], restored)
    finally:
      if manager is not None:  # None: closed, its successor not made
        manager.close()
    return ckptbench.TestResult(metrics=metrics, notes=_multislice.emulation_notes(mesh, options.replica_axis_index))
