"""single_replica (and the other multi-replica built-ins): tiny suites, in one process and under `launch`."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from builtin_support import corrupt_before, errors, flip_chunks, ok_metrics, roll_back_latest_step, run_text
from conftest import REPO, run_cli

import ckptbench
from ckptbench.config import load_suite
from ckptbench.config._catalogue import builtin_paths
from ckptbench.engine._sweep import expand

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
  """The measured records of OUT (a suite's first run on each mesh is a warm-up, recorded apart)."""
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  return [r for r in records if not r["warmup"]]


def test_single_replica_restores_through_the_peer_path_with_and_without_colocated_python(tmp_path):
  outcome = run_text(tmp_path, REPLICAS, f"""\
      benchmarks:
        - generator: {ORBAX}single_replica_benchmark.SingleReplicaBenchmark
          options:
            replica_axis_index: 0
            broadcast_memory_limit_bytes: [null, 1024]
            use_colocated_python: [true, false]
      """)
  metrics = ok_metrics(outcome)
  assert len(metrics) == 4 and not outcome.summary.unsupported  # colocated Python runs on CPU, as the peer's runner has it
  for m in metrics:
    assert m["restore_9_other/replicas"].value == 2 and m["restore_9_other/reads_checkpoint"].value == 1
    assert m["restore_0_basics/time_s"].value > 0 and "verify_0_basics/time_s" in m
    assert m["construct_restore_args_0_basics/time_s"].value < m["restore_0_basics/time_s"].value
  notes = outcome.records[0].notes
  assert "emulated slices" in notes[0] and "in-process copy" in notes[0]
  colocated = [r.notes for r in outcome.records if r.options["use_colocated_python"]]
  assert all("colocated Python on the CPU backend" in n[-1] for n in colocated)


def test_single_replica_check_fails_when_the_checkpoint_on_disk_is_wrong(tmp_path):
  with corrupt_before(3, lambda: flip_chunks(tmp_path / "out")):  # save, wait, then restore
    outcome = run_text(tmp_path, REPLICAS, "num_warmups: 0\n", f"""\
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


ECM = "emergency_checkpoint_manager_benchmark.EmergencyCheckpointManagerBenchmark"
ARRAYS = REPLICAS.replace(", step: int", "")  # the multi-tier managers restore arrays only


def test_emergency_manager_in_one_process_saves_only_the_persistent_tier_and_restores_it(tmp_path):
  outcome = run_text(tmp_path, "keep_checkpoints: true\n", ARRAYS, f"""\
      benchmarks:
        - generator: {ORBAX}{ECM}
          options:
            persistent_save_interval_steps: [2]
            persistent_max_to_keep: [5]
            local_save_interval_steps: [1]
            local_max_to_keep: 2
            replica_axis_index: 0
            train_steps: 5
            single_host_load_and_broadcast: true
            experimental_orbax_use_distributed_process_id: true
            experimental_use_distributed_id_for_mesh_consistency: true
      """)
  (m,) = ok_metrics(outcome)
  # One process holds both replicas, so it is in the primary one: persistent saves at 0, 2, 4 only.
  assert m["save_9_other/saved_steps"].value == 3 and m["save_0_basics/count"].value == 5
  assert (m["restore_9_other/step"].value, m["restore_9_other/restoring_replica"].value) == (4, -1)
  assert sorted(p.name for p in tmp_path.glob("out/*/repeat_0/persistent/*")) == ["0", "2", "4"]
  notes = outcome.records[0].notes
  assert "in-process copy" in notes[0] and "distributed-id flags were left off" in notes[-1]


def test_emergency_manager_refuses_leaves_that_are_not_arrays(tmp_path):
  outcome = run_text(tmp_path, REPLICAS, "benchmarks: [{generator: emergency_checkpoint_manager}]\n")
  assert errors(outcome) == [("CkptbenchError", "emergency_checkpoint_manager: leaf ['layer']['step'] has type int;"
                              " Orbax's multi-tier managers restore jax.Arrays only (drop it from checkpoint_config.spec)")]


def test_emergency_manager_check_fails_when_the_restored_step_holds_older_data(tmp_path):
  with corrupt_before(4, lambda: roll_back_latest_step(tmp_path / "out")):  # 3 saves, then the restore
    outcome = run_text(tmp_path, ARRAYS, "num_warmups: 0\n", """\
        benchmarks:
          - generator: emergency_checkpoint_manager
            options: {persistent_save_interval_steps: 1, persistent_max_to_keep: 2, train_steps: 3, lose_local_data: none}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


@pytest.mark.slow
def test_emergency_manager_restores_from_a_local_replica_after_one_host_loses_its_data(tmp_path):
  text = (REPO / "examples" / "emergency_checkpoint_manager.yaml").read_text().replace("num_repeats: 2", "num_repeats: 1")
  text = text.replace("[2048, 512]", "[64, 32]").replace("[512]", "[32]")
  suite = tmp_path / "suite.yaml"
  suite.write_text(text.replace("[none, one_process, all_processes]", "[one_process, all_processes]"))
  out, local = tmp_path / "out", tmp_path / "local"
  done = run_cli("launch", "-n", "3", "--devices_per_process", "2", str(suite), "-o", str(out), "--no-progress",
                 "--local_directory", str(local), "--keep_checkpoints", timeout=240)  # fmt: skip
  assert done.returncode == 0, done.stdout + done.stderr
  got = {(r["options"]["lose_local_data"], r["host"]): r["metrics"] for r in _records(out) if not r["error"]}
  assert len(got) == 6
  for host in range(3):
    # Host 2 lost its local tier; replica 1 (host 1) still has step 6 and broadcasts it.
    one = got[("one_process", host)]
    assert (one["restore_9_other/step"]["value"], one["restore_9_other/restoring_replica"]["value"]) == (6, 1)
    # Every host lost it: the persistent tier's latest step (4) is restored.
    lost = got[("all_processes", host)]
    assert (lost["restore_9_other/step"]["value"], lost["restore_9_other/from_local_tier"]["value"]) == (4, 0)
  # The local tier lives under --local_directory, one directory per process; the primary replica has none.
  tiers = {h: list((local / f"host_{h}").rglob("local_tier")) for h in range(3)}
  assert all(tiers.values())
  assert not any(any(p.iterdir()) for p in tiers[0])


def test_the_emergency_example_plans_its_sweep_on_six_devices():
  plan = expand(load_suite(REPO / "examples" / "emergency_checkpoint_manager.yaml"), 6)
  assert [b.varying["lose_local_data"] for b in plan.benchmarks] == ["none", "one_process", "all_processes"]
  assert {b.generator_path for b in plan.benchmarks} == {builtin_paths()["emergency_checkpoint_manager"]}


def test_multislice_broadcast_copies_replica_0_in_rounds_through_the_peer_path(tmp_path):
  outcome = run_text(tmp_path, ARRAYS, f"""\
      benchmarks:
        - generator: {ORBAX}multislice_broadcast_benchmark.MultisliceBroadcastBenchmark
          options: {{replica_axis_index: 0, memory_limit_bytes: [1073741824, 1024]}}
      """)
  by = {r.options["memory_limit_bytes"]: m for r, m in zip(ckptbench.timed_runs(outcome.records), ok_metrics(outcome))}
  assert by[1073741824]["broadcast_array_9_other/broadcasts"].value == 1
  assert by[1024]["broadcast_array_9_other/broadcasts"].value == 2  # one round per array: each exceeds 1 KiB
  for m in by.values():
    assert m["broadcast_array_9_other/is_source"].value == 1 and "verify_0_basics/time_s" in m
  assert "in-process copy" in outcome.records[0].notes[0]


def test_multislice_broadcast_check_fails_when_a_copy_differs(tmp_path, monkeypatch):
  from orbax.checkpoint._src.multihost import multislice

  broadcast = multislice.broadcast_one_replica_to_all

  def damaging(*args, **kwargs):  # Orbax's real broadcast, then one element of one copy changed
    outputs, rounds = broadcast(*args, **kwargs)
    first = outputs[0]
    shard = first.addressable_shards[-1]  # a device of the last replica
    data = np.asarray(shard.data).copy()
    data.flat[0] += 1
    damaged = [jax.device_put(data, s.device) if s is shard else s.data for s in first.addressable_shards]
    return (jax.make_array_from_single_device_arrays(first.shape, first.sharding, damaged), *outputs[1:]), rounds

  monkeypatch.setattr(multislice, "broadcast_one_replica_to_all", damaging)
  outcome = run_text(tmp_path, ARRAYS, "benchmarks: [{generator: multislice_broadcast}]\n")
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


@pytest.mark.slow
def test_multislice_broadcast_example_runs_one_replica_per_process(tmp_path):
  text = (REPO / "examples" / "multislice_broadcast.yaml").read_text().replace("num_repeats: 3", "num_repeats: 1")
  suite = tmp_path / "suite.yaml"
  suite.write_text(text.replace("shape: [4096, 1024]", "shape: [256, 64]").replace("[1024, 1024]", "[64, 64]"))
  out = tmp_path / "out"
  done = run_cli("launch", "-n", "2", str(suite), "-o", str(out), "--no-progress", timeout=180)
  assert done.returncode == 0, done.stdout + done.stderr
  records = _records(out)
  assert len(records) == 4 and all(r["error"] is None for r in records)
  for r in records:
    assert r["metrics"]["broadcast_array_9_other/is_source"]["value"] == (r["host"] == 0)
    assert "emulated as separate processes ([[0], [1]])" in r["notes"][0] and "loopback" in r["notes"][0]


SNAPSHOT = """\
suite_name: t
mesh_config: {mesh_axes: [replica, model], ici_parallelism: {model: 8}}
"""


def test_snapshotter_scales_down_and_up_through_the_peer_path(tmp_path):
  pytest.importorskip("pathwaysutils", reason="the Snapshotter needs the pathways extra")
  outcome = run_text(tmp_path, SNAPSHOT, f"""\
      benchmarks:
        - generator: {ORBAX}v1.snapshotter_benchmark.SnapshotterBenchmark
          options: {{num_scale_down_slices: [1, 2], num_scale_up_slices: [2, 4], num_savings: 2}}
      """)
  metrics = ok_metrics(outcome)
  assert [(r.options["num_scale_down_slices"], r.options["num_scale_up_slices"]) for r in ckptbench.timed_runs(outcome.records)] == [
      (1, 2), (1, 4), (2, 4)
  ]  # fmt: skip
  assert [i.reason for i in outcome.summary.invalid_combinations] == [
      "need 1 <= num_scale_down_slices < num_scale_up_slices"
  ]
  for m in metrics:
    for op in ("save", "load_scale_down", "save_scale_down_state", "load_scale_up"):
      assert m[f"{op}_0_basics/count"].value == 2  # two savings
    assert m["verify_0_basics/count"].value == 4
  assert "split into 4 groups of 2" in ckptbench.timed_runs(outcome.records)[1].notes[0]


def test_snapshotter_check_fails_when_a_load_differs(tmp_path, monkeypatch):
  pytest.importorskip("pathwaysutils", reason="the Snapshotter needs the pathways extra")
  from orbax.checkpoint.experimental.v1._src.training.pathways import snapshotter

  load = snapshotter.Snapshotter.load

  def damaging(self, abstract_state, **kwargs):  # the real load, then one element changed
    restored = load(self, abstract_state, **kwargs)
    weights = restored["weights"]
    return {"weights": jax.device_put(weights.at[0, 0].add(1), weights.sharding)}

  monkeypatch.setattr(snapshotter.Snapshotter, "load", damaging)
  outcome = run_text(tmp_path, SNAPSHOT, "benchmarks: [{generator: snapshotter}]\n")
  ((kind, message),) = errors(outcome)
  assert kind == "DataMismatchError" and "restored data differs" in message


def test_p2p_manager_refuses_a_single_process_before_any_run(tmp_path):
  with pytest.raises(ckptbench.CkptbenchError, match=r"p2p_checkpoint_manager needs 2 processes or more \(1 here\):"
                                                     r" run it with `ckptbench launch -n 2 .*suite.yaml -o OUT`"):
    run_text(tmp_path, ARRAYS, "benchmarks: [{generator: p2p_checkpoint_manager}]\n")
  assert not (tmp_path / "out").exists()


P2P_SUITE = """\
suite_name: p2p
num_repeats: 1  # one run per way the step is lost (a sweep would repeat until decided)
checkpoint_config: {spec: {w: {dtype: float32, shape: [64, 32], sharding: [tensor]}}}
mesh_config: {mesh_axes: [data, tensor], ici_parallelism: {tensor: 2}, dcn_parallelism: {data: 2}}
benchmarks:
  - generator: GENERATOR
    options:
      persistent_save_interval_steps: [2]
      persistent_max_to_keep: [5]
      local_save_interval_steps: [2]
      local_max_to_keep: 2
      replica_axis_index: 0
      train_steps: 5
      delete_before_restore: DELETE
"""


@pytest.mark.slow
def test_p2p_manager_restores_a_lost_step_from_the_peer_and_from_the_persistent_tier(tmp_path):
  suite = tmp_path / "suite.yaml"
  generator = ORBAX + "p2p_checkpoint_manager_benchmark.P2pCheckpointManagerBenchmark"
  suite.write_text(P2P_SUITE.replace("GENERATOR", generator).replace("DELETE", "[none, local_p0, local_all]"))
  out = tmp_path / "out"
  done = run_cli("launch", "-n", "2", "--devices_per_process", "2", str(suite), "-o", str(out), "--no-progress",
                 "--local_directory", str(tmp_path / "local"), timeout=240)  # fmt: skip
  assert done.returncode == 0, done.stdout + done.stderr
  source = {(r["options"]["delete_before_restore"], r["host"]): r["metrics"]["restore_9_other/source"]["value"]
            for r in _records(out)}  # fmt: skip
  # 0: own disk, 1: fetched from the peer over TCP, 2: persistent tier. Only process 0 lost its copy in local_p0.
  assert source == {("none", 0): 0, ("none", 1): 0, ("local_p0", 0): 1, ("local_p0", 1): 0,
                    ("local_all", 0): 2, ("local_all", 1): 2}  # fmt: skip


@pytest.mark.slow
def test_p2p_manager_check_fails_when_the_local_step_holds_older_data(tmp_path):
  suite = tmp_path / "suite.yaml"
  suite.write_text(P2P_SUITE.replace("GENERATOR", "multiprocess_corruption.RolledBackP2P").replace("DELETE", "none"))
  out = tmp_path / "out"
  done = run_cli("launch", "-n", "2", "--devices_per_process", "2", str(suite), "-o", str(out), "--no-progress",
                 timeout=240)  # fmt: skip
  assert done.returncode != 0
  assert [(r["host"], r["error"]["type"]) for r in _records(out)] == [(0, "DataMismatchError"), (1, "DataMismatchError")]


DISPATCH = """\
suite_name: t
checkpoint_config: {spec: {array: {dtype: float32, shape: [64, 32], sharding: [data, model]}}}
mesh_config: {mesh_axes: [data, model], ici_parallelism: {data: 2, model: 4}}
"""


def test_dispatchers_run_colocated_python_and_skip_the_missing_dispatcher(tmp_path):
  pytest.importorskip("cloudpickle", reason="colocated Python needs the pathways extra")
  outcome = run_text(tmp_path, DISPATCH, f"""\
      benchmarks:
        - generator: {ORBAX}multihost_dispatchers_benchmark.MultihostDispatchersBenchmark
          options: {{use_colocated: [true, false], device_count: [null, 2]}}
      """)
  metrics = ok_metrics(outcome)
  assert [m["dispatch_with_result_specs_9_other/devices"].value for m in metrics] == [8, 2]
  for m in metrics:
    for op in ("dispatch_without_result_specs", "dispatch_with_dummy_result_array", "dispatch_with_result_specs"):
      assert m[f"{op}_0_basics/time_s"].value > 0
  assert {i.options["use_colocated"] for i in outcome.summary.invalid_combinations} == {False}
  assert "no Pathways controller" in outcome.records[0].notes[0]


def test_dispatchers_check_fails_when_the_returned_array_differs(tmp_path, monkeypatch):
  pytest.importorskip("cloudpickle", reason="colocated Python needs the pathways extra")
  from orbax.checkpoint._src.multihost import dispatchers

  dispatch = dispatchers.ColocatedPythonDispatcher.dispatch

  def damaging(self, func, **kwargs):  # the real dispatch, then the returned array changed
    result = dispatch(self, func, **kwargs)
    if kwargs.get("result_specs") is None:
      return result
    return jax.device_put(result.at[0, 0].add(1), result.sharding)

  monkeypatch.setattr(dispatchers.ColocatedPythonDispatcher, "dispatch", damaging)
  outcome = run_text(tmp_path, DISPATCH, "benchmarks: [{generator: multihost_dispatchers, options: {use_colocated: true}}]\n")
  ((kind, message),) = errors(outcome)
  assert kind == "DataMismatchError" and "restored data differs" in message
