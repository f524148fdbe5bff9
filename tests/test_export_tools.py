"""`ckptbench export --format pyperf | github-action-benchmark` and `history --pyperf F --github_action_benchmark F`:
two real runs exported, the real pyperf command line run on the files, the github-action-benchmark list
checked against the action's documented fields."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys

import pyperf
import pytest

import ckptbench
from ckptbench.cli import main
from conftest import REPO, run_cli
from ckptbench.results import MetricSeries, read_records, write_github_action_benchmark, write_pyperf
from ckptbench.stats import Direction, metric_direction

SUITE = """\
suite_name: export_tools
num_repeats: 3
num_warmups: 1
checkpoint_config:
  spec: {params: {dtype: float32, shape: [64, 16], sharding: [data]}}
mesh_config: {mesh_axes: [data], ici_parallelism: {data: 8}}
benchmarks:
  - generator: sample_benchmarks.SaveRestoreBenchmark
    options: {use_ocdbt: [true, false]}
"""
SAVE_TIME = "SaveRestoreBenchmark(use_ocdbt=True) save_0_basics/time_s"
# benchmark-action/github-action-benchmark, README "Generic JSON format" and src/extract.ts's
# `BenchmarkResult`: `name`, `unit` (strings) and `value` (a number) required; `range` and `extra` strings.
GITHUB_ACTION_REQUIRED = {"name": str, "unit": str, "value": (int, float)}
GITHUB_ACTION_OPTIONAL = {"range": str, "extra": str}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  """Two real runs of the same suite (two variants, a warm-up and three repeats each, the memory pass)."""
  root = tmp_path_factory.mktemp("export_tools")
  suite = root / "suite.yaml"
  suite.write_text(SUITE)
  outs = []
  for name in ("a", "b"):
    out = root / name
    assert main(["run", str(suite), "-o", str(out), "--no_views", "--no_probe", "--no_progress"]) == 0
    outs.append(out)
  return outs


def _values(select, out, tag: str, benchmark: str = "SaveRestoreBenchmark(use_ocdbt=True)") -> list[float]:
  """`tag`'s values in the records of `benchmark` that `select` (a ckptbench selector) picks."""
  return [r.metrics[tag].value for r in select(read_records(out)) if r.benchmark == benchmark and tag in r.metrics]


def _pyperf_cli(*args: str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "pyperf", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # real runs, pyperf's command line
def test_pyperf_files_of_two_runs_are_read_by_pyperf_stats_and_compare_to_naming_every_benchmark(runs, tmp_path, capsys):
  files = [tmp_path / "a.json", tmp_path / "b.json"]
  assert main(["export", str(runs[0]), "--format", "pyperf", "-o", str(files[0])]) == 0  # today's -o FILE
  assert main(["export", str(runs[1]), "--pyperf", str(files[1])]) == 0  # the file flag named by its format
  out = capsys.readouterr().out
  assert f"pyperf: {files[0]} (" in out and f"pyperf: {files[1]} (" in out
  # What pyperf cannot hold is named, with why: rates and ratios, counts.
  assert "unit GiB/s: pyperf takes s, ms, us, ns and B to TiB (every benchmark): save_4_throughput/save_total_gbps" in out
  assert "unit count: pyperf takes s, ms, us, ns and B to TiB (every benchmark): " in out

  names = pyperf.BenchmarkSuite.load(str(files[0])).get_benchmark_names()
  assert SAVE_TIME in names and not any(n.endswith(("_gbps", "/cache_misses")) for n in names)
  stats = _pyperf_cli("stats", str(files[0]))
  assert stats.returncode == 0, stats.stderr
  compared = _pyperf_cli("compare_to", str(files[0]), str(files[1]))
  assert compared.returncode == 0, compared.stderr
  for name in names:
    assert name in stats.stdout and name in compared.stdout, name


@pytest.mark.slow  # real runs, pyperf's command line
def test_pyperf_values_are_the_repeats_warmups_the_warmups_in_seconds_and_bytes_with_the_runs_metadata(runs, tmp_path):
  path, table = tmp_path / "a.json", tmp_path / "a.csv"
  assert main(["export", str(runs[0]), "--pyperf", str(path), "--csv", str(table)]) == 0  # several files at once
  assert table.read_text().startswith("suite,benchmark,key,")
  suite = pyperf.BenchmarkSuite.load(str(path))
  (run,) = suite.get_benchmark(SAVE_TIME).get_runs()
  timed = _values(ckptbench.timed_runs, runs[0], "save_0_basics/time_s")
  warm = _values(ckptbench.warmup_runs, runs[0], "save_0_basics/time_s")
  assert list(run.values) == timed and len(timed) == 3
  assert list(run.warmups) == [(1, w) for w in warm] and len(warm) == 1
  # Host memory comes from the memory pass, in bytes.
  peak = suite.get_benchmark("SaveRestoreBenchmark(use_ocdbt=True) save_7_memory/host_rss_peak_mib")
  mib = _values(ckptbench.memory_pass_records, runs[0], "save_7_memory/host_rss_peak_mib")
  assert peak.get_unit() == "byte" and list(peak.get_values()) == [v * 2**20 for v in mib] and mib
  metadata = suite.get_benchmark(SAVE_TIME).get_metadata()
  manifest = json.loads((runs[0] / "manifest.json").read_text())
  assert metadata["unit"] == "second" and metadata["name"] == SAVE_TIME
  assert metadata["hostname"] == manifest["hostname"] and metadata["cpu_count"] == manifest["cpu_count"]
  assert metadata["date"] == manifest["started_at"] and metadata["ckptbench_suite"] == "export_tools"
  assert metadata["python_version"] == manifest["versions"]["python"]
  assert metadata["ckptbench_version"] == manifest["versions"]["ckptbench"]
  assert metadata["orbax_checkpoint_version"] == manifest["versions"]["orbax-checkpoint"]


def test_pyperf_leaves_out_values_at_or_below_zero_and_bigger_is_better_times_naming_them(tmp_path):
  series = [
      MetricSeries("A", "save_0_basics/time_s", "ms", (40.0, 42.0, 41.0), warmups=(90.0,)),
      MetricSeries("A", "save_0_basics/host_rss_diff_mib", "MiB", (1.5, -0.25, 2.0)),
      MetricSeries("A", "save_8_jax/compile_time_saved_s", "s", (0.5, 0.6, 0.4)),
      MetricSeries("A", "save_4_throughput/save_total_gbps", "GiB/s", (1.0, 1.1, 0.9)),
  ]
  done = write_pyperf(series, {"hostname": "h", "date": "2026-01-01T00:00:00+00:00"}, tmp_path / "p.json")

  assert done.written == ("A save_0_basics/time_s",)
  assert {(o.tag, o.reason) for o in done.left_out} == {
      ("save_0_basics/host_rss_diff_mib", "a value <= 0, which pyperf refuses"),
      ("save_8_jax/compile_time_saved_s", "bigger is better, and pyperf reads smaller as better"),
      ("save_4_throughput/save_total_gbps", "unit GiB/s: pyperf takes s, ms, us, ns and B to TiB"),
  }
  (bench,) = pyperf.BenchmarkSuite.load(str(done.path)).get_benchmarks()
  assert bench.get_values() == pytest.approx((0.040, 0.042, 0.041))  # milliseconds as seconds
  assert "  a value <= 0, which pyperf refuses (every benchmark): save_0_basics/host_rss_diff_mib" in done.lines("pyperf")


def _check_github_action_shape(entries) -> None:
  """The action's custom tools read a JSON list of objects with exactly its fields."""
  assert isinstance(entries, list) and entries
  for entry in entries:
    assert set(GITHUB_ACTION_REQUIRED) <= set(entry) <= set(GITHUB_ACTION_REQUIRED) | set(GITHUB_ACTION_OPTIONAL), entry
    for field, kind in {**GITHUB_ACTION_REQUIRED, **GITHUB_ACTION_OPTIONAL}.items():
      assert field not in entry or isinstance(entry[field], kind) and not isinstance(entry[field], bool), (field, entry)
    assert math.isfinite(entry["value"])
  assert len({e["name"] for e in entries}) == len(entries)  # the action keys its charts by name


@pytest.mark.slow  # real runs, pyperf's command line
def test_github_action_benchmark_lists_one_direction_per_file_in_the_actions_documented_shape(runs, tmp_path, capsys):
  smaller, bigger = tmp_path / "smaller.json", tmp_path / "bigger.json"
  assert main(["export", str(runs[0]), "--github_action_benchmark", str(smaller)]) == 0
  assert main(["export", str(runs[0]), "--format", "github-action-benchmark", "-o", str(bigger), "--bigger_is_better"]) == 0
  out = capsys.readouterr().out
  assert f"github-action-benchmark (tool: customSmallerIsBetter): {smaller}" in out
  assert f"github-action-benchmark (tool: customBiggerIsBetter): {bigger}" in out
  assert "neutral: ckptbench judges it neither way (every benchmark): " in out

  for path, direction in ((smaller, Direction.LOWER), (bigger, Direction.HIGHER)):
    entries = json.loads(path.read_text())
    _check_github_action_shape(entries)
    for entry in entries:
      assert metric_direction(entry["name"].rsplit(" ", 1)[1], entry["unit"]) is direction, entry
  entries = {e["name"]: e for e in json.loads(smaller.read_text())}
  timed = _values(ckptbench.timed_runs, runs[0], "save_0_basics/time_s")
  assert entries[SAVE_TIME]["value"] == statistics.median(timed) and entries[SAVE_TIME]["unit"] == "s"
  assert entries[SAVE_TIME]["range"] == f"[{min(timed):.6g}, {max(timed):.6g}]"  # 3 repeats: the whole range
  assert "SaveRestoreBenchmark(use_ocdbt=True) save_4_throughput/save_total_gbps" in {e["name"] for e in json.loads(bigger.read_text())}


def test_a_file_with_nothing_of_its_direction_is_an_error_not_an_empty_list(tmp_path):
  from ckptbench.errors import CkptbenchError  # noqa: PLC0415

  with pytest.raises(CkptbenchError, match="none of the 1 benchmark x metric is bigger-is-better"):
    write_github_action_benchmark([MetricSeries("A", "save_0_basics/time_s", "s", (1.0,))], "s", tmp_path / "g.json", True)
  assert not (tmp_path / "g.json").exists()


@pytest.mark.slow  # real runs, pyperf's command line
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pyperf", "p.json", "--bigger_is_better"], "--bigger_is_better chooses a github-action-benchmark file's direction"),
        (["--pyperf", "p.json", "--include_warmups"], "--include_warmups adds the warm-up runs to a CSV or Parquet table"),
        (["--pyperf", "p.json", "-o", "x.json"], "give --format or files named by format"),
    ],
)
def test_options_that_cannot_apply_are_one_line_errors(runs, tmp_path, capsys, argv, message):
  assert main(["export", str(runs[0]), *[str(tmp_path / a) if a.endswith(".json") else a for a in argv]]) == 2
  err = capsys.readouterr().err
  assert message in err and "Traceback" not in err
  assert not list(tmp_path.iterdir())


@pytest.mark.slow  # real runs, pyperf's command line
def test_history_exports_its_newest_run_for_pyperf_and_github_action_benchmark(runs, tmp_path, capsys):
  hist = tmp_path / "hist"
  assert main(["history", "add", str(hist), str(runs[0]), "--label", "r1"]) == 0
  assert main(["history", "add", str(hist), str(runs[1]), "--label", "r2"]) == 0
  files = {name: tmp_path / f"{name}.json" for name in ("a", "b", "smaller", "bigger")}
  assert main(["history", str(hist), "--pyperf", str(files["b"]), "--github_action_benchmark", str(files["smaller"])]) == 0
  assert main(["history", str(hist), "--github_action_benchmark", str(files["bigger"]), "--bigger_is_better"]) == 0
  out = capsys.readouterr().out
  assert f"pyperf: {files['b']} (" in out and "unit GiB/s: pyperf takes s, ms, us, ns and B to TiB" in out

  # The history keeps the headline metrics' samples; its pyperf file matches the run's export.
  assert main(["export", str(runs[0]), "--pyperf", str(files["a"])]) == 0
  newest = pyperf.BenchmarkSuite.load(str(files["b"]))
  assert newest.get_metadata()["ckptbench_label"] == "r2"
  timed = _values(ckptbench.timed_runs, runs[1], "save_0_basics/time_s")
  assert list(newest.get_benchmark(SAVE_TIME).get_values()) == timed
  compared = _pyperf_cli("compare_to", str(files["a"]), str(files["b"]))
  assert compared.returncode == 0, compared.stderr
  for name in newest.get_benchmark_names():
    assert name in compared.stdout, name
  smaller, bigger = (json.loads(files[n].read_text()) for n in ("smaller", "bigger"))
  _check_github_action_shape(smaller)
  _check_github_action_shape(bigger)
  assert SAVE_TIME in {e["name"] for e in smaller}
  assert {e["name"].rsplit(" ", 1)[1] for e in bigger} == {"save_4_throughput/save_total_gbps", "load_4_throughput/load_total_gbps"}


@pytest.mark.slow  # real runs, pyperf's command line
def test_without_pyperf_installed_the_pyperf_export_says_how_to_install_it(runs, tmp_path):
  hidden = tmp_path / "no_pyperf"
  hidden.mkdir()
  (hidden / "pyperf.py").write_text("raise ImportError('pyperf is not installed here')\n")
  pythonpath = os.pathsep.join([str(hidden), str(REPO / "src"), str(REPO / "tests")])
  done = run_cli("export", str(runs[0]), "--pyperf", str(tmp_path / "p.json"), env={"PYTHONPATH": pythonpath})
  assert done.returncode == 2, done.stderr
  assert done.stderr.strip() == "ckptbench: error: the pyperf export needs pyperf: pip install 'ckptbench[export]'"
  assert not (tmp_path / "p.json").exists()
