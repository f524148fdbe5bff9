"""`ckptbench plan` answers what a newcomer asks first: how many repeats and what bounds them, against which
reference, judged on what, whether effects answer the suite, and what the data is; values as the suite
writes them."""

from __future__ import annotations

import pytest

from conftest import run_cli

pytestmark = pytest.mark.slow  # each test reads `ckptbench plan` run as a process


@pytest.fixture(scope="module")
def three_factor() -> str:
  done = run_cli("plan", "three_factor")
  assert done.returncode == 0, done.stderr
  return done.stdout


def test_plan_says_what_bounds_auto_repeats(three_factor):
  line = next(line for line in three_factor.splitlines() if line.startswith("repeats: "))
  assert "num_repeats: auto" in line and "looking after 10, 15, 22, 33" in line and "300 s" in line
  assert "--time_budget" in line


def test_plan_names_the_reference_the_judged_metrics_and_the_effects(three_factor):
  assert "reference: SaveRestoreBenchmark(use_ocdbt=False, use_zarr3=False, save_concurrent_gb=1) (the first;" in three_factor
  assert "judged: each operation's time, throughput" in three_factor
  assert "effects: 3 factors (use_ocdbt, use_zarr3, save_concurrent_gb)" in three_factor


def test_plan_prints_values_as_the_suite_writes_them_and_the_specs_arrays(three_factor):
  assert "save_concurrent_gb=1)" in three_factor and "save_concurrent_gb=1.0" not in three_factor
  assert "spec: params bfloat16[8192,8192]" in three_factor and "entries" not in three_factor


def test_too_few_devices_given_are_answered_with_the_number_needed():
  done = run_cli("plan", "quickstart", "--devices", "4")
  assert done.returncode != 0 and "Traceback" not in done.stderr
  assert "no mesh fits the 4 available devices" in done.stderr and "--devices 8" in done.stderr
  assert "Use --devices N" not in done.stderr
