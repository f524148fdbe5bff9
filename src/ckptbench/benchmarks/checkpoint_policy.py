"""`checkpoint_policy`: save-decision and preservation policies over many small checkpoints.

Orbax's in-tree `checkpoint_policy_benchmark.CheckpointPolicyBenchmark`
resolves here, with the same options: `num_checkpoints` steps, and
`checkpoint_policies_options`, one mapping (a list sweeps) of
`save_decision_policies` and `preservation_policies` (each a list of
`{policy_type, ...}`, combined with Orbax's AnySavePolicy / AnyPreservationPolicy)
and optionally `expected_preserve_checkpoints`.

A CheckpointManager with those policies sees every step. Measured:
`should_save` (the decision alone, per step), `save` (per saved step: the
decision again plus the save call), `wait` (the last save), `list` (a new
manager reading the directory and listing its steps: what a restart pays),
`restore` (the latest kept step) and `cleanup` (deleting every kept step).
Recorded: `9_other/saved_steps`, `9_other/kept_steps`. Checked: the steps
kept by the manager are those on disk and include `expected_preserve_checkpoints`;
the latest kept step restores to the saved data; nothing is left after cleanup.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import orbax.checkpoint as ocp

import ckptbench
from ckptbench.benchmarks.checkpoint_manager import steps_on_disk

cm = ocp.checkpoint_managers

# policy_type -> (constructor, {YAML key: constructor argument}).
_SAVE_POLICIES: dict[str, tuple[Any, dict[str, str]]] = {
    "FixedIntervalPolicy": (cm.FixedIntervalPolicy, {"interval_steps": "interval"}),
    "SpecificStepsPolicy": (cm.SpecificStepsPolicy, {"custom_steps": "steps"}),
    "ContinuousCheckpointingPolicy": (
        cm.ContinuousCheckpointingPolicy, {"minimum_interval_secs": "minimum_interval_secs"}
    ),
    "InitialSavePolicy": (cm.InitialSavePolicy, {}),
    "PreemptionSavePolicy": (cm.PreemptionCheckpointingPolicy, {}),
}  # fmt: skip
_PRESERVATION_POLICIES: dict[str, tuple[Any, dict[str, str]]] = {
    "LatestN": (cm.LatestN, {"n": "n"}),
    "EveryNSeconds": (cm.EveryNSeconds, {"interval_secs": "interval_secs"}),
    "EveryNSteps": (cm.EveryNSteps, {"interval_steps": "interval_steps"}),
    "CustomSteps": (cm.CustomSteps, {"custom_steps": "steps"}),
}


def _policy(raw: Any, table: dict[str, tuple[Any, dict[str, str]]], kind: str) -> Any:
  """An Orbax policy from `{policy_type, ...}`; ValueError naming what is wrong."""
  if not isinstance(raw, dict) or "policy_type" not in raw:
    raise ValueError(f"each of {kind} is a mapping with policy_type, got {raw!r}")
  name = raw["policy_type"]
  if name not in table:
    raise ValueError(f"unknown {kind} policy_type {name!r}; known: {', '.join(table)}")
  constructor, arguments = table[name]
  unknown = set(raw) - {"policy_type"} - set(arguments)
  if unknown:
    raise ValueError(f"{name} takes {', '.join(arguments) or 'no settings'}, not {', '.join(sorted(unknown))}")
  return constructor(**{arguments[k]: v for k, v in raw.items() if k != "policy_type"})


def build_policies(raw: dict[str, Any]) -> tuple[Any, Any, list[int] | None]:
  """(save decision policy, preservation policy, expected kept steps) of one policies mapping."""
  unknown = set(raw) - {"save_decision_policies", "preservation_policies", "expected_preserve_checkpoints"}
  if unknown:
    raise ValueError(f"checkpoint_policies_options has no {', '.join(sorted(unknown))}")
  save = [_policy(p, _SAVE_POLICIES, "save_decision_policies") for p in raw.get("save_decision_policies") or []]
  keep = [_policy(p, _PRESERVATION_POLICIES, "preservation_policies") for p in raw.get("preservation_policies") or []]
  if not save or not keep:
    raise ValueError("give at least one save_decision_policies and one preservation_policies entry")
  expected = raw.get("expected_preserve_checkpoints")
  return cm.AnySavePolicy(save), cm.AnyPreservationPolicy(keep), None if expected is None else list(expected)


@dataclasses.dataclass(frozen=True)
class CheckpointPolicyOptions(ckptbench.BenchmarkOptions):
  """Options of `checkpoint_policy` (a list sweeps).

  Attributes:
    checkpoint_policies_options: `{save_decision_policies: [...],
      preservation_policies: [...], expected_preserve_checkpoints: [...]}`.
      Save decisions: FixedIntervalPolicy (interval_steps), SpecificStepsPolicy
      (custom_steps), ContinuousCheckpointingPolicy (minimum_interval_secs),
      InitialSavePolicy, PreemptionSavePolicy. Preservation: LatestN (n),
      EveryNSeconds (interval_secs), EveryNSteps (interval_steps), CustomSteps
      (custom_steps).
    num_checkpoints: steps the manager sees.
    cold_cache: evict the latest kept step from the page cache before the restore
      (`restore_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  checkpoint_policies_options: dict[str, Any] | Sequence[dict[str, Any]] = dataclasses.field(
      default_factory=dict
  )
  num_checkpoints: int | Sequence[int] = 1000
  cold_cache: bool | Sequence[bool] = True

  def invalid_reason(self) -> str | None:
    if self.num_checkpoints < 1:
      return "num_checkpoints must be at least 1"
    try:
      build_policies(self.checkpoint_policies_options)
    except (ValueError, TypeError) as e:
      return str(e)
    return None


@ckptbench.benchmark_options(CheckpointPolicyOptions)
class CheckpointPolicyBenchmark(ckptbench.BenchmarksGenerator):
  """Runs the policies over `num_checkpoints` steps; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="checkpoint_policy",
      measures="save-decision and preservation policies over many steps: decision cost, what is kept, listing, cleanup",
      example="checkpoint_policy.yaml",
      saves_with=("orbax",),
      cold_load="restore",
      orbax_alias="checkpoint_policy_benchmark.CheckpointPolicyBenchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: CheckpointPolicyOptions = context.options
    if context.pytree is None:
      raise ckptbench.CkptbenchError("checkpoint_policy needs checkpoint data (checkpoint_config spec or preset)")
    save_policy, keep_policy, expected = build_policies(options.checkpoint_policies_options)
    directory = context.path / "checkpoints"
    manager_options = ocp.CheckpointManagerOptions(save_decision_policy=save_policy, preservation_policy=keep_policy)
    metrics = ckptbench.Metrics()
    saved = []
    manager = ocp.CheckpointManager(directory, options=manager_options)
    try:
      for step in range(options.num_checkpoints):
        with metrics.measure("should_save", ["time"]):
          decided = manager.should_save(step)
        if decided:
          with metrics.measure("save", ["time"]):
            if manager.save(step, args=ocp.args.StandardSave(context.pytree)):
              saved.append(step)
      with metrics.measure("wait", ["time"]):
        manager.wait_until_finished()
    finally:
      manager.close()
    with metrics.measure("list", ["time"]):
      manager = ocp.CheckpointManager(directory, options=manager_options)
      kept = sorted(manager.all_steps())
    try:
      metrics.record("save", "9_other/saved_steps", len(saved), "count")
      metrics.record("list", "9_other/kept_steps", len(kept), "count")
      if kept != steps_on_disk(directory) or not kept:
        raise ckptbench.DataMismatchError(
            f"the manager lists steps {kept} but the directory holds {steps_on_disk(directory)}"
        )
      missing = sorted(set(expected or []) - set(kept))
      if missing:
        raise ckptbench.DataMismatchError(f"steps {missing} were expected to be kept; kept: {kept}")
      abstract = ckptbench.abstract_pytree(context.pytree)
      ckptbench.evict_for_load(directory / str(kept[-1]), metrics, "restore", options.cold_cache)
      with metrics.measure("restore"), ckptbench.reading_checkpoint(directory / str(kept[-1])):
        restored = manager.restore(kept[-1], args=ocp.args.StandardRestore(abstract))
      ckptbench.verify_pytree(context.pytree, restored)
      with metrics.measure("cleanup", ["time"]):
        for step in kept:
          manager.delete(step)
      if steps_on_disk(directory):
        raise ckptbench.DataMismatchError(f"steps {steps_on_disk(directory)} are left after deleting all")
    finally:
      manager.close()
    return ckptbench.TestResult(metrics=metrics)
