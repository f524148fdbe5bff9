"""training_interference: step times around real async Orbax saves."""

from __future__ import annotations

import json
import textwrap

import pytest

import ckptbench
from builtin_support import corrupt_before, errors, ok_metrics, roll_back_latest_step, run_text
from ckptbench.config import load_suite_text
from ckptbench.engine.loop._runner import run_suite
from ckptbench.engine._settings import RunSettings

DATA = """\
suite_name: t
checkpoint_config:
  spec:
    w: {dtype: float32, shape: [64, 32], sharding: [fsdp]}
    opt: {mu: {dtype: float32, shape: [64, 32], sharding: [fsdp]}, count: {dtype: int32, shape: [8]}}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}
"""
OPTIONS = "num_saves: 4, save_interval_steps: 6, step_matmul_size: 64, step_matmuls: 4"


@pytest.mark.parametrize("api", ["checkpoint_manager", "training_checkpointer", "torch_dcp"])
def test_training_interference_splits_steps_phases_and_memory(tmp_path, api):
  if api == "torch_dcp":
    pytest.importorskip("torch", reason="torch_dcp needs the torch extra")
  outcome = run_text(tmp_path, DATA, f"""\
      benchmarks:
        - generator: training_interference
          options: {{api: {api}, {OPTIONS}}}
      """)
  [m] = ok_metrics(outcome)
  counts = m["interference_9_other/clean_steps"].value + m["interference_9_other/overlapping_steps"].value
  assert counts == 24  # every timed step is classified once
  assert m["save_first_blocking_0_basics/time_s"].value > 0
  assert m["save_steady_blocking_0_basics/count"].value == 3
  for phase in ("first", "steady"):
    durable = m[f"save_{phase}_durable_0_basics/time_s"].value
    blocking = m[f"save_{phase}_blocking_0_basics/time_s"].value
    background = m[f"save_{phase}_background_0_basics/time_s"].value
    assert background > 0 and durable == pytest.approx(blocking + background, rel=0.05, abs=2e-3)
  if api != "torch_dcp":  # Orbax's own stage of the blocking part, from jax.monitoring
    assert m["save_first_blocking_2_save_breakdown/async_blocking_s"].value > 0
  slope = m["memory_9_other/rss_slope_mib_per_save"].value
  assert m["memory_9_other/rss_slope_mib_per_save_low"].value <= slope
  assert slope <= m["memory_9_other/rss_slope_mib_per_save_high"].value
  for phase in ("first", "steady"):
    growth = m[f"memory_9_other/save_{phase}_peak_growth_mib"].value
    assert m[f"memory_9_other/save_{phase}_peak_over_checkpoint"].value == pytest.approx(
        growth / m["memory_9_other/checkpoint_mib"].value)
  assert m["memory_9_other/checkpoint_mib"].value == pytest.approx((2 * 64 * 32 * 4 + 32) / 2**20)
  [timeline] = (tmp_path / "out").rglob("timeline.json")
  series = json.loads(timeline.read_text())
  assert len(series["steps"]) == 24 and len(series["saves"]) == 4
  overlapping = sum(s["overlapping"] for s in series["steps"])
  assert overlapping == m["interference_9_other/overlapping_steps"].value
  assert all(s["called_s"] <= s["returned_s"] <= s["committed_s"] for s in series["saves"])
  if "interference_9_other/step_slowdown_ratio" in m:
    assert m["interference_9_other/step_slowdown_ratio"].value > 0


def test_training_interference_check_fails_when_the_latest_step_holds_older_data(tmp_path):
  # The restore is the first block measured with the default collectors.
  with corrupt_before(1, lambda: roll_back_latest_step(tmp_path / "out")):
    outcome = run_text(tmp_path, DATA, f"""\
        benchmarks:
          - generator: training_interference
            options: {{{OPTIONS}}}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


def test_training_interference_torch_dcp_check_fails_when_the_latest_step_holds_older_data(tmp_path):
  pytest.importorskip("torch", reason="torch_dcp needs the torch extra")
  with corrupt_before(1, lambda: _roll_back_dcp(tmp_path / "out")):
    outcome = run_text(tmp_path, DATA, f"""\
        benchmarks:
          - generator: training_interference
            options: {{api: torch_dcp, {OPTIONS}}}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


def _roll_back_dcp(root) -> bool:
  """Replaces DCP's latest step directory with the one before (DCP writes a .metadata file per step)."""
  import shutil

  steps = sorted((int(p.parent.name), p.parent) for p in root.rglob(".metadata") if p.parent.name.isdigit())
  if len(steps) < 2:
    return False
  shutil.rmtree(steps[-1][1])
  shutil.copytree(steps[-2][1], steps[-1][1])
  return True


def test_training_interference_rejects_too_few_saves(tmp_path):
  from ckptbench.benchmarks.training_interference import TrainingInterferenceOptions

  assert "num_saves" in TrainingInterferenceOptions(num_saves=2).invalid_reason()
  assert "save_interval_steps" in TrainingInterferenceOptions(save_interval_steps=1).invalid_reason()


MEMORY_FIGURES = ("memory_9_other/rss_slope_mib_per_save", "memory_9_other/save_first_peak_growth_mib",
                  "memory_9_other/save_steady_peak_over_checkpoint", "memory_9_other/peak_over_checkpoint")


@pytest.mark.slow  # the memory pass is a second process
@pytest.mark.parametrize("host_memory", ["pass", "off"])
def test_training_interference_takes_its_memory_figures_where_host_memory_is_measured(tmp_path, host_memory):
  suite = load_suite_text(textwrap.dedent(DATA) + textwrap.dedent(f"""\
      num_repeats: 1
      num_warmups: 0
      benchmarks:
        - generator: training_interference
          options: {{{OPTIONS}}}
      """), str(tmp_path / "suite.yaml"))  # fmt: skip
  outcome = run_suite(suite, RunSettings(output_dir=tmp_path / "out", show_progress=False, host_memory=host_memory))
  assert outcome.exit_code == 0
  (timed,) = ckptbench.timed_runs(outcome.records)
  assert not set(MEMORY_FIGURES) & set(timed.metrics) and timed.value("memory_9_other/checkpoint_mib") > 0
  reason = "in the memory pass after the timed runs" if host_memory == "pass" else "not measured (host_memory off)"
  assert any("rss_slope_mib_per_save" in note and reason in note for note in timed.notes), timed.notes
  passes = ckptbench.memory_pass_records(outcome.records)
  if host_memory == "pass":
    (memory,) = passes
    assert all(memory.value(tag) is not None for tag in MEMORY_FIGURES)
    assert outcome.summary.benchmarks[0].metrics["memory_9_other/rss_slope_mib_per_save"].n == 1
  else:
    assert not passes
