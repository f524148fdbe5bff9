"""The CLI end to end, in fresh processes: exit codes, output files and their schema."""

from __future__ import annotations

import json
import pathlib
import re
import sys

import pytest

from conftest import run_cli, timed_records

TINY = """\
suite_name: tiny
num_repeats: 2
num_warmups: 0  # the record counts below are of measured runs
checkpoint_config:
  spec:
    params: {dtype: bfloat16, shape: [256, 64], sharding: [fsdp]}
    step: int
mesh_configs:
  - {mesh_axes: [fsdp], ici_parallelism: {fsdp: 4}}
  - {mesh_axes: [fsdp], ici_parallelism: {fsdp: 2}}
benchmarks:
  - generator: orbax.checkpoint._src.testing.benchmarks.v1.benchmark.Benchmark
    options: {use_ocdbt: [true, false]}
"""

RECORD_KEYS = {
    "suite", "benchmark", "key", "generator", "options", "mesh", "checkpoint_config",
    "repeat", "host", "metrics", "error",
}  # fmt: skip


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("cli")
  suite = tmp / "tiny.yaml"
  suite.write_text(TINY)
  out = tmp / "out"
  done = run_cli("run", f"--config_file={suite}", f"--output_directory={out}")
  return done, out


@pytest.mark.slow
def test_run_in_the_guides_form_succeeds(tiny_run):
  done, out = tiny_run
  assert done.returncode == 0, done.stderr
  assert "[4/4]" in done.stdout
  assert re.search(r"│ +2 │ +4 │ +4 │ +0 │", done.stdout), done.stdout
  assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_results_files_follow_the_contract(tiny_run):
  _, out = tiny_run
  records = timed_records(out)
  assert len(records) == 4
  for r in records:
    assert RECORD_KEYS <= set(r)
    assert r["host"] == 0 and r["error"] is None and r["mesh"]["ici_parallelism"] == {"fsdp": 4}
    for tag, metric in r["metrics"].items():
      op, _, rest = tag.partition("_")
      assert "/" in tag and set(metric) == {"value", "unit"}, tag
  summary = json.loads((out / "summary.json").read_text())
  assert summary["skipped_meshes"][0]["mesh"] == "fsdp2"
  bench = summary["benchmarks"][0]
  assert {"name", "key", "runs", "failed", "metrics"} <= set(bench)
  assert set(bench["metrics"]["save_0_basics/time_s"]) >= {"mean", "std", "min", "max", "median", "n"}
  manifest = json.loads((out / "manifest.json").read_text())
  assert manifest["device_count"] == 4  # the CLI simulated what the largest mesh needs
  assert "--xla_force_host_platform_device_count=4" in manifest["xla_flags"]
  assert {"python", "jax", "jaxlib", "orbax-checkpoint", "tensorstore", "ckptbench"} <= set(manifest["versions"])
  assert "sha" in manifest["git"] and manifest["hostname"]
  # Each run's checkpoint was removed once it was recorded (--keep_checkpoints keeps it); its path stays on record.
  assert records[0]["path"].startswith(str(out)) and not (out / records[0]["path"]).exists()


@pytest.mark.slow
def test_existing_results_are_never_silently_replaced(tiny_run, tmp_path):
  _, out = tiny_run
  done = run_cli("run", str(tmp_path / "missing.yaml"), "-o", str(out))
  assert done.returncode == 2
  suite = out.parent / "tiny.yaml"
  done = run_cli("run", str(suite), "-o", str(out))
  assert done.returncode == 2
  assert "already holds results" in done.stderr and "--resume" in done.stderr


@pytest.mark.slow
def test_bad_config_exits_2_with_one_line_and_writes_nothing(tmp_path):
  suite = tmp_path / "bad.yaml"
  suite.write_text(TINY.replace("use_ocdbt:", "use_ocdbtt:"))
  out = tmp_path / "out"
  done = run_cli("run", str(suite), "-o", str(out))
  assert done.returncode == 2
  lines = done.stderr.strip().splitlines()
  assert lines == [
      f"ckptbench: error: {suite}:13: key 'benchmarks[0].options.use_ocdbtt':"
      " SaveRestoreOptions has no option 'use_ocdbtt'; did you mean 'use_ocdbt'?"
  ]
  assert not out.exists()


@pytest.mark.slow
def test_failures_exit_1_and_other_benchmarks_still_run(tmp_path):
  suite = tmp_path / "flaky.yaml"
  suite.write_text(
      "suite_name: flaky\nnum_repeats: 1\nbenchmarks:\n"
      "  - generator: sample_benchmarks.FlakyBenchmark\n    options: {fail: [true, false]}\n"
  )
  done = run_cli("run", str(suite), "-o", str(tmp_path / "out"), "--no-progress")
  assert done.returncode == 1
  assert "FAILED: host 0: RuntimeError: planted failure" in done.stdout
  assert re.search(r"│ +2 │ +2 │ +1 │ +1 │", done.stdout), done.stdout


@pytest.mark.slow
def test_plan_shows_benchmarks_skips_and_invalid_combinations(tmp_path):
  suite = tmp_path / "plan.yaml"
  suite.write_text(TINY.replace(
      "options: {use_ocdbt: [true, false]}",
      "options: {use_ocdbt: [true, false], enable_replica_parallel_separate_folder: [true, false]}",
  ).replace("suite_name: tiny", "suite_name: 'tiny [bold]v2[/bold]'"))  # fmt: skip
  done = run_cli("plan", str(suite))
  assert done.returncode == 0, done.stderr
  assert done.stdout.startswith("tiny [bold]v2[/bold]: ")  # the user's name as written, not markup
  assert "skipped mesh fsdp2: mesh fsdp2 needs 2 devices but 4 are available" in done.stdout
  assert "needs use_replica_parallel and use_ocdbt" in done.stdout
  assert "32.0 KiB" in done.stdout and "8.0 KiB" in done.stdout  # global and per device


@pytest.mark.slow
def test_version_and_console_script():
  done = run_cli("--version")
  assert done.returncode == 0 and done.stdout.startswith("ckptbench 0.")
  script = pathlib.Path(sys.executable).parent / "ckptbench"
  if script.exists():
    import subprocess

    assert subprocess.run([str(script), "--version"], capture_output=True).returncode == 0
