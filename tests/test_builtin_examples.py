"""The built-ins' example suites stay valid, and `ckptbench fixture` works from the command line."""

from __future__ import annotations

import json

import pytest

from ckptbench.config._catalogue import BUILTINS
from ckptbench.config import load_suite
from ckptbench.engine._sweep import expand
from conftest import REPO

EXAMPLES = {
    "resharding": 6,
    "restore_and_broadcast": 2,
    "replica_parallel": 4,
    "checkpoint_manager": 4,
    "preemption_recovery": 2,
    "pytorch": 6,  # torchax is skipped where it does not import
    "training_interference": 2,
    "mlperf_storage": 4,
    "pytree_checkpoint": 4,
    "array_handler": 20,
    "orbax_load": 2,
    "safetensors_load": 7,
    "deleter": 5,
    "checkpoint_policy": 3,
    "pytorch_dcp": 4,
    "single_replica": 2,
    "checkpointer_cancel": 6,
    "storage_s3": 10,
    "multislice_broadcast": 2,
    "snapshotter": 2,
    "multihost_dispatchers": 2,
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_suite_expands_to_its_sweep(name):
  plan = expand(load_suite(REPO / "examples" / f"{name}.yaml"), 8)
  expected = {BUILTINS["storage"], BUILTINS["pytorch"]} if name == "storage_s3" else {BUILTINS[name]}
  assert {b.generator_path for b in plan.benchmarks} == expected
  assert len(plan.benchmarks) >= EXAMPLES[name]


def test_fixture_command_writes_checkpoint_and_sharding_file(tmp_path, cli):
  (tmp_path / "s.yaml").write_text(
      "suite_name: f\n"
      "checkpoint_config: {preset: llama-3.1-8b, scale: 0.00001}\n"
      "mesh_config: {mesh_axes: [fsdp, tensor], ici_parallelism: {fsdp: 4, tensor: 2}}\n"
      "benchmarks: [{generator: resharding}]\n"
  )
  done = cli("fixture", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "fx"))
  assert done.returncode == 0, done.stderr
  written = json.loads(done.stdout[: done.stdout.index("use it with")])
  assert written["mesh"] == "fsdp4xtensor2"
  sharding = json.loads((tmp_path / "fx" / "sharding.json").read_text())
  assert sharding["params/layers/layer_0/mlp/down"] == ["tensor", "fsdp"]
  assert (tmp_path / "fx" / "checkpoint" / "_CHECKPOINT_METADATA").is_file()
  again = cli("fixture", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "fx"))
  assert again.returncode == 2 and again.stderr.startswith("ckptbench: error: ") and "exists" in again.stderr
