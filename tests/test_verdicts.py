"""Verdicts as data and the gates that read them: exit codes, inconclusive, auto repeats end to end."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conftest import run_cli, timed_records
from ckptbench.analysis import stability_warnings, verdict_clauses
from ckptbench.api import MetricEntry, RunRecord, Verdict, VerdictRecord, is_host_memory_tag
from ckptbench.engine.memory._pass_choices import MEMORY_READINGS_CAP
from ckptbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION
from ckptbench.results import Comparison
from ckptbench.stats import AUTO_LOOKS, Design

TIME = "save_0_basics/time_s"


def _row(verdict: Verdict, headline: bool = True, metric: str = TIME, needed: int | None = None) -> VerdictRecord:
  return VerdictRecord(
      metric, "k1", {"benchmark": "B"}, {"baseline": "base"}, 1.2, 1.1, 1.3, 8, verdict, "the rule", needed, 0.1,
      judged=headline, name="B", unit="s", direction="lower", reference_median=1.0, current_median=1.2,
      n_reference=8, n_current=8, level=0.95,
  )  # fmt: skip


def _comparison(*rows: VerdictRecord) -> Comparison:
  return Comparison("base", 0.1, 0.05, "the rule", tuple(rows), {}, {}, ())


@pytest.mark.parametrize(
    "verdicts, gated, allowed",
    [
        ([Verdict.EQUIVALENT, Verdict.BETTER], EXIT_OK, EXIT_OK),
        ([Verdict.WORSE, Verdict.INCONCLUSIVE], EXIT_REGRESSION, EXIT_REGRESSION),
        ([Verdict.EQUIVALENT, Verdict.INCONCLUSIVE], EXIT_INCONCLUSIVE, EXIT_OK),
        ([], EXIT_REGRESSION, EXIT_REGRESSION),  # nothing matched: nothing can pass
    ],
)
def test_the_gate_passes_only_equivalent_or_better(verdicts, gated, allowed):
  comparison = _comparison(*(_row(v, metric=f"m{i}_0_basics/time_s", needed=40) for i, v in enumerate(verdicts)))
  assert comparison.exit_code(fail_on_regression=True) == gated
  assert comparison.exit_code(fail_on_regression=True, allow_inconclusive=True) == allowed
  assert comparison.exit_code(fail_on_regression=False) == EXIT_OK
  assert comparison.no_regression == (gated == EXIT_OK)


def test_an_inconclusive_side_metric_does_not_gate_but_says_how_many_repeats_would():
  comparison = _comparison(_row(Verdict.EQUIVALENT), _row(Verdict.INCONCLUSIVE, headline=False, metric="x/y"),
                           _row(Verdict.INCONCLUSIVE, metric="load_0_basics/time_s", needed=37))  # fmt: skip
  assert comparison.repeats_needed() == 37
  assert comparison.exit_code(True) == EXIT_INCONCLUSIVE
  written = comparison.to_json()
  assert written["schema_version"] == 3 and written["rule"] == "the rule"
  # The verdicts are the headline rows, what the gate judges; the side metric is a row only.
  assert [(v["metric"], v["verdict"]) for v in written["verdicts"]] == [
      (TIME, "equivalent"), ("load_0_basics/time_s", "inconclusive")]
  assert len(written["rows"]) == 3
  # One record type: a judged row is a verdict, with the fields summary.json's verdicts have.
  assert written["verdicts"] == [written["rows"][0], written["rows"][2]]
  assert set(written["verdicts"][0]) == {f.name for f in dataclasses.fields(VerdictRecord)}
  assert {v["threshold"] for v in written["verdicts"]} == {0.1}
  assert Comparison.from_json(written) == comparison


def _run(repeat: int, save_s: float, other_cpu: float, writeback: float) -> RunRecord:
  metrics = {"save_0_basics/time_s": MetricEntry(save_s, "s"),
             "save_background_0_basics/time_s": MetricEntry(save_s * 3, "s"),
             "machine_9_other/cpus": MetricEntry(2.0, "cpus"),
             "machine_9_other/load_1m": MetricEntry(9.0, "load"),
             "machine_9_other/other_cpu_share": MetricEntry(other_cpu, "cpus busy"),
             "machine_9_other/steal_share": MetricEntry(0.0, "cpus stolen"),
             "machine_9_other/writeback_mib": MetricEntry(writeback, "MiB")}  # fmt: skip
  return RunRecord(suite="s", benchmark="B(x=1)", key="k", generator="m.G", options={}, varying={}, mesh=None,
                   checkpoint_config=None, repeat=repeat, warmup=False, host=0, num_hosts=1, path="", started_at="",
                   duration_s=1.0, metrics=metrics)  # fmt: skip


def test_an_unstable_result_is_warned_about_with_its_likely_cause():
  steady = [_run(r, 1.0 + 0.01 * r, 0.1, 0.0) for r in range(5)]
  assert stability_warnings(steady) == []
  noisy = [_run(r, v, 1.6, 300.0) for r, v in enumerate([1.0, 1.6, 0.7, 1.3, 2.2])]
  lines = stability_warnings(noisy)
  assert lines[0].startswith("B(x=1): unstable (std dev / mean): save ")  # the whole save, not its parts
  assert "save_background" not in lines[0]
  assert "other processes kept 1.6 of 2 CPUs busy" in lines[1] and "load average 9.0 on 2 CPUs" in lines[1]
  assert "300 MiB still dirty or under writeback" in lines[1] and "--time_budget" in lines[1]


SUITE = """\
suite_name: auto
num_repeats: auto
time_budget_s: {budget}
checkpoint_config: {{spec: {{params: {{dtype: float32, shape: [256, 256], sharding: [fsdp]}}}}}}
mesh_config: {{mesh_axes: [fsdp], ici_parallelism: {{fsdp: 2}}}}
benchmarks:
  - generator: save_restore
    options: {{use_ocdbt: [true, false], async_enabled: false, verify: false}}
"""


# Rounds of this suite take about a quarter of a second even on a busy machine: 15 s reach several looks
# (the first after 10 rounds), and what is asserted holds at any look the run stops at.
_AUTO_BUDGET_S = 15


@pytest.mark.slow
def test_auto_repeats_interleave_rounds_and_write_verdicts_as_data(tmp_path):
  suite = tmp_path / "s.yaml"
  suite.write_text(SUITE.format(budget=_AUTO_BUDGET_S))
  out = tmp_path / "out"
  done = run_cli("run", str(suite), "-o", str(out), "--no-progress", "--no-probe", "--no-views", timeout=300)
  assert done.returncode == 0, done.stdout + done.stderr
  summary = json.loads((out / "summary.json").read_text())
  repeats = summary["repeats"]
  assert repeats["mode"] == "auto" and repeats["paired"] and 1 <= repeats["looks"] <= len(AUTO_LOOKS)
  stops = ("decided", "undecidable in the budget", "time budget", "most rounds")
  assert repeats["stopped"] in stops and 1 <= repeats["rounds"] <= AUTO_LOOKS[-1]
  assert repeats["last_look"] or repeats["stopped"] in stops[:2]  # a run stops early only on decided or futile
  assert repeats["seconds"] <= _AUTO_BUDGET_S + 30  # the budget, overrun by at most the last round
  verdicts = summary["verdicts"]
  metrics = {v["metric"] for v in verdicts}
  assert {"save_0_basics/time_s", "load_0_basics/time_s"} <= metrics
  for v in verdicts:
    assert v["verdict"] in ("better", "worse", "equivalent", "inconclusive")
    assert v["variant"] == {"use_ocdbt": False} and v["reference"] == {"use_ocdbt": True}
    if is_host_memory_tag(v["metric"]):  # the memory pass's readings: settled, or judged at one look of their own
      assert v["n"] <= MEMORY_READINGS_CAP
      assert v["rule"].startswith("memory pass:") or f"{1 - repeats['alpha']:.2%} interval" in v["rule"]
    else:
      assert v["n"] <= repeats["rounds"] and f"{repeats['level']:.2%} interval" in v["rule"]
      assert (v["repeats_needed"] is not None) == (v["verdict"] == "inconclusive")
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  measured = timed_records(out)
  assert len(measured) == 2 * repeats["rounds"] and sum(r["warmup"] for r in records) == 2
  rounds = [[r["options"]["use_ocdbt"] for r in measured if r["repeat"] == i] for i in range(repeats["rounds"])]
  assert all(sorted(order) == [False, True] for order in rounds)  # every round runs each variant once
  noise = measured[0]["metrics"]
  assert {"machine_9_other/load_1m", "machine_9_other/other_cpu_share", "machine_9_other/writeback_mib"} <= set(noise)
  # The console reads the same verdicts: each word shown is one summary.json holds.
  save = next(v for v in verdicts if v["metric"] == "save_0_basics/time_s")
  assert f"{save['ratio']:.2f}x" in done.stdout and save["verdict"] in done.stdout
  assert f"after {repeats['rounds']} rounds" in done.stdout


@pytest.mark.slow
def test_a_baseline_gate_on_a_short_fixed_run_is_inconclusive_not_a_pass(tmp_path):
  suite = tmp_path / "s.yaml"
  suite.write_text(SUITE.format(budget=30).replace("num_repeats: auto", "num_repeats: 2"))
  base = run_cli("run", str(suite), "-o", str(tmp_path / "a"), "--no-progress", "--no-probe", "--no-views",
                 "--baseline_capture_path", str(tmp_path / "bl"), "--baseline_label", "v1")  # fmt: skip
  assert base.returncode == 0, base.stderr
  gated = run_cli("run", str(suite), "-o", str(tmp_path / "b"), "--no-progress", "--no-probe", "--no-views",
                  "--baseline_path", str(tmp_path / "bl" / "v1.json"), "--fail_on_regression")  # fmt: skip
  # 2 repeats a side bound no interval: never "no regression", exit 5 with the repeats a decision needs.
  assert gated.returncode == EXIT_INCONCLUSIVE, gated.stdout + gated.stderr
  assert "repeats a side would decide" in gated.stdout and "no regression" not in gated.stdout
  comparison = json.loads((tmp_path / "b" / "comparison.json").read_text())
  assert {v["verdict"] for v in comparison["verdicts"] if v["metric"] == TIME} == {"inconclusive"}


def test_the_rule_and_the_legend_state_a_fractional_threshold_alike():
  rule = Design().rule(0.075, paired=True)
  assert "beyond 7.5%" in rule and "+-7.5%" in rule and "8%" not in rule
  assert all("7.5%" in clause for clause in verdict_clauses(0.075)[:2])


def test_the_inconclusive_hint_offers_auto_repeats_only_where_they_did_not_run():
  from rich.console import Console  # noqa: PLC0415

  from ckptbench.views import print_comparison  # noqa: PLC0415

  comparison = _comparison(_row(Verdict.INCONCLUSIVE, needed=37))
  said = {}
  for auto in (False, True):
    console = Console(record=True, width=200)
    print_comparison(comparison, console=console, repeated_until_decided=auto)
    said[auto] = console.export_text()
  assert "num_repeats: auto decides for you" in said[False]
  assert "auto decides for you" not in said[True] and "--time_budget" in said[True]
