"""`ckptbench.run` from Python does what `ckptbench run` does: same records, summary, comparison."""

from __future__ import annotations

import json
import pathlib

import pytest

import ckptbench
from conftest import run_cli

SUITE = """\
suite_name: same
num_repeats: 2
baseline_path: {baseline}
checkpoint_config:
  spec:
    params: {{dtype: float32, shape: [64, 32], sharding: [fsdp]}}
mesh_configs:
  - {{mesh_axes: [fsdp], ici_parallelism: {{fsdp: 8}}}}
benchmarks:
  - generator: save_restore
    options: {{use_ocdbt: [true, false]}}
"""

# What differs between two runs of the same suite: times, places, and measured values.
_RUN_SPECIFIC = {"path", "started_at", "duration_s", "metrics", "inventory"}


def _tags(metrics: dict) -> list[str]:
  # Timing, throughput and inventory tags are in every run; event- and counter-based ones
  # (TensorStore thread pools, Orbax's background stage events) depend on what the process
  # had already started and on when a background thread reported, so they are left out.
  return sorted(t for t in metrics if any(ns in t for ns in ("_0_basics/", "_4_throughput/", "_5_inventory/")))


def _records(out: pathlib.Path) -> list[dict]:
  rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  return sorted(
      ({k: v for k, v in r.items() if k not in _RUN_SPECIFIC} | {"tags": _tags(r["metrics"])} for r in rows),
      key=lambda r: (r["key"], r["repeat"], r["warmup"]),
  )


def _summary_shape(out: pathlib.Path) -> list[tuple]:
  summary = json.loads((out / "summary.json").read_text())
  return sorted((b["name"], b["key"], b["runs"], b["failed"], tuple(_tags(b["metrics"]))) for b in summary["benchmarks"])


def _comparison_shape(out: pathlib.Path) -> list[tuple]:
  comparison = json.loads((out / "comparison.json").read_text())
  compared = {(r["name"], r["benchmark"]): set() for r in comparison["rows"]}
  for r in comparison["rows"]:
    compared[r["name"], r["benchmark"]].add(r["metric"])
  return sorted((name, key, tuple(_tags(dict.fromkeys(tags)))) for (name, key), tags in compared.items())


@pytest.mark.slow
def test_python_and_cli_runs_write_the_same_records_summary_and_comparison(tmp_path):
  baselines = tmp_path / "baselines"
  first = ckptbench.run(
      ckptbench.load_suite_text(SUITE.format(baseline="null"), file="same.yaml"),
      ckptbench.RunSettings(
          output_dir=tmp_path / "first", show_progress=False, probe_storage=False, write_views=False,
          baseline_capture_path=str(baselines), baseline_label="first",
      ),
  )  # fmt: skip
  assert first.exit_code == 0 and first.captured_baseline == baselines / "first.json"
  suite_file = tmp_path / "same.yaml"
  suite_file.write_text(SUITE.format(baseline=baselines / "first.json"))

  from_python = ckptbench.run(
      str(suite_file),
      ckptbench.RunSettings(output_dir=tmp_path / "py", show_progress=False, probe_storage=False),
  )
  done = run_cli("run", str(suite_file), "-o", str(tmp_path / "cli"), "--no-progress", "--no-probe")
  assert done.returncode == from_python.exit_code == 0, done.stderr

  assert from_python.comparison is not None  # the suite's baseline_path was honoured from Python
  assert _records(tmp_path / "py") == _records(tmp_path / "cli")
  assert _summary_shape(tmp_path / "py") == _summary_shape(tmp_path / "cli")
  assert _comparison_shape(tmp_path / "py") == _comparison_shape(tmp_path / "cli")
  assert _comparison_shape(tmp_path / "py")  # something was compared
  # Piped, the CLI wrote its views before it returned.
  for out in ("py", "cli"):  # the report is written once, after the comparison, and shows it
    assert "baseline comparison" in (tmp_path / out / "report.html").read_text()


def test_a_missing_baseline_is_refused_before_anything_runs(tmp_path):
  suite = ckptbench.load_suite_text(SUITE.format(baseline=tmp_path / "nope.json"), file="same.yaml")
  with pytest.raises(ckptbench.CkptbenchError, match="does not exist"):
    ckptbench.run(suite, ckptbench.RunSettings(output_dir=tmp_path / "out", show_progress=False))
  assert not (tmp_path / "out").exists()
