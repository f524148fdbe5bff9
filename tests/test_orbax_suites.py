"""Every suite file shipped in the orbax-checkpoint wheel plans unchanged (benchmarks/plan_orbax_suites.py prints N/73)."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import REPO

_spec = importlib.util.spec_from_file_location("plan_orbax_suites", REPO / "benchmarks" / "plan_orbax_suites.py")
plan_orbax_suites = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plan_orbax_suites)


@pytest.mark.slow
def test_the_shipped_suites_plan_unchanged():
  files = plan_orbax_suites.suite_files()
  assert len(files) == 73
  failed = {}
  for path in files:
    code, text = plan_orbax_suites.plan(path)
    if code:
      failed[path.name] = text
  # Generators still being written elsewhere may be missing; nothing else may fail.
  assert all("has no equivalent for" in text for text in failed.values()), failed
  assert not {name for name in failed if not name.endswith("_benchmark.yaml")}, failed
  assert len(failed) <= 5, sorted(failed)  # 68/73 on this branch; 73/73 once the multi-process generators land
