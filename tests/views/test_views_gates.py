"""Gates that cannot pass vacuously: unmatched baselines, fully dropped sweeps."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from views_sample import sample_out  # noqa: F401  (fixture)

from ckptbench.analysis import capture_baseline

DROPPED = """\
suite_name: dropped
num_repeats: 1
checkpoint_config: {spec: {params: {dtype: float32, shape: [16, 16], sharding: [fsdp]}}}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 2}}
benchmarks:
  - generator: save_restore
    options: {enable_replica_parallel_separate_folder: SEPARATE}
"""


def _with_changed_option(out):
  """The same results as if `use_zarr3` had changed: new keys, same names."""
  lines = []
  for line in (out / "results.jsonl").read_text().splitlines():
    record = json.loads(line)
    record["key"] = "new-" + record["key"]
    record["options"]["use_zarr3"] = False
    lines.append(json.dumps(record))
  (out / "results.jsonl").write_text("\n".join(lines) + "\n")


@pytest.mark.slow
def test_a_comparison_that_matches_nothing_says_why_and_fails_the_gate(sample_out, tmp_path):
  baseline = capture_baseline(sample_out, tmp_path / "baselines", label="base")
  _with_changed_option(sample_out)

  gated = run_cli("compare", str(baseline), str(sample_out), "--fail_on_regression")
  plain = run_cli("compare", str(baseline), str(sample_out))

  assert gated.returncode == 3, gated.stdout + gated.stderr
  assert plain.returncode == 0, plain.stderr
  text = " ".join(gated.stdout.split())
  assert "no benchmark of this run is in the baseline" in text
  assert "SaveRestore use_ocdbt=True [new-3f9a1c0d2e]: no baseline benchmark has this key" in text
  assert "differs in options.use_zarr3: true -> false" in text
  saved = json.loads((sample_out / "comparison.json").read_text())
  assert saved["rows"] == [] and len(saved["unmatched"]) == 2


@pytest.mark.slow
def test_a_sweep_whose_every_point_is_dropped_fails_in_run_and_plan(tmp_path):
  suite = tmp_path / "s.yaml"
  suite.write_text(DROPPED.replace("SEPARATE", "true"))
  run = run_cli("run", str(suite), "-o", str(tmp_path / "out"), "--no-progress")
  plan = run_cli("plan", str(suite))
  for done in (run, plan):
    assert done.returncode == 2, done.stdout + done.stderr
    assert "every sweep point was dropped" in done.stderr and "Traceback" not in done.stderr
    assert "needs use_replica_parallel and use_ocdbt" in done.stderr
  assert not (tmp_path / "out" / "results.jsonl").exists()


@pytest.mark.slow
def test_plan_and_run_list_the_dropped_points_with_their_reasons(tmp_path):
  suite = tmp_path / "s.yaml"
  suite.write_text(DROPPED.replace("SEPARATE", "[true, false]"))
  plan = run_cli("plan", str(suite))
  run = run_cli("run", str(suite), "-o", str(tmp_path / "out"), "--no-progress", "--no-probe", "--no-views")
  assert plan.returncode == 0 and run.returncode == 0, plan.stderr + run.stderr
  assert "enable_replica_parallel_separate_folder': True}: enable_replica_parallel_separate_folder needs" in plan.stdout
  assert "not run: SaveRestoreBenchmark{'enable_replica_parallel_separate_folder': True}" in run.stderr
