"""pytree_checkpoint and array_handler: Orbax's v0 checkpointer and its array handler, run for real."""

from __future__ import annotations

import pathlib

from builtin_support import corrupt_before, errors, flip_chunks, ok_metrics, run_text

DATA = """\
suite_name: t
checkpoint_config:
  spec:
    array: {dtype: float32, shape: [64, 32], sharding: [data, model]}
    layer: {b: {dtype: bfloat16, shape: [32], sharding: [null]}, step: int}
mesh_config: {mesh_axes: [data, model], ici_parallelism: {data: 4, model: 2}}
"""
RAW = "use_ocdbt: false, use_zarr3: true, use_compression: false"  # chunks on disk are the raw bytes


def test_pytree_checkpoint_saves_restores_and_verifies_each_combination(tmp_path):
  outcome = run_text(tmp_path, DATA, """\
      benchmarks:
        - generator: pytree_checkpoint
          options: {async_enabled: [true, false], use_zarr3: [true, false], use_replica_parallel: [false, true]}
      """)
  metrics = ok_metrics(outcome)
  assert len(metrics) == 8
  for record, m in zip(outcome.records, metrics):
    assert m["save_0_basics/time_s"].value > 0 and m["restore_0_basics/time_s"].value > 0
    assert ("wait_until_finished_0_basics/time_s" in m) == record.options["async_enabled"]
    assert "verify_0_basics/time_s" in m


def test_pytree_checkpoint_lists_colocated_python_as_unsupported_without_pathways(tmp_path):
  outcome = run_text(tmp_path, DATA, """\
      benchmarks:
        - generator: pytree_checkpoint
          options: {use_colocated_python: [false, true]}
      """)
  assert len(ok_metrics(outcome)) == 1
  (unsupported,) = outcome.summary.unsupported
  assert "needs a Pathways backend" in unsupported.reason and not outcome.summary.invalid_combinations


def test_pytree_checkpoint_fails_when_the_data_on_disk_is_wrong(tmp_path):
  with corrupt_before(2, lambda: flip_chunks(tmp_path / "out")):  # save, then restore
    outcome = run_text(tmp_path, DATA, f"""\
        benchmarks:
          - generator: pytree_checkpoint
            options: {{async_enabled: false, {RAW}}}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


def test_array_handler_serializes_merges_checks_metadata_and_deserializes(tmp_path):
  outcome = run_text(tmp_path, DATA, """\
      benchmarks:
        - generator: array_handler
          options: {use_ocdbt: [true, false], use_zarr3: [true, false], use_metadata_store: [true, false]}
      """)
  metrics = ok_metrics(outcome)
  assert len(metrics) == 8
  for record, m in zip(outcome.records, metrics):
    assert m["serialize_9_other/arrays"].value == 2  # `array` and `layer.b`; the int is no array
    assert ("merge_ocdbt_0_basics/time_s" in m) == record.options["use_ocdbt"]
    for block in ("serialize", "metadata", "deserialize", "verify"):
      assert m[f"{block}_0_basics/time_s"].value > 0


def _flip_zarr3_chunks(root: pathlib.Path) -> bool:
  """Inverts the first bytes of every raw Zarr 3 chunk file (`.../<array>/c/<i>/<j>`)."""
  chunks = [f for f in root.rglob("*") if f.is_file() and "c" in f.relative_to(root).parts[:-1]]
  for chunk in chunks:
    data = bytearray(chunk.read_bytes())
    data[0] ^= 0xFF
    chunk.write_bytes(bytes(data))
  return bool(chunks)


def test_array_handler_fails_when_the_data_on_disk_is_wrong(tmp_path):
  with corrupt_before(3, lambda: _flip_zarr3_chunks(tmp_path / "out")):  # serialize, metadata, deserialize
    outcome = run_text(tmp_path, DATA, """\
        benchmarks:
          - generator: array_handler
            options: {use_ocdbt: false, use_zarr3: true}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


def test_deleter_times_each_deletion_and_checks_the_step_is_gone(tmp_path):
  orbax = "orbax.checkpoint._src.testing.benchmarks.deleter_benchmark.DeleterBenchmark"
  outcome = run_text(tmp_path, DATA, f"""\
      benchmarks:
        - generator: {orbax}
          options: {{train_steps: 3, max_to_keep: 10, num_deletion_threads: [1, 4]}}
      """)
  for m in ok_metrics(outcome):
    assert m["delete_0_basics/count"].value == 2  # steps 0 and 1; step 2 stays
    assert m["delete_9_other/deleted_bytes"].value > 0 and m["delete_9_other/deleted_files"].value > 0
    assert m["restore_0_basics/time_s"].value > 0 and "verify_0_basics/time_s" in m
  assert sorted(p.name for p in (tmp_path / "out").rglob("checkpoints/*") if p.name.isdigit()) == ["2", "2"]


def _flip_ocdbt_data(root: pathlib.Path) -> bool:
  """Inverts a byte in the middle of every OCDBT data file (`.../d/<name>`) of the latest step."""
  files = [f for f in root.rglob("*") if f.is_file() and f.parent.name == "d"]
  for f in files:
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))
  return bool(files)


def test_deleter_fails_when_the_kept_step_is_damaged(tmp_path):
  # Measured blocks: save, wait (step 0), save, wait, delete (step 1), then restore (the 6th).
  with corrupt_before(6, lambda: _flip_ocdbt_data(tmp_path / "out")):
    outcome = run_text(tmp_path, DATA, """\
        benchmarks:
          - generator: deleter
            options: {train_steps: 2, max_to_keep: 2}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


POLICIES = """\
benchmarks:
  - generator: orbax.checkpoint._src.testing.benchmarks.checkpoint_policy_benchmark.CheckpointPolicyBenchmark
    options:
      num_checkpoints: 40
      checkpoint_policies_options:
        - preservation_policies: [{policy_type: LatestN, n: 2}, {policy_type: CustomSteps, custom_steps: [10]}]
          save_decision_policies: [{policy_type: FixedIntervalPolicy, interval_steps: 5}]
          expected_preserve_checkpoints: [10, 30, 35]
        - preservation_policies: [{policy_type: LatestN, n: 2}]
          save_decision_policies: [{policy_type: EveryOtherTuesday}]
"""


def test_checkpoint_policy_times_decisions_saves_listing_and_cleanup(tmp_path):
  outcome = run_text(tmp_path, DATA, POLICIES)
  (m,) = ok_metrics(outcome)
  assert m["should_save_0_basics/count"].value == 40 and m["save_0_basics/count"].value == 8
  assert m["save_9_other/saved_steps"].value == 8 and m["list_9_other/kept_steps"].value == 3
  for block in ("list", "restore", "cleanup"):
    assert m[f"{block}_0_basics/time_s"].value > 0
  (invalid,) = outcome.summary.invalid_combinations
  assert "unknown save_decision_policies policy_type 'EveryOtherTuesday'" in invalid.reason


def test_checkpoint_policy_fails_when_an_expected_step_is_not_kept(tmp_path):
  outcome = run_text(tmp_path, DATA, POLICIES.replace("[10, 30, 35]", "[10, 25, 35]"))
  ((kind, message),) = errors(outcome)
  assert kind == "DataMismatchError" and "steps [25] were expected to be kept" in message


def test_checkpoint_policy_fails_when_the_kept_data_is_damaged(tmp_path):
  with corrupt_before(1, lambda: _flip_ocdbt_data(tmp_path / "out")):  # the restore: the first fully measured block
    outcome = run_text(tmp_path, DATA, POLICIES)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]
