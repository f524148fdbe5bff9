"""The calibration harness's pure parts (measurements/_calibration_table.py): tolerances, rows that
pass only when every repeat does, the table, and every growth law recovered from synthetic counts.
The end-to-end table is measurements/calibration.py (a benchmark, not run here)."""

from __future__ import annotations

import importlib.util
import math
import sys

import pytest

from ckptbench.stats import LAWS
from conftest import REPO

_spec = importlib.util.spec_from_file_location("_calibration_table", REPO / "measurements" / "_calibration_table.py")
table = importlib.util.module_from_spec(_spec)
sys.modules["_calibration_table"] = table
_spec.loader.exec_module(table)


def test_a_tolerance_is_relative_or_absolute_and_says_which():
  assert table.Tolerance(relative=0.15).allows(64.0, 73.6) and not table.Tolerance(relative=0.15).allows(64.0, 74.0)
  assert table.Tolerance(absolute=1.5).allows(0.0, -1.5) and not table.Tolerance(absolute=1.5).allows(0.0, 1.6)
  assert not table.Tolerance(relative=0.15).allows(64.0, math.nan)
  assert table.Tolerance(relative=0.15).describe("MiB") == "±15%"
  assert table.Tolerance(absolute=1.5).describe("MiB") == "±1.5 MiB"
  assert table.Tolerance(relative=0.0).describe("requests") == "exact"
  assert table.Tolerance(relative=0.0).allows(10.0, 10.0) and not table.Tolerance(relative=0.0).allows(10.0, 11.0)
  with pytest.raises(ValueError, match="exactly one"):
    table.Tolerance(relative=0.1, absolute=1.0)
  with pytest.raises(ValueError, match="exactly one"):
    table.Tolerance()
  assert all(t.why for t in table.TOLERANCES.values())


def test_a_row_passes_only_when_every_repeat_is_within_its_familys_tolerance():
  # The report: 64 MiB allocated after heap churn read 0.0 MiB in a repeat.
  good = table.row("memory", "64 MiB", "MiB", 64.0, [63.0, 65.0, 70.0])
  one_zero = table.row("memory", "64 MiB", "MiB", 64.0, [64.0, 64.0, 0.0])
  assert good.passes and good.median == 65.0 and good.ratio == pytest.approx(65 / 64)
  assert not one_zero.passes and one_zero.median == 64.0  # the median alone would hide it
  no_leak = table.row("leak", "none kept", "MiB/save", 0.0, [0.3, -0.2])
  assert no_leak.passes and no_leak.ratio is None
  assert not table.row("time", "sleep", "s", 0.5, []).passes


def test_a_no_leak_row_passes_only_when_every_repeats_interval_contains_zero():
  contains = table.interval_row("leak", "none kept", "MiB/save", [-0.4, -0.1, 0.0], [0.2, 0.3, 0.5])
  assert contains.passes and contains.measured == (0.0, 0.0, 0.0)
  above = table.interval_row("leak", "none kept", "MiB/save", [-0.4, 0.25], [0.2, 0.6])
  assert not above.passes and above.measured == (0.0, 0.25)
  below = table.interval_row("leak", "none kept", "MiB/save", [-0.9], [-0.5])
  assert not below.passes and below.measured == (0.5,)
  assert "intervals -0.9 to -0.5" in below.what


def test_the_table_has_one_line_per_row_with_its_range_and_verdict():
  rows = [table.row("memory", "64 MiB in alloc", "MiB", 64.0, [0.0, 64.0, 60.0]),
          table.row("leak", "none kept", "MiB/save", 0.0, [0.25])]  # fmt: skip
  text = table.format_table(rows).splitlines()
  assert text[0] == "| family | planted | measured (median, range over repeats) | ratio | tolerance | pass |"
  assert text[2] == "| memory: 64 MiB in alloc | 64 MiB | 60 MiB (0 to 64) | 0.938 | ±15% | **no** |"
  assert text[3] == "| leak: none kept | 0 MiB/save | 0.25 MiB/save | – | ±1.5 MiB/save | yes |"


def test_paired_differences_pair_repeats_by_index():
  assert table.paired_differences({0: 12.0, 1: 13.0, 2: 9.0}, {0: 4.0, 1: 5.0}) == [8.0, 8.0]
  assert table.paired_differences({}, {0: 1.0}) == []


def test_every_growth_law_is_recovered_from_synthetic_counts_at_three_host_counts():
  assert set(table.PLANTED_LAWS) == set(LAWS)
  rows = table.law_rows()
  assert len(rows) == 2 * len(LAWS)
  for r in rows:
    assert r.passes, table.format_table([r])
    assert r.ratio == pytest.approx(1.0)
  linear = next(r for r in rows if r.what.startswith("linear, 64 hosts"))
  assert linear.planted == 267.0 and "found linear" in linear.what  # the PUTs, 11 + 4n
