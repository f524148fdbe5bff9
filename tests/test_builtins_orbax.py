"""resharding, restore_and_broadcast and replica_parallel: tiny suites run for real."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec

import ckptbench
from builtin_support import corrupt_before, errors, flip_chunks, ok_metrics, run_text
from ckptbench.benchmarks.restore_and_broadcast import RestoreAndBroadcastBenchmark
from ckptbench.data import write_fixture

FSDP = """\
suite_name: t
checkpoint_config:
  spec:
    w: {dtype: bfloat16, shape: [64, 32], sharding: [fsdp]}
    layer: {b: {dtype: float32, shape: [32], sharding: [fsdp]}, step: int}
mesh_config: {mesh_axes: [fsdp, tensor], ici_parallelism: {fsdp: 8, tensor: 1}}
"""
REPLICAS = """\
suite_name: t
checkpoint_config:
  spec:
    w: {dtype: bfloat16, shape: [64, 32], sharding: [model]}
    layer: {b: {dtype: float32, shape: [32], sharding: [null]}}
mesh_config: {mesh_axes: [replica, model], ici_parallelism: {replica: 2, model: 4}}
"""
RAW = "use_ocdbt: false, use_compression: false"  # chunks on disk are the raw bytes


def test_resharding_loads_into_each_target_and_counts_moved_arrays(tmp_path):
  outcome = run_text(tmp_path, FSDP, """\
      benchmarks:
        - generator: resharding
          options: {target_mesh: [null, "fsdp=2,tensor=4"], target_sharding: [source, swap, replicated]}
      """)
  by_target = {(r.options["target_mesh"], r.options["target_sharding"]): r.metrics for r in outcome.records}
  ok_metrics(outcome)
  assert by_target[(None, "source")]["load_9_other/resharded_arrays"].value == 0
  assert by_target[(None, "replicated")]["load_9_other/resharded_arrays"].value == 2
  assert by_target[("fsdp=2,tensor=4", "swap")]["load_9_other/resharded_arrays"].value == 2
  for metrics in by_target.values():
    assert metrics["load_0_basics/time_s"].value > 0 and "verify_0_basics/time_s" in metrics


def test_resharding_check_fails_when_the_checkpoint_on_disk_is_wrong(tmp_path):
  with corrupt_before(2, lambda: flip_chunks(tmp_path / "out")):  # save, then load
    outcome = run_text(tmp_path, FSDP, "num_warmups: 0\n", f"""\
        benchmarks:
          - generator: resharding
            options: {{target_sharding: swap, {RAW}}}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


def test_fixture_then_orbax_aliases_load_the_reference_checkpoint(tmp_path):
  (tmp_path / "fixture.yaml").write_text(REPLICAS + "benchmarks: [{generator: save_restore}]\n")
  written = write_fixture(str(tmp_path / "fixture.yaml"), tmp_path / "fx")
  sharding = json.loads((tmp_path / "fx" / "sharding.json").read_text())
  assert sharding["w"] == ["model"] and (tmp_path / "fx" / "checkpoint").is_dir()
  ref = f"reference_checkpoint_path: {written['checkpoint']}, reference_sharding_path: {written['sharding']}"
  v1 = "orbax.checkpoint._src.testing.benchmarks.v1."
  outcome = run_text(tmp_path, f"""\
      suite_name: reference
      mesh_config: {{mesh_axes: [replica, model], ici_parallelism: {{replica: 2, model: 4}}}}
      benchmarks:
        - generator: {v1}resharding_benchmark.ReshardingBenchmark
          options: {{{ref}}}
        - generator: {v1}restore_and_broadcast_benchmark.RestoreAndBroadcastBenchmark
          options: {{{ref}, use_load_and_broadcast: [true, false]}}
        - generator: {v1}replica_parallel_multislice_benchmark.ReplicaParallelMultislice
          options: {{{ref}, num_savings: 2}}
      """)
  metrics = ok_metrics(outcome)
  assert [r.generator.rsplit(".", 1)[1] for r in ckptbench.timed_runs(outcome.records)] == [
      "ReshardingBenchmark", "RestoreAndBroadcastBenchmark", "RestoreAndBroadcastBenchmark",
      "ReplicaParallelBenchmark",
  ]  # fmt: skip
  assert metrics[3]["save_0_basics/count"].value == 2


def test_restore_and_broadcast_compares_broadcast_with_every_replica_reading(tmp_path):
  outcome = run_text(tmp_path, REPLICAS, """\
      benchmarks:
        - generator: restore_and_broadcast
          options: {use_load_and_broadcast: [true, false]}
      """)
  for m in ok_metrics(outcome):
    assert m["load_9_other/replicas"].value == 2
    assert m["load_0_basics/time_s"].value > 0
    assert m["load_9_other/signed_zero_flips"].unit == "count"


def test_restore_and_broadcast_check_fails_when_the_data_is_wrong(tmp_path):
  with corrupt_before(2, lambda: flip_chunks(tmp_path / "out")):
    outcome = run_text(tmp_path, REPLICAS, "num_warmups: 0\n", f"""\
        benchmarks:
          - generator: restore_and_broadcast
            options: {{{RAW}}}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


def test_restore_and_broadcast_needs_a_replica_model_mesh(tmp_path):
  outcome = run_text(tmp_path, FSDP, "benchmarks: [{generator: restore_and_broadcast}]\n")
  assert errors(outcome) == [
      ("CkptbenchError", "restore_and_broadcast needs a mesh_config with mesh_axes [replica, model]; got ['fsdp', 'tensor']")
  ]


@pytest.mark.parametrize("async_enabled", [True, False])
def test_replica_parallel_saves_with_and_without_splitting_writes(tmp_path, async_enabled):
  outcome = run_text(tmp_path, REPLICAS, f"""\
      benchmarks:
        - generator: replica_parallel
          options: {{use_replica_parallel: [true, false], async_enabled: {str(async_enabled).lower()}}}
      """)
  for m in ok_metrics(outcome):
    assert m["save_0_basics/time_s"].value > 0 and m["load_0_basics/time_s"].value > 0
    assert ("save_blocking_0_basics/time_s" in m) == async_enabled


def test_replica_parallel_check_fails_when_the_saved_data_is_wrong(tmp_path):
  with corrupt_before(2, lambda: flip_chunks(tmp_path / "out")):  # save, then the load back
    outcome = run_text(tmp_path, REPLICAS, "num_warmups: 0\n", f"""\
        benchmarks:
          - generator: replica_parallel
            options: {{use_replica_parallel: true, async_enabled: false, {RAW}}}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


def test_load_and_broadcast_turns_negative_zeros_positive_and_the_check_counts_it(tmp_path):
  mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("replica", "model"))
  data = np.full((8, 4), -0.0, np.float32)
  data[1] = 1.5  # 28 negative zeros
  tree = {"w": jax.device_put(data, NamedSharding(mesh, PartitionSpec("model")))}
  flips = {}
  for broadcast in (True, False):
    options = RestoreAndBroadcastBenchmark.options_class(use_load_and_broadcast=broadcast)
    path = tmp_path / str(broadcast)
    path.mkdir()
    result = RestoreAndBroadcastBenchmark().test_fn(
        ckptbench.TestContext(pytree=tree, path=path, options=options, mesh=mesh)
    )
    flips[broadcast] = result.metrics.to_dict()["load_9_other/signed_zero_flips"].value
  assert flips == {True: 28 * 2, False: 0}  # each of the 2 replicas holds a copy
