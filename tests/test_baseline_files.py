"""Baseline capture and comparison on results.jsonl files in the documented format."""

from __future__ import annotations

import dataclasses
import json
import subprocess

import pytest

from ckptbench.errors import EXIT_REGRESSION, CkptbenchError
from ckptbench.analysis import capture_baseline, compare_to_baseline, load_baseline, resolve_label

TIMES = [0.50, 0.52, 0.49, 0.51, 0.50]


def write_run(out, *, slowdown=1.0, hosts=1, warmup_time=None, missing_key=False, extra_metric=False,
              manifest=None):
  """Writes OUT/results.jsonl (+ manifest.json): two benchmarks x 5 repeats x hosts."""
  out.mkdir(parents=True, exist_ok=True)
  records = []
  benchmarks = [("SaveRestore use_ocdbt=True", "aaaa111111"), ("SaveRestore use_ocdbt=False", "bbbb222222")]
  if missing_key:
    benchmarks = benchmarks[:1]
  for name, key in benchmarks:
    repeats = [(-1, True)] if warmup_time else []
    repeats += [(r, False) for r in range(len(TIMES))]
    for repeat, warmup in repeats:
      for host in range(hosts):
        t = warmup_time if warmup else TIMES[repeat] * slowdown * (1 + 0.01 * host)
        metrics = {
            "save_0_basics/time_s": {"value": t, "unit": "s"},
            "save_4_throughput/save_total_gbps": {"value": 0.125 / t, "unit": "GiB/s"},
            "save_7_memory/host_rss_peak_diff_mib": {"value": 40.0 + repeat, "unit": "MiB"},
            "save_5_inventory/file_count": {"value": 12.0, "unit": "count"},
        }
        if extra_metric:
          metrics["save_9_other/new_thing"] = {"value": 1.0, "unit": "count"}
        records.append({
            "schema_version": 1, "suite": "tiny", "benchmark": name, "key": key,
            "generator": "ckptbench.benchmarks.save_restore.SaveRestoreBenchmark",
            "options": {"use_ocdbt": "True" in name}, "varying": {"use_ocdbt": "True" in name},
            "mesh": None, "checkpoint_config": None, "repeat": max(repeat, 0), "warmup": warmup,
            "host": host, "num_hosts": hosts, "path": str(out / key), "started_at": "2026-11-22T08:00:00",
            "duration_s": t, "metrics": metrics, "error": None,
        })
  # A failed run: counted, its metrics not sampled.
  records.append({**records[-1], "repeat": len(TIMES), "error": {"type": "OSError", "message": "disk full"},
                  "metrics": {"save_0_basics/time_s": {"value": 99.0, "unit": "s"}}})
  (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
  (out / "manifest.json").write_text(json.dumps(manifest or {"hostname": "box-a", "git": {"sha": "f00d"}}))
  return out


def test_capture_holds_every_benchmark_with_samples_stats_and_manifest(tmp_path):
  out = write_run(tmp_path / "out", hosts=2, warmup_time=9.0)
  path = capture_baseline(out, tmp_path / "baselines", label="v1")
  assert path == tmp_path / "baselines" / "v1.json"
  doc = load_baseline(path)
  assert (doc.schema_version, doc.label, doc.suite) == (1, "v1", "tiny")
  assert doc.manifest["hostname"] == "box-a"
  assert set(doc.benchmarks) == {"aaaa111111", "bbbb222222"}
  bench = doc.benchmarks["bbbb222222"]
  assert (bench.name, bench.summary.runs, bench.summary.failed) == ("SaveRestore use_ocdbt=False", 6, 1)
  time_s = bench.to_json()["metrics"]["save_0_basics/time_s"]  # the file's form
  assert (time_s["unit"], time_s["direction"], time_s["headline"]) == ("s", "lower", True)
  # Raw samples per host, warmup and the failed run left out.
  assert time_s["hosts"]["0"]["values"] == pytest.approx(TIMES)
  assert time_s["hosts"]["1"]["values"] == pytest.approx([t * 1.01 for t in TIMES])
  assert time_s["hosts"]["0"]["repeats"] == [0, 1, 2, 3, 4]
  assert time_s["hosts"]["0"]["stats"]["median"] == pytest.approx(0.50)
  # Across hosts: the slowest host per repeat for a time, the slowest for a throughput.
  assert time_s["across_hosts"]["reduce"] == "max"
  assert time_s["across_hosts"]["values"] == pytest.approx([t * 1.01 for t in TIMES])
  assert time_s["across_hosts"]["stats"]["n"] == 5
  # The summary.json statistics, with the cross-host block of multi-host runs.
  assert time_s["stats"]["n"] == 10 and time_s["stats"]["hosts"]["slowest_host"] == 1
  # The typed form holds the same.
  stats, samples = bench.summary.metrics["save_0_basics/time_s"], bench.samples["save_0_basics/time_s"]
  assert (stats.unit, stats.n, stats.hosts.slowest_host, samples.direction.value) == ("s", 10, 1, "lower")
  assert samples.hosts[0].repeats == [0, 1, 2, 3, 4] and samples.across_hosts.reduce == "max"
  gbps = bench.samples["save_4_throughput/save_total_gbps"]
  assert gbps.direction.value == "higher" and gbps.across_hosts.reduce == "min"
  assert bench.samples["save_5_inventory/file_count"].direction.value == "neutral"


def test_label_comes_from_env_then_manifest_then_git(tmp_path, monkeypatch, caplog):
  monkeypatch.setenv("GIT_SHA", "abc123")
  assert resolve_label() == "abc123"
  assert resolve_label("my/label") == "my_label"  # safe as a file name
  monkeypatch.delenv("GIT_SHA")
  assert resolve_label(manifest={"git": {"sha": "f00d"}}) == "f00d"
  repo = tmp_path / "repo"
  repo.mkdir()
  monkeypatch.chdir(repo)
  assert resolve_label() == "unknown"
  assert "--baseline_label" in caplog.text
  git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
  subprocess.run(git + ["init", "-q"], cwd=repo, check=True)
  subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "x"], cwd=repo, check=True)
  head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
  assert resolve_label() == head


def test_compare_finds_a_planted_regression_and_writes_comparison_json(tmp_path):
  base = capture_baseline(write_run(tmp_path / "a"), tmp_path / "bl", label="base")
  out = write_run(tmp_path / "b", slowdown=1.3, manifest={"hostname": "box-b"})
  comparison = compare_to_baseline(base, out)
  regressed = {(r.benchmark, r.metric) for r in comparison.headline_regressions}
  assert regressed == {
      (k, m) for k in ("aaaa111111", "bbbb222222")
      for m in ("save_0_basics/time_s", "save_4_throughput/save_total_gbps")
  }
  assert comparison.exit_code(fail_on_regression=True) == EXIT_REGRESSION
  assert comparison.exit_code(fail_on_regression=False) == 0
  assert comparison.rows[0].verdict.value == "worse"  # regressions first
  assert any("different machine" in w and "box-b" in w for w in comparison.warnings)
  written = json.loads((out / "comparison.json").read_text())
  row = next(r for r in written["rows"] if r["metric"] == "save_0_basics/time_s")
  assert set(row) >= {"metric", "benchmark", "variant", "reference", "ratio", "low", "high", "n", "verdict", "rule",
                      "threshold", "judged", "name", "unit", "direction", "reference_median", "current_median",
                      "n_reference", "n_current", "level"}
  assert written["verdicts"] == [r for r in written["rows"] if r["judged"] and r["verdict"] != "not judged"]
  assert {v["verdict"] for v in written["verdicts"]} == {"worse", "equivalent"}  # judged rows, as data
  assert written["verdicts"][0]["reference"] == {"baseline": "base"} and written["schema_version"] == 3
  assert row["ratio"] == pytest.approx(1.3)
  assert row["low"] <= 1.3 <= row["high"]
  by_metric = {r["metric"]: r["verdict"] for r in written["rows"] if r["benchmark"] == "aaaa111111"}
  assert by_metric["save_7_memory/host_rss_peak_diff_mib"] == "equivalent"  # within the 8 MiB floor
  assert by_metric["save_5_inventory/file_count"] == "not judged"


def test_same_run_is_unchanged_and_one_sided_entries_are_listed(tmp_path):
  base = capture_baseline(write_run(tmp_path / "a"), tmp_path / "bl", label="base")
  out = write_run(tmp_path / "b", missing_key=True, extra_metric=True)
  comparison = compare_to_baseline(base, out)
  assert comparison.regressions == [] and comparison.warnings == ()
  assert comparison.only_in_baseline["benchmarks"] == ["SaveRestore use_ocdbt=False [bbbb222222]"]
  assert comparison.only_in_current["metrics"] == ["SaveRestore use_ocdbt=True: save_9_other/new_thing"]


def test_unreadable_inputs_are_user_errors(tmp_path):
  with pytest.raises(CkptbenchError, match="does not exist"):
    compare_to_baseline(tmp_path / "nope.json", tmp_path)
  bad = tmp_path / "bad.json"
  bad.write_text(json.dumps({"format": "ckptbench-baseline", "schema_version": 99}))
  with pytest.raises(CkptbenchError, match="schema_version 99"):
    load_baseline(bad)
  with pytest.raises(CkptbenchError, match="output directory"):
    capture_baseline(tmp_path / "missing", tmp_path / "bl")
  warmup = json.loads(write_run(tmp_path / "warmups").joinpath("results.jsonl").read_text().splitlines()[0])
  (tmp_path / "warmups" / "results.jsonl").write_text(json.dumps(warmup | {"warmup": True}) + "\n")
  with pytest.raises(CkptbenchError, match="no measured run"):
    capture_baseline(tmp_path / "warmups", tmp_path / "bl")
  (tmp_path / "warmups" / "results.jsonl").write_text(json.dumps({"key": "k", "warmup": True}) + "\n")
  with pytest.raises(CkptbenchError, match=r"results\.jsonl:1: .*schema_version None"):
    capture_baseline(tmp_path / "warmups", tmp_path / "bl")


def test_run_captures_then_compares_and_the_report_shows_the_comparison(tmp_path):
  from ckptbench.views import write_views
  from ckptbench.engine._baselines import capture_and_compare
  from ckptbench.stats import DEFAULT_THRESHOLD

  base_out = write_run(tmp_path / "a")
  captured, comparison = capture_and_compare(
      base_out, capture_path=tmp_path / "bl", label="v1", baseline_path=None, threshold=DEFAULT_THRESHOLD
  )
  assert captured == tmp_path / "bl" / "v1.json" and captured.is_file() and comparison is None
  slow = write_run(tmp_path / "b", slowdown=1.5)
  captured, comparison = capture_and_compare(
      slow, capture_path=tmp_path / "bl", label="v2", baseline_path=tmp_path / "bl" / "v1.json",
      threshold=DEFAULT_THRESHOLD,
  )
  assert comparison.exit_code(fail_on_regression=True) == EXIT_REGRESSION
  assert comparison.exit_code(fail_on_regression=False) == 0
  assert captured.is_file() and (slow / "comparison.json").is_file()
  assert write_views(slow, ["report"]) == {}
  report = (slow / "report.html").read_text()
  assert "baseline comparison" in report and "headline metric(s) worse" in report


def test_table_marks_regressions_first_and_inconclusive_changes(tmp_path):
  from rich.console import Console

  from ckptbench.analysis import compare_documents
  from ckptbench.views import print_comparison
  from ckptbench.analysis._baseline import build_baseline, read_run
  from ckptbench.analysis._baseline_document import Samples

  base = build_baseline(*read_run(write_run(tmp_path / "a")), label="base")
  cur = build_baseline(*read_run(write_run(tmp_path / "b", slowdown=1.3)), label="cur")
  # A large change whose samples overlap: neither shown different nor shown the same.
  bench, tag = cur.benchmarks["aaaa111111"], "save_7_memory/host_rss_peak_diff_mib"
  overlapping = dataclasses.replace(bench.samples[tag], across_hosts=Samples([20.0, 90.0, 25.0, 95.0, 80.0]))
  cur.benchmarks["aaaa111111"] = dataclasses.replace(bench, samples={**bench.samples, tag: overlapping})
  console = Console(record=True, width=200)
  print_comparison(compare_documents(base, cur), console)
  text = console.export_text()
  lines = [line for line in text.splitlines() if "SaveRestore" in line]
  assert lines[0].lstrip("│ ").startswith("+")
  peak = next(line for line in lines if "host_rss_peak_diff_mib" in line)
  assert peak.lstrip("│ ").startswith("?")
  assert "repeats a side would decide" in text
