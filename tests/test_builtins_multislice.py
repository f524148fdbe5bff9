"""single_replica (and the other multi-replica built-ins): tiny suites, in one process and under `launch`."""

from __future__ import annotations

import json

import pytest
from builtin_support import corrupt_before, errors, flip_chunks, ok_metrics, run_text
from conftest import REPO, run_cli

ORBAX = "orbax.checkpoint._src.testing.benchmarks."
REPLICAS = """\
suite_name: t
checkpoint_config:
  spec:
    w: {dtype: float32, shape: [64, 32], sharding: [tensor]}
    layer: {b: {dtype: bfloat16, shape: [32], sharding: [null]}, step: int}
mesh_config: {mesh_axes: [data, tensor], ici_parallelism: {tensor: 4}, dcn_parallelism: {data: 2}}
"""
RAW = "use_ocdbt: false, use_compression: false"  # chunks on disk are the raw bytes


def _records(out):
  return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_single_replica_restores_through_the_peer_path_and_skips_colocated_python(tmp_path):
  outcome = run_text(tmp_path, REPLICAS, f"""\
      benchmarks:
        - generator: {ORBAX}single_replica_benchmark.SingleReplicaBenchmark
          options:
            replica_axis_index: 0
            broadcast_memory_limit_bytes: [null, 1024]
            use_colocated_python: [true, false]
      """)
  metrics = ok_metrics(outcome)
  assert len(metrics) == 2  # the colocated-Python points are not run ...
  invalid = outcome.summary["invalid_combinations"]
  assert len(invalid) == 2  # ... and say why
  assert all(i["options"]["use_colocated_python"] is True and "Pathways" in i["reason"] for i in invalid)
  for m in metrics:
    assert m["restore_9_other/replicas"]["value"] == 2 and m["restore_9_other/reads_checkpoint"]["value"] == 1
    assert m["restore_0_basics/time_s"]["value"] > 0 and "verify_0_basics/time_s" in m
    assert m["construct_restore_args_0_basics/time_s"]["value"] < m["restore_0_basics/time_s"]["value"]
  notes = outcome.records[0]["notes"]
  assert "emulated slices" in notes[0] and "in-process copy" in notes[0]


def test_single_replica_check_fails_when_the_checkpoint_on_disk_is_wrong(tmp_path):
  with corrupt_before(3, lambda: flip_chunks(tmp_path / "out")):  # save, wait, then restore
    outcome = run_text(tmp_path, REPLICAS, f"""\
        benchmarks:
          - generator: single_replica
            options: {{{RAW}}}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


def test_single_replica_refuses_data_sharded_over_the_replica_axis(tmp_path):
  outcome = run_text(tmp_path, REPLICAS.replace("sharding: [tensor]", "sharding: [data]"), """\
      benchmarks: [{generator: single_replica}]
      """)
  ((kind, message),) = errors(outcome)
  assert kind == "CkptbenchError" and "['w'] is sharded over the replica axis 'data'" in message


@pytest.mark.slow
def test_single_replica_example_runs_on_two_processes_one_replica_each(tmp_path):
  text = (REPO / "examples" / "single_replica.yaml").read_text().replace("num_repeats: 3", "num_repeats: 1")
  suite = tmp_path / "suite.yaml"
  suite.write_text(text.replace("shape: [4096, 1024]", "shape: [256, 64]").replace("[1024, 1024]", "[64, 64]"))
  out = tmp_path / "out"
  done = run_cli("launch", "-n", "2", str(suite), "-o", str(out), "--no-progress", timeout=180)
  assert done.returncode == 0, done.stdout + done.stderr
  records = _records(out)
  assert sorted((r["host"], str(r["options"]["broadcast_memory_limit_bytes"])) for r in records) == [
      (0, "4194304"), (0, "None"), (1, "4194304"), (1, "None")
  ]  # fmt: skip
  for r in records:
    assert r["error"] is None
    # Replica 0 is process 0: only it reads; process 1 gets its copy by the broadcast.
    assert r["metrics"]["restore_9_other/reads_checkpoint"]["value"] == (r["host"] == 0)
    assert "emulated as separate processes ([[0], [1]])" in r["notes"][0]
