"""`ckptbench goodput`: intervals from measured save costs, on real runs."""

from __future__ import annotations

import json

import pytest

from builtin_support import ok_metrics, run_text
from ckptbench.api import MetricEntry
from ckptbench.api._records import RunRecord
from ckptbench.errors import CkptbenchError
from ckptbench.analysis._goodput import plan_goodput
from ckptbench.stats import CheckpointCost, expected_goodput, optimal_interval

SUITE = """\
suite_name: g
checkpoint_config:
  spec:
    w: {dtype: float32, shape: [64, 32], sharding: [fsdp]}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}
"""
MANAGER = """\
benchmarks:
  - generator: checkpoint_manager
    options: {num_steps: 6, save_interval_steps: 2}
"""


@pytest.mark.slow
def test_goodput_from_a_run_names_the_missing_recovery_and_still_gives_the_interval(tmp_path, cli):
  [m] = ok_metrics(run_text(tmp_path, SUITE, MANAGER))
  done = cli("goodput", str(tmp_path / "out"), "--mtbf", "6h", "--interval", "30m")
  assert done.returncode == 0, done.stderr
  assert "missing recovery_s" in done.stdout and "goodput there –" in done.stdout
  [plan] = json.loads((tmp_path / "out" / "goodput.json").read_text())
  blocking = m["save_blocking_0_basics/time_s_mean"].value
  assert plan["cost"]["blocking_s"] == pytest.approx(blocking)
  assert plan["cost"]["lag_s"] == pytest.approx(m["save_durable_0_basics/time_s_mean"].value - blocking)
  assert plan["best_goodput"] is None and plan["cost"]["recovery_s"] is None
  assert plan["best_interval_s"] == pytest.approx(optimal_interval(_cost(plan), 6 * 3600))
  assert "<svg" in (tmp_path / "out" / "goodput.html").read_text()


@pytest.mark.slow
def test_goodput_with_recovery_and_per_accelerator_mttf(tmp_path, cli):
  run_text(tmp_path, SUITE, MANAGER)
  done = cli("goodput", str(tmp_path / "out"), "--mttf", "8000h", "--accelerators", "1000",
             "--recovery", "5m", "--interval", "1h")  # fmt: skip
  assert done.returncode == 0, done.stderr
  [plan] = json.loads((tmp_path / "out" / "goodput.json").read_text())
  assert plan["mtbf_s"] == pytest.approx(8 * 3600)
  assert plan["cost"]["recovery_s"] == 300
  cost = _cost(plan)
  assert plan["best_goodput"] == pytest.approx(expected_goodput(plan["best_interval_s"], cost, 8 * 3600))
  assert plan["best_goodput"] > plan["current_goodput"] == pytest.approx(expected_goodput(3600, cost, 8 * 3600))


@pytest.mark.slow
def test_goodput_from_a_baseline_file_equals_goodput_from_its_run(tmp_path, cli):
  from ckptbench import capture_baseline

  run_text(tmp_path, SUITE, MANAGER)
  baseline = capture_baseline(tmp_path / "out", tmp_path / "baselines", label="b")
  from_run = plan_goodput(tmp_path / "out", 3600.0, recovery_s=60.0)
  from_file = plan_goodput(baseline, 3600.0, recovery_s=60.0)
  assert [p.best_interval_s for p in from_file] == pytest.approx([p.best_interval_s for p in from_run])
  done = cli("goodput", str(baseline), "--mtbf", "1h")
  assert done.returncode == 0, done.stderr
  assert (tmp_path / "baselines" / "goodput.html").is_file()  # beside the baseline file


def test_goodput_takes_the_lag_of_a_torch_async_save_from_its_whole_save(tmp_path):
  pytest.importorskip("torch", reason="the pytorch built-in needs the torch extra")
  [m] = ok_metrics(run_text(tmp_path, SUITE, """\
      benchmarks:
        - generator: pytorch
          options: {library: dcp_async}
      """))
  [plan] = plan_goodput(tmp_path / "out", 3600.0, recovery_s=60.0)
  blocking = m["save_blocking_0_basics/time_s"].value
  assert plan.cost.blocking_s == pytest.approx(blocking)
  assert plan.cost.lag_s == pytest.approx(m["save_0_basics/time_s"].value - blocking)
  assert plan.best_goodput is not None and not plan.missing


@pytest.mark.slow
def test_goodput_refuses_bad_input_with_one_line(tmp_path, cli):
  done = cli("goodput", str(tmp_path / "absent"), "--mtbf", "6h")
  assert done.returncode == 2 and done.stderr.startswith("ckptbench: error: ")
  done = cli("goodput", str(tmp_path), "--mttf", "1000h")
  assert done.returncode == 2 and "--accelerators" in done.stderr
  done = cli("goodput", str(tmp_path), "--mtbf", "soon")
  assert done.returncode == 2 and "--mtbf" in done.stderr and "Traceback" not in done.stderr


def _write_one_run(out, metrics):
  """OUT/results.jsonl with one run of benchmark `b` that measured `metrics`."""
  record = RunRecord(
      suite="s", benchmark="b", key="k", generator="m.G", options={}, varying={}, mesh=None, checkpoint_config=None,
      repeat=0, warmup=False, host=0, num_hosts=1, path="", started_at="", duration_s=1.0,
      metrics={tag: MetricEntry(v, u) for tag, (v, u) in metrics.items()},
  )  # fmt: skip
  out.mkdir()
  (out / "results.jsonl").write_text(json.dumps(record.to_json()) + "\n")


def test_goodput_needs_a_benchmark_that_saved(tmp_path):
  _write_one_run(tmp_path / "out", {"load_0_basics/time_s": (1.0, "s")})
  with pytest.raises(CkptbenchError, match="no benchmark measured a save"):
    plan_goodput(tmp_path / "out", 3600.0)


def test_goodput_names_a_missing_lag_instead_of_assuming_one(tmp_path):
  _write_one_run(tmp_path / "out", {"save_blocking_0_basics/time_s": (2.0, "s")})
  [plan] = plan_goodput(tmp_path / "out", 3600.0, interval_s=600.0, recovery_s=60.0)
  assert plan.cost.lag_s is None and plan.best_goodput is None and plan.current_goodput is None
  assert [m.split(":")[0] for m in plan.missing] == ["lag_s"]
  assert plan.best_interval_s == pytest.approx(optimal_interval(CheckpointCost(2.0), 3600.0))


@pytest.mark.slow
def test_goodput_takes_the_recovery_measured_by_preemption_recovery(tmp_path):
  outcome = run_text(tmp_path, SUITE, MANAGER + (
      "  - generator: preemption_recovery\n"
      "    options: {save_interval_steps: 2, kill_step: 4}\n"
  ))
  recover = [m for m in ok_metrics(outcome) if "recover_0_basics/time_s" in m][0]
  [plan] = plan_goodput(tmp_path / "out", 6 * 3600.0)
  assert plan.cost.recovery_s == pytest.approx(recover["recover_0_basics/time_s"].value)
  assert plan.sources["recovery_s"].startswith("recover_0_basics/time_s of PreemptionRecovery")
  assert plan.best_goodput is not None and not plan.missing


def _cost(plan):
  return CheckpointCost(**plan["cost"])
