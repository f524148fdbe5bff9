"""One rule for what a suite is judged on, at the threshold asked for, read back as a user would.

A sweep captured as a baseline, then run again against it with `--fail_on_regression
--regression_threshold 0.25`: the gate (comparison.json's headline rows and its verdicts) judges
exactly the metrics summary.json's verdicts judge, and 25% is what comparison.json, every verdict's
rule and the console's legend state. And the quick start, at a small size, sums its outlying
repeats up instead of printing one line each.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import REPO, run_cli

from ckptbench.api import judged_metrics
from ckptbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION

SWEEP = """\
suite_name: judged
num_repeats: 4
reference: {use_ocdbt: true}
checkpoint_config: {spec: {params: {dtype: float32, shape: [64, 64], sharding: [fsdp]}}}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 2}}
benchmarks:
  - generator: save_restore
    options: {use_ocdbt: [true, false]}
"""
QUIET = ("--no_progress", "--no_probe", "--no_views")


def _statements(stdout: str, start: str) -> list[str]:
  """The printed lines that begin with `start`, each joined with its indented continuation lines."""
  lines = stdout.splitlines()
  found = []
  for i, line in enumerate(lines):
    if line.startswith(start):
      end = i + 1
      while end < len(lines) and lines[end].startswith("  "):
        end += 1
      found.append(" ".join(x.strip() for x in lines[i:end]))
  return found


@pytest.mark.slow
def test_the_gate_judges_the_verdicts_metrics_and_every_legend_states_the_threshold_asked(tmp_path):
  (tmp_path / "sweep.yaml").write_text(SWEEP)
  captured = run_cli("run", str(tmp_path / "sweep.yaml"), "-o", str(tmp_path / "base"), *QUIET,
                     "--baseline_capture_path", str(tmp_path / "baselines"), "--baseline_label", "base")  # fmt: skip
  assert captured.returncode == 0, captured.stderr
  done = run_cli("run", str(tmp_path / "sweep.yaml"), "-o", str(tmp_path / "out"), *QUIET,
                 "--baseline_path", str(tmp_path / "baselines" / "base.json"),
                 "--fail_on_regression", "--regression_threshold", "0.25")  # fmt: skip
  summary = json.loads((tmp_path / "out" / "summary.json").read_text())
  comparison = json.loads((tmp_path / "out" / "comparison.json").read_text())

  # The same metrics, judged by the sweep's verdicts and by the gate: exactly the rule's, none else.
  judged = {v["metric"] for v in summary["verdicts"]}
  units = {}
  for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines():
    for tag, entry in json.loads(line)["metrics"].items():
      units.setdefault(tag, entry["unit"])
  assert judged == {m.tag for m in judged_metrics(units)}
  assert {"save_0_basics/time_s", "load_0_basics/time_s", "save_4_throughput/save_total_gbps"} <= judged
  headline_rows = [r for r in comparison["rows"] if r["judged"]]
  assert {r["metric"] for r in headline_rows} == judged
  assert {v["metric"] for v in comparison["verdicts"]} == judged
  # One record type: summary.json's verdicts and comparison.json's rows carry the same fields.
  assert {frozenset(v) for v in summary["verdicts"] + comparison["rows"]} == {frozenset(summary["verdicts"][0])}
  assert len(comparison["rows"]) > len(headline_rows)  # every other metric is compared, shown and never gated

  # 25% wherever a threshold is stated: comparison.json, every verdict's rule, the console's legends.
  assert comparison["threshold"] == 0.25 and "beyond 25%" in comparison["rule"] and "+-25%" in comparison["rule"]
  for verdict in summary["verdicts"] + comparison["verdicts"]:
    assert verdict["threshold"] == 0.25
    assert "beyond 25%" in verdict["rule"] and "+-25%" in verdict["rule"] and "10%" not in verdict["rule"]
  stdout = done.stdout
  worse, equivalent = _statements(stdout, "worse / better:"), _statements(stdout, "equivalent:")
  assert len(worse) == 2 and len(equivalent) == 1  # the verdict's legend (a line) and the comparison's (a clause a line)
  assert all("beyond 25%" in line for line in worse) and all("within +-25%" in line for line in worse[:1] + equivalent)
  assert "10%" not in " ".join(worse + equivalent + _statements(stdout, "rule:"))

  # The exit code is the gate's reading of those rows.
  verdicts = {r["verdict"] for r in headline_rows}
  expected = EXIT_REGRESSION if "worse" in verdicts else EXIT_INCONCLUSIVE if "inconclusive" in verdicts else EXIT_OK
  assert done.returncode == expected, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.slow
def test_the_quick_start_sums_its_outlying_repeats_up_in_two_lines_at_most(tmp_path):
  done = run_cli("run", str(REPO / "examples" / "quickstart.yaml"), "-o", str(tmp_path / "out"), *QUIET,
                 "--set", "checkpoint_config.spec.params.shape=[512, 512]", "--time_budget_s", "15")  # fmt: skip
  assert done.returncode == 0, done.stderr[-3000:]
  assert "! outlier:" not in done.stdout  # one line per repeat, as it was
  lines = done.stdout.splitlines()
  starts = [i for i, line in enumerate(lines) if line.startswith("! outliers:")]
  assert len(starts) <= 1
  for start in starts:
    end = start + 1
    while end < len(lines) and lines[end].startswith("  "):
      end += 1
    assert end - start <= 2, "\n".join(lines[start:end])  # the worst one: -v
    text = " ".join(x.strip() for x in lines[start:end])
    assert re.search(r"^! outliers: \d+ of \d+ times lie far .*\.$", text) and "The worst" not in text, text
