"""checkpoint_manager and preemption_recovery: training loops and killed processes, for real."""

from __future__ import annotations

import pytest

from builtin_support import corrupt_before, errors, ok_metrics, roll_back_latest_step, run_text

DATA = """\
suite_name: t
checkpoint_config:
  spec:
    w: {dtype: bfloat16, shape: [64, 32], sharding: [fsdp]}
    opt: {mu: {dtype: float32, shape: [64, 32], sharding: [fsdp]}, count: {dtype: int32, shape: [8]}}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}
"""


@pytest.mark.parametrize("api", ["checkpoint_manager", "training_checkpointer"])
def test_checkpoint_manager_loop_keeps_the_latest_steps(tmp_path, api):
  outcome = run_text(tmp_path, DATA, f"""\
      benchmarks:
        - generator: checkpoint_manager
          options: {{api: {api}, async_enabled: [true, false], num_steps: 7, save_interval_steps: 2, max_to_keep: 2}}
      """)
  for m in ok_metrics(outcome):
    assert m["save_9_other/saved_steps"].value == 4  # steps 0, 2, 4, 6
    assert m["save_blocking_0_basics/count"].value == 4
    assert m["train_step_0_basics/count"].value == 7
    assert m["save_durable_0_basics/time_s_mean"].value > 0
    assert m["delete_9_other/deleted_steps"].value == 1  # step 4; 6 stays
    assert m["restore_0_basics/time_s"].value > 0


def test_checkpoint_manager_check_fails_when_the_latest_step_holds_older_data(tmp_path):
  # Measured blocks: save_blocking x3 (steps 0, 2, 4), wait, then restore (the 5th).
  with corrupt_before(5, lambda: roll_back_latest_step(tmp_path / "out")):
    outcome = run_text(tmp_path, DATA, """\
        benchmarks:
          - generator: checkpoint_manager
            options: {async_enabled: false, num_steps: 6, save_interval_steps: 2, max_to_keep: 2}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


def test_checkpoint_manager_takes_orbax_suite_path_and_options(tmp_path):
  orbax = "orbax.checkpoint._src.testing.benchmarks.checkpoint_manager_benchmark.CheckpointManagerBenchmark"
  outcome = run_text(tmp_path, DATA, f"""\
      benchmarks:
        - generator: {orbax}
          options: {{save_interval_steps: [1], max_to_keep: [2], train_steps: [3], wait_each_step: true}}
      """)
  (m,) = ok_metrics(outcome)
  assert outcome.records[0].generator == "ckptbench.benchmarks.checkpoint_manager.CheckpointManagerBenchmark"
  assert m["train_step_0_basics/count"].value == 3 and m["save_9_other/saved_steps"].value == 3
  assert m["wait_until_finished_0_basics/count"].value == 3
  assert m["save_total_0_basics/time_s"].value >= m["save_blocking_0_basics/time_s"].value


@pytest.mark.slow
def test_preemption_recovery_resumes_from_the_last_committed_step(tmp_path):
  outcome = run_text(tmp_path, DATA, """\
      benchmarks:
        - generator: preemption_recovery
          options: {save_interval_steps: 2, kill_step: 4}
      """)
  [m] = ok_metrics(outcome)
  assert m["recover_9_other/steps_lost"].value == 2  # killed while saving 4, recovered 2
  assert m["train_9_other/half_written_steps"].value == 1
  assert 0 < m["recover_restore_0_basics/time_s"].value < m["recover_0_basics/time_s"].value


@pytest.mark.slow
def test_preemption_recovery_check_fails_when_the_committed_step_is_wrong(tmp_path):
  # Measured blocks: train, then recover: step 2's files are replaced by step 0's.
  with corrupt_before(2, lambda: roll_back_latest_step(tmp_path / "out")):
    outcome = run_text(tmp_path, DATA, """\
        benchmarks:
          - generator: preemption_recovery
            options: {api: training_checkpointer, save_interval_steps: 2, kill_step: 4}
        """)
  [(kind, message)] = errors(outcome)
  assert kind == "DataMismatchError" and "step 2" in message
