"""Baselines end to end: a real tiny run captured, then `ckptbench compare` in a subprocess."""

from __future__ import annotations

import json
import re

import pytest

import ckptbench
from conftest import run_cli, timed_records

from ckptbench.cli import main
from ckptbench.errors import EXIT_INCONCLUSIVE, EXIT_REGRESSION
from ckptbench.analysis import capture_baseline, load_baseline
from ckptbench.results import read_records

TINY = """\
suite_name: tiny-baseline
num_repeats: 5
num_warmups: 1
checkpoint_config:
  spec:
    params: {dtype: float32, shape: [128, 64], sharding: [fsdp]}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 2}}
benchmarks:
  - generator: save_restore
    options: {use_ocdbt: true, async_enabled: false}
"""
TIME = "save_0_basics/time_s"


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("baseline")
  (tmp / "tiny.yaml").write_text(TINY)
  done = run_cli("run", str(tmp / "tiny.yaml"), "-o", str(tmp / "out"), "--no-progress")
  assert done.returncode == 0, done.stderr
  return tmp


@pytest.mark.slow
def test_capture_of_a_real_run(real_run, monkeypatch):
  monkeypatch.setenv("GIT_SHA", "cafe1234")
  path = capture_baseline(real_run / "out", real_run / "baselines")
  assert path.name == "cafe1234.json"
  doc = load_baseline(path)
  (key, bench), = doc.benchmarks.items()
  records = [json.loads(line) for line in (real_run / "out" / "results.jsonl").read_text().splitlines()]
  assert sum(r["warmup"] for r in records) == 1
  measured = timed_records(real_run / "out")
  assert key == measured[0]["key"] and bench.summary.runs == 5 and bench.summary.failed == 0
  time_s = bench.samples[TIME]
  assert time_s.hosts[0].values == [r["metrics"][TIME]["value"] for r in measured]
  assert len(time_s.across_hosts.values) == 5 and time_s.headline
  assert doc.manifest["hostname"] and doc.manifest["git"] is not None
  sampled = ckptbench.sampled_records(read_records(real_run / "out"))  # host memory: the memory pass's records
  assert set(bench.samples) == set(bench.summary.metrics) == {tag for r in sampled for tag in r.metrics}


@pytest.mark.slow
def test_compare_cli_exit_codes(real_run):
  baseline = capture_baseline(real_run / "out", real_run / "baselines", label="base")
  # The run against itself: nothing is worse, but 5 noisy repeats a side (unpaired) rarely show the
  # two equivalent within 10%: the gate says inconclusive (5) with the repeats a decision needs,
  # unless inconclusive is allowed. Exit 0 means every headline metric equivalent or better.
  done = run_cli("compare", str(baseline), str(real_run / "out"), "--fail_on_regression")
  written = json.loads((real_run / "out" / "comparison.json").read_text())
  verdicts = {v["verdict"] for v in written["verdicts"] if v["metric"] == TIME}
  assert "worse" not in verdicts and "better" not in verdicts
  if verdicts == {"inconclusive"}:
    assert done.returncode == EXIT_INCONCLUSIVE, done.stdout + done.stderr
    assert re.search(r"about \d+ repeats a side would decide", done.stdout)
    assert "no regression" not in done.stdout
  allowed = run_cli("compare", str(baseline), str(real_run / "out"), "--fail_on_regression", "--allow_inconclusive")
  assert allowed.returncode == 0, allowed.stdout + allowed.stderr
  # A planted regression: every save time beyond the slowest baseline sample by 50%.
  slow = real_run / "slow"
  slow.mkdir()
  records = [json.loads(line) for line in (real_run / "out" / "results.jsonl").read_text().splitlines()]
  worst = max(r["metrics"][TIME]["value"] for r in timed_records(real_run / "out"))
  for i, r in enumerate(records):
    if TIME in r["metrics"]:  # a memory pass's records time nothing
      r["metrics"][TIME]["value"] = worst * (1.5 + 0.01 * i)
  (slow / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
  done = run_cli("compare", str(baseline), str(slow), "--fail_on_regression")
  assert done.returncode == EXIT_REGRESSION, done.stdout + done.stderr
  assert "save_0_basics/time_s" in done.stdout and "headline regression" in done.stdout
  rows = json.loads((slow / "comparison.json").read_text())["rows"]
  assert rows[0]["metric"] == TIME and rows[0]["verdict"] == "worse" and rows[0]["ratio"] > 1.5
  # Without --fail_on_regression the regression is reported, not fatal.
  assert run_cli("compare", str(baseline), str(slow)).returncode == 0


@pytest.mark.slow
def test_compare_cli_bad_input_is_one_line(tmp_path):
  done = run_cli("compare", str(tmp_path / "missing.json"), str(tmp_path))
  assert done.returncode == 2
  assert done.stderr.strip().count("\n") == 0 and "does not exist" in done.stderr


def test_negative_threshold_is_a_usage_error(tmp_path, capsys):
  with pytest.raises(SystemExit) as exit_info:
    main(["compare", str(tmp_path / "x.json"), str(tmp_path), "--regression_threshold", "-1"])
  assert exit_info.value.code == 2 and "argument --threshold: expected a fraction such as 0.1" in capsys.readouterr().err


def _tpu_baseline(real_run):
  """A real baseline of the CPU run, its backend field edited to read `tpu`."""
  path = capture_baseline(real_run / "out", real_run / "baselines", label="from-tpu")
  document = json.loads(path.read_text())
  assert document["backend"] == "cpu" == document["manifest"]["backend"]
  document["backend"] = "tpu"
  path.write_text(json.dumps(document))
  return path


@pytest.mark.slow
def test_compare_refuses_a_baseline_from_another_backend_in_one_line(real_run):
  baseline = _tpu_baseline(real_run)
  done = run_cli("compare", str(baseline), str(real_run / "out"), "--fail_on_regression")
  assert done.returncode == EXIT_REGRESSION, done.stdout + done.stderr
  (line,) = [ln for ln in done.stdout.splitlines() if "backends" in ln]
  assert "baseline ran on tpu, this run on cpu" in line
  assert "save_0_basics" not in done.stdout  # nothing was judged
  written = json.loads((real_run / "out" / "comparison.json").read_text())
  assert written["rows"] == [] and "tpu" in written["refused"] and "cpu" in written["refused"]
  reported = run_cli("compare", str(baseline), str(real_run / "out"))  # not gated: said, not fatal
  assert reported.returncode == 0 and "not comparable" in reported.stdout


@pytest.mark.slow
def test_a_gated_cpu_run_against_a_tpu_baseline_fails_naming_both_backends(real_run):
  baseline = _tpu_baseline(real_run)
  done = run_cli("run", str(real_run / "tiny.yaml"), "-o", str(real_run / "gated"), "--no-progress", "--no-views",
                 "--no-probe", "--set", "num_repeats=2", "--baseline_path", str(baseline), "--fail_on_regression")
  assert done.returncode == EXIT_REGRESSION, done.stdout + done.stderr
  (line,) = [ln for ln in done.stdout.splitlines() if "backends" in ln]
  assert "tpu" in line and "cpu" in line and "not compared" in line
