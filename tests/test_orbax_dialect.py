"""The config forms of Orbax's shipped suites: reuse_checkpoint, `spec: {}`, unusable meshes, presets on any mesh."""

from __future__ import annotations

import json

import pytest

import ckptbench
from ckptbench.cli._main import main
from ckptbench.config import load_suite_text
from ckptbench.errors import ConfigError
from ckptbench.engine._sweep import expand
from conftest import timed_records

EIGHT_AXES = '["data", "stage", "fsdp", "fsdp_transpose", "sequence", "tensor", "expert", "autoregressive"]'

# The mesh list of Orbax's single_replica suite, cut to two entries: the second
# names `model`, an axis its mesh_axes lacks.
MESHES = f"""\
suite_name: meshes
checkpoint_config:
  spec:
    b: {{dtype: float32, shape: [32], sharding: ["tensor"]}}
mesh_configs:
  - mesh_axes: {EIGHT_AXES}
    ici_parallelism: {{"fsdp": 2, "tensor": 2, "data": 1}}
  - mesh_axes: {EIGHT_AXES}
    ici_parallelism: {{"data": 1, "model": 1}}
    dcn_parallelism: {{"data": 4, "model": 1}}
benchmarks: [{{generator: save_restore}}]
"""


def test_a_mesh_naming_an_undeclared_axis_is_skipped_with_its_reason():
  suite = load_suite_text(MESHES, "s.yaml")
  assert [m.describe() for m in suite.meshes] == [
      "data1xstage1xfsdp2xfsdp_transpose1xsequence1xtensor2xexpert1xautoregressive1"
  ]
  (skipped,) = suite.skipped_meshes
  assert skipped.index == 1
  assert "'model' (in ici_parallelism), 'model' (in dcn_parallelism)" in skipped.reason
  plan = expand(suite, 4)
  assert len(plan.benchmarks) == 1
  assert plan.all_skipped_meshes()[0] == (skipped.description, skipped.reason)


def test_a_mesh_the_spec_cannot_shard_over_is_skipped_when_others_remain():
  text = MESHES.replace('{"fsdp": 2, "tensor": 2, "data": 1}', '{"tensor": 3}')
  text = text.replace('{"data": 1, "model": 1}', '{"tensor": 4}').replace('{"data": 4, "model": 1}', "{}")
  suite = load_suite_text(text, "s.yaml")
  assert [m.ici_parallelism for m in suite.meshes] == [{"tensor": 4}]
  assert "dimension 0 of size 32 is not divisible by the 3 devices" in suite.skipped_meshes[0].reason


def test_a_suite_whose_every_mesh_is_unusable_is_an_error():
  text = MESHES.replace('{"fsdp": 2, "tensor": 2, "data": 1}', '{"model": 2}')
  with pytest.raises(ConfigError) as info:
    load_suite_text(text, "s.yaml")
  assert info.value.line == 7 and "not in mesh_axes" in info.value.message
  text = MESHES.replace('{"fsdp": 2, "tensor": 2, "data": 1}', '{"tensor": 3}')
  with pytest.raises(ConfigError, match="no mesh can be used: mesh_configs\\[1\\].*mesh_configs\\[0\\]"):
    load_suite_text(text, "s.yaml")


def test_plan_and_run_report_the_skipped_mesh(tmp_path, capsys):
  (tmp_path / "s.yaml").write_text(MESHES)
  assert main(["plan", str(tmp_path / "s.yaml")]) == 0
  printed = capsys.readouterr().out
  assert "skipped mesh mesh_configs[1] (ici {'data': 1, 'model': 1}, dcn {'data': 4, 'model': 1})" in printed


def test_reuse_checkpoint_and_empty_spec():
  suite = load_suite_text(
      "suite_name: s\nreuse_checkpoint: false\ncheckpoint_config: {spec: {}}\n"
      "benchmarks: [{generator: save_restore}]\n",
      "s.yaml",
  )
  assert suite.config.reuse_checkpoint is False
  assert suite.checkpoints[0].spec is None and suite.checkpoints[0].config.describe() == "none"
  assert any("each run builds its own copy" in n for n in suite.notes)
  with pytest.raises(ConfigError, match="reuse_checkpoint.*valid boolean"):
    load_suite_text("suite_name: s\nreuse_checkpoint: sometimes\nbenchmarks: [{generator: save_restore}]\n")


def test_plan_accepts_a_checkpoint_path_missing_here_and_run_refuses_it(tmp_path, capsys):
  (tmp_path / "s.yaml").write_text(
      "suite_name: s\ncheckpoint_config: {path: /no/such/checkpoint}\nbenchmarks: [{generator: save_restore}]\n"
  )
  assert main(["plan", str(tmp_path / "s.yaml")]) == 0
  assert "note: checkpoint path /no/such/checkpoint does not exist here" in capsys.readouterr().out
  assert main(["run", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "out")]) == 2
  assert "checkpoint path '/no/such/checkpoint' does not exist" in capsys.readouterr().err
  assert not (tmp_path / "out").exists()


PRESET = """\
suite_name: p
checkpoint_config: {preset: llama-3.1-8b, scale: 0.00002}
mesh_configs:
  - {mesh_axes: [fsdp], ici_parallelism: {fsdp: 4}}
  - {mesh_axes: [fsdp, tensor], ici_parallelism: {fsdp: 2, tensor: 2}}
benchmarks: [{generator: save_restore}]
"""


def test_a_preset_replicates_the_axes_a_mesh_lacks():
  suite = load_suite_text(PRESET, "p.yaml")
  assert len(suite.meshes) == 2
  assert suite.notes == (
      "preset llama-3.1-8b on mesh fsdp4: the mesh has no axis tensor; dimensions the preset"
      " shards over it are replicated",
  )
  plan = expand(suite, 4)
  fsdp_only, both = plan.benchmarks
  wq = lambda b: b.checkpoint.spec["params"]["layers"]["layer_0"]["attention"]["wq"]  # noqa: E731
  assert wq(fsdp_only).sharding == ("fsdp", None)
  assert wq(both).sharding == ("fsdp", "tensor")
  assert fsdp_only.describe()["checkpoint_config"]["preset"] == "llama-3.1-8b"


@pytest.mark.slow
def test_a_preset_runs_on_a_mesh_without_tensor(tmp_path, capsys):
  only_fsdp = PRESET.replace("  - {mesh_axes: [fsdp, tensor], ici_parallelism: {fsdp: 2, tensor: 2}}\n", "")
  (tmp_path / "p.yaml").write_text(only_fsdp.replace("fsdp: 4", "fsdp: 8"))  # the 8 test devices
  assert main(["run", str(tmp_path / "p.yaml"), "-o", str(tmp_path / "out"), "--no-views", "--no-probe"]) == 0
  summary = json.loads((tmp_path / "out" / "summary.json").read_text())
  assert "no axis tensor" in summary["notes"][0]
  (record,) = timed_records(tmp_path / "out")  # after the mesh's warm-up
  assert record["error"] is None and record["metrics"]["load_0_basics/time_s"]["value"] > 0


def test_run_refuses_an_unreachable_bucket_with_one_storage_message(tmp_path, capsys):
  (tmp_path / "s.yaml").write_text(
      "suite_name: s\nmesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}\n"
      "checkpoint_config: {path: 'gs://ckptbench-no-such-bucket/ckpt'}\n"
      "benchmarks: [{generator: orbax_load, options: {checkpoint_path: 'gs://ckptbench-no-such-bucket/ckpt',"
      " capture_digests_path: 'gs://ckptbench-no-such-bucket/digests'}}]\n"
  )
  assert main(["plan", str(tmp_path / "s.yaml")]) == 0
  capsys.readouterr()
  assert main(["run", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "out")]) == 2
  err = capsys.readouterr().err.strip()
  assert err.startswith("ckptbench: error: object storage cannot be reached from this machine: ")
  assert "\n" not in err and "(checkpoint_configs[0].path)" in err and "(benchmarks[0].options.checkpoint_path)" in err
  assert not (tmp_path / "out").exists()


class SharedData(ckptbench.BenchmarksGenerator):
  """Records 1 when a run gets the very checkpoint data object the previous run got."""

  previous = None

  def test_fn(self, context):
    metrics = ckptbench.Metrics()
    metrics.record("check", "9_other/same_data_as_before", float(context.pytree is type(self).previous), "count")
    type(self).previous = context.pytree
    return ckptbench.TestResult(metrics=metrics)


@pytest.mark.parametrize("reuse", [True, False])
def test_reuse_checkpoint_false_builds_the_data_for_each_run(tmp_path, reuse):
  from ckptbench.engine.loop._runner import run_suite
  from ckptbench.engine._settings import RunSettings

  SharedData.previous = None
  suite = load_suite_text(
      f"suite_name: s\nnum_repeats: 3\nnum_warmups: 0\nreuse_checkpoint: {str(reuse).lower()}\n"
      "checkpoint_config: {spec: {w: {dtype: float32, shape: [8]}}}\n"
      "benchmarks: [{generator: test_orbax_dialect.SharedData}]\n",
      str(tmp_path / "s.yaml"),
  )
  outcome = run_suite(suite, RunSettings(output_dir=tmp_path / "out", show_progress=False, write_views=False))
  same = [r.value("check_9_other/same_data_as_before") for r in ckptbench.timed_runs(outcome.records)]
  assert same == ([0.0, 1.0, 1.0] if reuse else [0.0, 0.0, 0.0])


def test_a_swept_mapping_is_named_by_its_place_in_the_sweep():
  suite = load_suite_text(
      "suite_name: s\ncheckpoint_config: {spec: {w: {dtype: float32, shape: [8]}}}\nbenchmarks:\n"
      "  - generator: checkpoint_policy\n    options:\n      num_checkpoints: 5\n      checkpoint_policies_options:\n"
      "        - {preservation_policies: [{policy_type: LatestN, n: 1}], save_decision_policies: [{policy_type: InitialSavePolicy}]}\n"
      "        - {preservation_policies: [{policy_type: LatestN, n: 2}], save_decision_policies: [{policy_type: InitialSavePolicy}]}\n",
      "s.yaml",
  )
  names = [b.name for b in expand(suite, 8).benchmarks]
  assert names == [
      "CheckpointPolicyBenchmark(checkpoint_policies_options[0])",
      "CheckpointPolicyBenchmark(checkpoint_policies_options[1])",
  ]
