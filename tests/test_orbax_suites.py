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
  assert not failed, failed  # 73/73
