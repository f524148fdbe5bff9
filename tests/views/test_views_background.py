"""The views are written by a detached process after `ckptbench run` has returned."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli, wait_for_views

pytestmark = pytest.mark.slow

SUITE = """\
suite_name: background
num_repeats: 1
checkpoint_config: {spec: {params: {dtype: float32, shape: [32, 16], sharding: [fsdp]}}}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 2}}
benchmarks:
  - generator: save_restore
    options: {use_ocdbt: [true, false]}
"""


def test_views_are_written_after_the_run_returns_and_include_its_comparison(tmp_path):
  suite = tmp_path / "s.yaml"
  suite.write_text(SUITE)
  base = run_cli("run", str(suite), "-o", str(tmp_path / "base"), "--no-progress", "--no-probe", "--no-views",
                 "--baseline_capture_path", str(tmp_path / "bl"), "--baseline_label", "base")
  assert base.returncode == 0, base.stderr
  assert "no views; `ckptbench report" in base.stdout and not (tmp_path / "base" / "report.html").exists()

  out = tmp_path / "out"
  done = run_cli("run", str(suite), "-o", str(out), "--no-progress", "--baseline_path", str(tmp_path / "bl" / "base.json"),
                 env={"CKPTBENCH_CACHE_DIR": str(tmp_path / "empty-cache")})  # fmt: skip
  assert done.returncode == 0, done.stderr
  assert "being written in the background" in done.stdout
  assert (out / "results.jsonl").exists() and (out / "summary.json").exists()  # durable before any view
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  assert not any("_of_" in tag for r in records for tag in r["metrics"])  # no probe cached: none during the run

  written = wait_for_views(out)
  log = (out / "views.log").read_text()
  assert written, log
  assert "Traceback" not in log
  page = (out / "report.html").read_text()
  # The child waited for the run to exit: the comparison written last is in the report.
  assert "<h2>verdict</h2>" in page and "baseline comparison" in page
  assert (out / "tensorboard").is_dir()
  # The storage probe nobody had cached was measured after the run, three times, and drawn.
  manifest = json.loads((out / "manifest.json").read_text())
  assert manifest["roofline_measured_after_run"] and manifest["roofline"]["repeats"] == 3
  assert "limit: disk_write_gbps" in page and "over 3 probes" in page
