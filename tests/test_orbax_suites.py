"""Orbax's shipped suite files: all but the Pathways-only one plan unchanged; scaled to this machine, they run.

The scaled suites and their fixtures are made here, from the installed wheel's
files (measurements/_orbax_scaled.py); measurements/run_orbax_suites.py runs all 73.
The fast tests take one suite per way a suite used to fail or mismeasure.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys

import pytest

from conftest import REPO

pytestmark = pytest.mark.host_memory("inline", reason=(
    "these tests check that Orbax's shipped suites run with the sharding their files ask for; every "
    "shipped example runs with the memory pass in tests/test_example_walk.py"
))


def _script(name: str):
  spec = importlib.util.spec_from_file_location(name, REPO / "measurements" / f"{name}.py")
  module = importlib.util.module_from_spec(spec)
  sys.modules[name] = module
  spec.loader.exec_module(module)
  return module


plan_orbax_suites = _script("plan_orbax_suites")
_orbax_scaled = _script("_orbax_scaled")
run_orbax_suites = _script("run_orbax_suites")

PATHWAYS_ONLY = "llama-70b-v5p-64-pw-example.yaml"


@pytest.mark.slow
def test_the_shipped_suites_plan_unchanged_but_the_pathways_only_one():
  files = plan_orbax_suites.suite_files()
  assert len(files) == 73
  failed = {}
  for path in files:
    code, text = plan_orbax_suites.plan(path)
    if code:
      failed[path.name] = text
  assert list(failed) == [PATHWAYS_ONLY], failed
  assert "use_colocated_python needs a Pathways backend" in failed[PATHWAYS_ONLY]


def _outcome(rel: str, tmp_path):
  (path,) = [p for p in _orbax_scaled.suite_files() if _orbax_scaled.relative_name(p) == rel]
  return run_orbax_suites.one_suite(path, tmp_path, orbax_python=None)


def _records(tmp_path, rel: str) -> list[dict]:
  stem = rel.replace("/", "__").removesuffix(".yaml")
  lines = (tmp_path / "ckptbench" / stem / "results.jsonl").read_text().splitlines()
  return [json.loads(line) for line in lines]


def test_scaling_keeps_meshes_within_eight_devices_and_names_local_fixtures(tmp_path):
  (path,) = [p for p in _orbax_scaled.suite_files() if p.name == "llama-70b-v5p-128.yaml"]
  scaled = _orbax_scaled.Scaled(path, tmp_path)
  sizes = [_orbax_scaled.devices_for(scaled)]
  assert sizes == [8] and len(scaled.suite["mesh_configs"]) == 2  # 4 .. 256 devices: 4 and 8 left
  assert "gs://" not in scaled.text() and str(tmp_path) in scaled.text()
  assert scaled.suite["num_repeats"] == _orbax_scaled.MAX_REPEATS
  (unset,) = [p for p in _orbax_scaled.suite_files() if p.name == "deleter_benchmark.yaml"]
  assert "num_repeats" not in unset.read_text()  # ckptbench's `auto`, Orbax's 1: written out, capped
  assert _orbax_scaled.Scaled(unset, tmp_path).suite["num_repeats"] == _orbax_scaled.MAX_REPEATS


def test_the_suites_whose_generators_need_peers_run_as_two_processes(tmp_path):
  counts = {p.name: run_orbax_suites.processes(_orbax_scaled.Scaled(p, tmp_path)) for p in _orbax_scaled.suite_files()}
  several = sorted(name for name, n in counts.items() if n > 1)
  assert several == ["emergency_checkpoint_manager_benchmark.yaml", "multislice_broadcast_benchmark.yaml",
                     "p2p_checkpoint_manager_benchmark.yaml"]  # fmt: skip
  assert counts["p2p_checkpoint_manager_benchmark.yaml"] == run_orbax_suites.PROCESSES == 2


# One suite per way a shipped suite used to fail or measure the wrong thing.
@pytest.mark.parametrize(
    "rel",
    [
        # a per-replica sharding file, laid out on each replica's own mesh with `replica` in front
        "configs/evaluations/restore_and_broadcast/llama-70b_replicas_2.yaml",
        # a safetensors sharding file applied by flat dotted tensor name (was: silently replicated)
        "safetensors/configs/llama3-8b_tp.yaml",
        # a suite without a mesh: snapshotter splits the devices into 2 emulated slices
        "configs/snapshotter_benchmark.yaml",
    ],
)
def test_a_scaled_suite_runs_with_the_sharding_its_file_asks_for(tmp_path, rel):
  outcome = _outcome(rel, tmp_path)
  assert outcome.status == "ran", outcome.detail
  records = _records(tmp_path, rel)
  assert records and all(r["error"] is None for r in records)
  assert records[0]["warmup"]  # the first run on the mesh and data is not a measurement


@pytest.mark.slow
def test_the_per_replica_and_safetensors_loads_are_sharded_not_replicated(tmp_path):
  import numpy as np  # noqa: PLC0415

  code = f"""
import jax, json, sys
sys.path.insert(0, {str(REPO / "measurements")!r})
import _orbax_scaled, ckptbench
from orbax.checkpoint import v1 as ocp
files = {{_orbax_scaled.relative_name(p): p for p in _orbax_scaled.suite_files()}}
out = {{}}
s = _orbax_scaled.Scaled(files["configs/evaluations/restore_and_broadcast/llama-70b_replicas_2.yaml"], {str(tmp_path)!r} + "/rb")
s.write_fixtures()
o = s.suite["benchmarks"][0]["options"]
mesh = jax.make_mesh((2, 4), ("replica", "model"))
abstract = ckptbench.abstract_from_checkpoint(o["reference_checkpoint_path"], mesh,
    ckptbench.read_sharding_config(o["reference_sharding_path"]), per_replica=True)
w = abstract["params"]["model"]["embed_tokens"]["weight"].sharding
out["rb"] = [list(w.mesh.axis_names), list(w.mesh.devices.shape), list(w.spec)]
s = _orbax_scaled.Scaled(files["safetensors/configs/llama3-8b_tp.yaml"], {str(tmp_path)!r} + "/st")
s.write_fixtures()
o = s.suite["benchmarks"][0]["options"]
ctx = ocp.Context(); ctx.checkpoint_layout = ocp.options.CheckpointLayout.SAFETENSORS
with ctx:
  abstract = ckptbench.abstract_from_checkpoint(o["checkpoint_path"], jax.make_mesh((8,), ("tp",)),
      ckptbench.read_sharding_config(o["sharding_config_path"]))
out["st"] = list(abstract["model.layers.0.mlp.up_proj.weight"].sharding.spec)
print(json.dumps(out))
"""
  env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin",
         "PYTHONPATH": str(REPO / "src")}  # fmt: skip
  done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
  assert done.returncode == 0, done.stderr[-2000:]
  out = json.loads(done.stdout.strip().splitlines()[-1])
  assert out["rb"] == [["replica", "data", "fsdp", "tensor"], [2, 1, 4, 1], ["fsdp", None]]
  assert out["st"] == [None, "tp"]
  del np


def test_plan_refuses_a_path_naming_the_step_directory(tmp_path):
  outcome = _outcome("configs/evaluations/orbax_save_restore/orbax_llama8b_4gpu_ocdbt.yaml", tmp_path)
  assert outcome.status == "refused"
  assert "names a step directory, not a checkpoint: the checkpoint is its subdirectory 'items'" in outcome.detail


@pytest.mark.slow
@pytest.mark.parametrize(
    "rel",
    [
        "configs/evaluations/replica_parallel/cpu/llama-70b-replicas-4.yaml",
        "configs/evaluations/model_sizes/llama-8b.yaml",  # a v0 step's items, loaded as Orbax's framework does
        "safetensors/configs/mistral7b_tp.yaml",  # the fsdp file on a tp mesh: laid out on the recorded mesh
        "orbax_load/configs/llama3-70b.yaml",
        "configs/evaluations/resharding/llama-8b_reshard_8-2-1_to_1-4-1.yaml",
        "configs/deleter_benchmark.yaml",
        "configs/single_replica_benchmark.yaml",
        "configs/evaluations/pytorch_save_restore/pytorch_llama8b_benchmark.yaml",
    ],
)
def test_more_scaled_suites_run(tmp_path, rel):
  outcome = _outcome(rel, tmp_path)
  assert outcome.status == "ran", outcome.detail


def test_warm_gives_cold_cache_false_only_to_generators_that_have_the_option():
  prefix = "orbax.checkpoint._src.testing.benchmarks."
  assert run_orbax_suites.has_cold_cache(prefix + "pytree_checkpoint_benchmark.PyTreeCheckpointBenchmark")
  for name in ("v1.snapshotter_benchmark.SnapshotterBenchmark",
               "multislice_broadcast_benchmark.MultisliceBroadcastBenchmark",
               "multihost_dispatchers_benchmark.MultihostDispatchersBenchmark"):  # fmt: skip
    assert not run_orbax_suites.has_cold_cache(prefix + name), name


@pytest.mark.slow
def test_a_meshless_suite_runs_on_the_devices_plan_says(tmp_path):
  """Orbax's snapshotter suite (scaled, no mesh) with no device count from outside: `run` simulates
  the devices `plan` shows, and the snapshotter splits them into its slices without a failure."""
  from conftest import run_cli  # noqa: PLC0415  (it starts each command without XLA_FLAGS)

  (path,) = [p for p in _orbax_scaled.suite_files() if p.name == "snapshotter_benchmark.yaml"]
  suite = tmp_path / "snapshotter.yaml"
  suite.write_text(_orbax_scaled.Scaled(path, tmp_path).text())
  plan = run_cli("plan", str(suite))
  assert plan.returncode == 0, plan.stderr
  planned = int(re.search(r"runs? on (\d+) devices", plan.stdout).group(1))
  out = tmp_path / "out"
  run = run_cli("run", str(suite), "-o", str(out), "--no-views", "--no-probe", "--no-progress")
  assert run.returncode == 0, run.stdout + run.stderr
  assert json.loads((out / "manifest.json").read_text())["device_count"] == planned == 8
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  assert records and all(r["error"] is None for r in records)
