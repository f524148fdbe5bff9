"""The built-ins' example suites stay valid, and `ckptbench fixture` works from the command line."""

from __future__ import annotations

import json

import pytest

from ckptbench.config import catalogue, load_suite
from ckptbench.engine._sweep import expand
from conftest import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


@pytest.mark.parametrize("path", sorted(catalogue()), ids=lambda path: catalogue()[path].name)
def test_every_builtin_has_an_example_that_sweeps_it(path):
  suite = load_suite(REPO / "examples" / catalogue()[path].example)
  plan = expand(suite, suite.devices_needed)
  # An example compares something: two sweep points of the built-in at least.
  assert len([b for b in plan.benchmarks if b.generator_path == path]) >= 2


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_suite_is_valid_and_runs_only_builtins(example):
  suite = load_suite(example)
  plan = expand(suite, suite.devices_needed)
  assert plan.benchmarks and {b.generator_path for b in plan.benchmarks} <= set(catalogue())


@pytest.mark.slow
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
