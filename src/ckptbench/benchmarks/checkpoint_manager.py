"""`checkpoint_manager`: a training-like loop that checkpoints through a manager.

A jitted step updates every floating-point array of the checkpoint data; the
manager saves every `save_interval_steps` steps and keeps the latest
`max_to_keep`. Two managers (`api`): Orbax's `CheckpointManager` and the v1
training `Checkpointer` (given an explicit fixed-interval policy: its default
policy silently skips a save while an async save is still running).

Measured: `train_step` (compute), `save_blocking` (what a save costs the loop),
`save_durable` (from the save call until the step is committed on disk),
`wait` (the final wait for outstanding saves), `restore` (the latest step) and
`delete` (every step but the latest, explicitly). With `wait_each_step` (what
Orbax's checkpoint_manager and checkpoint_manager_perf benchmarks do) every
save is followed by `wait_until_finished`, and `save_total` records the call
plus that wait per step. Verified: the steps left on
disk are exactly the latest `max_to_keep` saved ones, and the restored latest
step equals the state that was saved at that step.
"""

from __future__ import annotations

import dataclasses
import pathlib
import threading
import time
from typing import Any

import jax
import orbax.checkpoint as ocp
from orbax.checkpoint import v1 as ocp_v1

from ckptbench import (
    BenchmarkOptions,
    BenchmarksGenerator,
    Builtin,
    CkptbenchError,
    DataMismatchError,
    Metrics,
    TestContext,
    TestResult,
    abstract_pytree,
    benchmark_options,
    evict_for_load,
    verify_pytree,
)

APIS = ("checkpoint_manager", "training_checkpointer")


@dataclasses.dataclass(frozen=True, kw_only=True)
class CheckpointManagerOptions(BenchmarkOptions):
  """Options of `checkpoint_manager`.

  Orbax's in-tree `checkpoint_manager_benchmark.CheckpointManagerBenchmark`
  resolves here; its options `save_interval_steps`, `max_to_keep` and
  `train_steps` mean the same here.

  Attributes:
    api: "checkpoint_manager" (orbax.checkpoint.CheckpointManager) or
      "training_checkpointer" (orbax.checkpoint.v1.training.Checkpointer).
    num_steps: training steps per run.
    save_interval_steps: save at steps 0, n, 2n, ...
    max_to_keep: checkpoints kept (the latest ones); None keeps all.
    async_enabled: save asynchronously.
    train_steps: Orbax's name for `num_steps`; when given, it replaces it.
    wait_each_step: wait for each save to finish before the next step.
    cold_cache: evict the checkpoints from the page cache before the restore
      (`restore_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  api: str | list[str] = "checkpoint_manager"
  num_steps: int | list[int] = 10
  save_interval_steps: int | list[int] = 2
  max_to_keep: int | None | list[int | None] = 2
  async_enabled: bool | list[bool] = True
  train_steps: int | None | list[int | None] = None
  wait_each_step: bool | list[bool] = False
  cold_cache: bool | list[bool] = True

  @property
  def steps(self) -> int:
    """The number of training steps (`train_steps` when given, else `num_steps`)."""
    return self.num_steps if self.train_steps is None else self.train_steps

  def invalid_reason(self) -> str | None:
    if self.api not in APIS:
      return f"api must be one of {', '.join(APIS)}"
    if self.steps < 1 or self.save_interval_steps < 1:
      return "num_steps (train_steps) and save_interval_steps must be at least 1"
    if self.max_to_keep is not None and self.max_to_keep < 1:
      return "max_to_keep must be at least 1 (or null to keep all)"
    return None


# Orbax calls post_finalization_callback on its primary process only; the others learn of the
# commit when their background save thread passes the barrier that waits for it, and then Orbax
# records this event on every process.
_SAVE_THREAD_DONE = "/jax/checkpoint/write/async/thread_duration_sec"
_waiting_for_thread_event: list[Durability] = []


def _on_event(event: str, _duration_s: float, **_kwargs: Any) -> None:
  if event == _SAVE_THREAD_DONE:
    for durability in list(_waiting_for_thread_event):
      durability.committed()


jax.monitoring.register_event_duration_secs_listener(_on_event)


class Durability:
  """Times each save from its call until Orbax reports it committed.

  On Orbax's primary process the report is its post_finalization_callback. On the
  other processes, with `follow_save_threads`, it is the end of Orbax's background
  save thread, which waits at a barrier for the primary's commit; `close()` stops
  following.
  """

  def __init__(self, follow_save_threads: bool = False):
    self._lock = threading.Lock()
    self._started: dict[int, float] = {}
    self.durable_s: dict[int, float] = {}
    self._following = follow_save_threads and jax.process_index() != 0
    if self._following:
      _waiting_for_thread_event.append(self)

  def close(self) -> None:
    if self._following:
      _waiting_for_thread_event.remove(self)
      self._following = False

  def started(self, step: int) -> None:
    with self._lock:
      self._started[step] = time.perf_counter()

  def committed(self, step: int | None = None) -> None:
    """Marks `step`, or else the oldest save not yet committed, as committed now.

    Without a step, only the oldest pending save is marked: saves commit in
    order, and the next save is already started (its call is waiting for this
    commit) when the callback of the previous one runs.
    """
    now = time.perf_counter()
    with self._lock:
      if step is None:
        pending = [s for s in self._started if s not in self.durable_s]
        if not pending:
          return
        step = min(pending)
      self.durable_s[step] = now - self._started[step]


class Manager:
  """The two managers behind one interface."""

  def __init__(self, api: str, directory: pathlib.Path, options: CheckpointManagerOptions):
    self.api = api
    self.durability = durability = Durability(follow_save_threads=options.async_enabled)
    self._async = options.async_enabled
    if api == "checkpoint_manager":
      self._impl = ocp.CheckpointManager(
          directory,
          options=ocp.CheckpointManagerOptions(
              save_interval_steps=options.save_interval_steps,
              max_to_keep=options.max_to_keep,
              enable_async_checkpointing=options.async_enabled,
              # Only one save is in flight at a time: the previous one is waited for.
              async_options=(
                  ocp.AsyncOptions(post_finalization_callback=self.durability.committed)
                  if options.async_enabled
                  else None
              ),
          ),
      )
    else:
      context = ocp_v1.Context()
      # A plain function, not a bound method: the Context deep-copies its options.
      context.async_options.post_finalization_callback = lambda: durability.committed()
      policies = ocp_v1.training
      self._impl = policies.Checkpointer(
          directory,
          context=context,
          save_decision_policy=policies.save_decision_policies.FixedIntervalPolicy(
              options.save_interval_steps
          ),
          preservation_policy=(
              policies.preservation_policies.LatestN(options.max_to_keep)
              if options.max_to_keep is not None
              else policies.preservation_policies.PreserveAll()
          ),
      )

  def should_save(self, step: int) -> bool:
    return self._impl.should_save(step)

  def save(self, step: int, state: Any) -> None:
    self.durability.started(step)
    if self.api == "checkpoint_manager":
      self._impl.save(step, args=ocp.args.StandardSave(state))
      if not self._async:
        self.durability.committed(step)
    elif self._async:
      if self._impl.save_async(step, state) is None:
        raise CkptbenchError(f"the training Checkpointer skipped the save of step {step}")
    else:
      self._impl.save(step, state)
      self.durability.committed(step)

  def wait(self) -> None:
    if self.api == "checkpoint_manager":
      self._impl.wait_until_finished()
    else:
      self._impl.wait()

  def steps(self) -> list[int]:
    if self.api == "checkpoint_manager":
      return sorted(self._impl.all_steps())
    return sorted(c.step for c in self._impl.checkpoints)

  def restore(self, step: int, abstract: Any) -> Any:
    if self.api == "checkpoint_manager":
      return self._impl.restore(step, args=ocp.args.StandardRestore(abstract))
    return self._impl.load(step, abstract)

  def delete(self, step: int) -> None:
    self._impl.delete(step)

  def close(self) -> None:
    self._impl.close()
    self.durability.close()


def train_step_fn(tree: Any):
  """A jitted update of every floating-point array; other leaves pass through."""
  leaves, treedef = jax.tree.flatten(tree)
  index = [
      i
      for i, x in enumerate(leaves)
      if isinstance(x, jax.Array) and jax.numpy.issubdtype(x.dtype, jax.numpy.floating)
  ]

  @jax.jit
  def update(arrays):
    return [(x * 0.99 + 0.01).astype(x.dtype) for x in arrays]

  def step(state):
    flat = jax.tree.leaves(state)
    new = update([flat[i] for i in index])
    for i, x in zip(index, new):
      flat[i] = x
    return jax.tree.unflatten(treedef, flat)

  return step


def steps_on_disk(directory: pathlib.Path) -> list[int]:
  """The step directories (named by their step) under `directory`; none when it does not exist."""
  return sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit()) if directory.is_dir() else []


@benchmark_options(CheckpointManagerOptions)
class CheckpointManagerBenchmark(BenchmarksGenerator):
  """A training loop with checkpoints; see the module docstring."""

  builtin = Builtin(
      name="checkpoint_manager",
      measures="a jitted training loop with `CheckpointManager` or the v1 training `Checkpointer`: per-step blocking, time to durable, restore of the latest step, deletion of old steps",
      example="checkpoint_manager.yaml",
      saves_with=("orbax",),
      cold_load="restore",
      orbax_alias="checkpoint_manager_benchmark.CheckpointManagerBenchmark",
  )

  def test_fn(self, context: TestContext) -> TestResult:
    options = context.options
    if context.pytree is None:
      raise CkptbenchError("checkpoint_manager needs checkpoint data (checkpoint_config spec or preset)")
    directory = context.path / "checkpoints"
    metrics = Metrics()
    step_fn = train_step_fn(context.pytree)
    state = context.pytree
    saved: list[int] = []
    last_saved = None
    manager = Manager(options.api, directory, options)
    try:
      for step in range(options.steps):
        with metrics.measure("train_step", ["time"]):
          state = jax.block_until_ready(step_fn(state))
        if manager.should_save(step):
          started = time.perf_counter()
          with metrics.measure("save_blocking"), context.trace("save_blocking"):
            manager.save(step, state)
          if options.wait_each_step:
            with metrics.measure("wait_until_finished"):
              manager.wait()
            metrics.record("save_total", "0_basics/time_s", time.perf_counter() - started, "s", "sum")
          saved.append(step)
          last_saved = state
      with metrics.measure("wait"):
        manager.wait()
      for step in saved:
        if step not in manager.durability.durable_s:
          raise CkptbenchError(f"{options.api}: no commit was reported for step {step}")
        metrics.record("save_durable", "0_basics/time_s", manager.durability.durable_s[step], "s", "sum")
      metrics.record("save", "9_other/saved_steps", len(saved), "count")
      kept = saved[-options.max_to_keep :] if options.max_to_keep else saved
      for name, found in (("manager", manager.steps()), ("disk", steps_on_disk(directory))):
        if found != kept:
          raise DataMismatchError(
              f"{options.api}: steps kept ({name}) are {found}, expected the latest"
              f" {options.max_to_keep} of the saved steps {saved}: {kept}"
          )
      latest = kept[-1]
      evict_for_load(directory, metrics, "restore", options.cold_cache)
      with metrics.measure("restore"), context.trace("restore"):
        restored = manager.restore(latest, abstract_pytree(last_saved))
      with metrics.measure("verify", ["time"]):
        verify_pytree(last_saved, restored)
      with metrics.measure("delete"):
        for step in kept[:-1]:
          manager.delete(step)
      if steps_on_disk(directory) != [latest]:
        raise DataMismatchError(
            f"{options.api}: after deleting {kept[:-1]}, steps on disk are"
            f" {steps_on_disk(directory)}, expected [{latest}]"
        )
      metrics.record("delete", "9_other/deleted_steps", len(kept) - 1, "count")
    finally:
      manager.close()
    return TestResult(metrics=metrics)
