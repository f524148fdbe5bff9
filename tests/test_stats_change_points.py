"""Change points on planted series: a step, a drift, an outlier, and A/A series with none."""

from __future__ import annotations

import numpy as np
import pytest

from ckptbench.stats import Direction, change_points
from ckptbench.stats._change_points import scan_p_value, segment_ratio


def _runs(levels, rng, within=0.05, samples=5):
  """Per run, `samples` lognormal samples around its level (`within`: the spread inside a run)."""
  return [list(level * np.exp(rng.normal(0.0, within, samples))) for level in levels]


def _between(n, rng, spread=0.08):
  """Run levels that differ by chance alone (a shared machine from one run to the next)."""
  return np.exp(rng.normal(0.0, spread, n))


@pytest.mark.parametrize("seed", range(5))
def test_a_step_is_one_worse_change_at_the_first_run_after_it(seed):
  rng = np.random.default_rng(seed)
  levels = _between(14, rng) * np.array([1.0] * 8 + [1.5] * 6)
  changes = change_points(_runs(levels, rng), Direction.LOWER)
  assert [(c.index, c.worse) for c in changes] == [(8, True)]
  (c,) = changes
  assert c.low < c.ratio < c.high and c.low > 1.0
  assert 1.3 < c.ratio < 1.7  # the planted 1.5, measured
  assert (c.before_runs, c.after_runs) == (8, 6)


def test_a_step_up_in_throughput_is_better():
  rng = np.random.default_rng(7)
  levels = _between(14, rng) * np.array([1.0] * 7 + [1.4] * 7)
  (c,) = change_points(_runs(levels, rng), Direction.HIGHER)
  assert c.index == 7 and not c.worse and c.ratio > 1.2


def test_a_drift_shows_as_changes_that_all_go_the_same_way_and_end_worse():
  rng = np.random.default_rng(3)
  levels = np.linspace(1.0, 1.8, 40) * _between(40, rng, 0.03)
  changes = change_points(_runs(levels, rng), Direction.LOWER)
  assert changes and all(c.worse for c in changes)
  total = np.prod([c.ratio for c in changes])
  assert 1.4 < total < 2.2  # the segments together cover most of the 1.8x drift


@pytest.mark.parametrize("where", [3, 10, 19])
def test_one_outlier_run_is_no_change(where):
  rng = np.random.default_rng(where)
  levels = _between(20, rng, 0.03)
  levels[where] *= 3.0
  assert change_points(_runs(levels, rng), Direction.LOWER) == []


def _a_and_a(series_per_length: int) -> list:
  rng = np.random.default_rng(11)
  found = []
  for n in (8, 14, 30, 60):
    for _ in range(series_per_length):
      found += change_points(_runs(_between(n, rng), rng), Direction.LOWER)
  return found


def test_a_and_a_series_have_no_change():
  """40 series of runs that differ by chance (8% between runs, 5% within): no change in any."""
  assert _a_and_a(10) == []


@pytest.mark.slow
def test_many_a_and_a_series_have_no_change():
  """400 such series (about 17 s): none has a change."""
  assert _a_and_a(100) == []


def test_a_change_smaller_than_the_threshold_is_not_reported():
  rng = np.random.default_rng(5)
  levels = np.array([1.0] * 10 + [1.05] * 10)
  runs = _runs(levels, rng, within=0.005)
  assert change_points(runs, Direction.LOWER, threshold=0.10) == []
  assert [c.index for c in change_points(runs, Direction.LOWER, threshold=0.02)] == [10]


def test_few_runs_decide_nothing_and_neutral_series_have_no_changes():
  assert change_points([[1.0], [1.0], [2.0]], Direction.LOWER) == []
  assert change_points([[1.0]] * 6 + [[2.0]] * 6, Direction.NEUTRAL) == []
  assert scan_p_value([0.0, 1.0, 1.0, 0.0]) > 0.1  # two runs a side: 6 orderings, no p below 1/6


def test_constant_series_with_a_step_is_exact():
  (c,) = change_points([[1.0, 1.0]] * 6 + [[2.0, 2.0]] * 6, Direction.LOWER)
  assert (c.index, c.ratio, c.low, c.high) == (6, 2.0, 2.0, 2.0)


def test_samples_must_be_positive():
  with pytest.raises(ValueError, match="positive"):
    change_points([[1.0]] * 3 + [[0.0]] * 3, Direction.LOWER)


def test_segment_ratio_interval_widens_with_the_spread_between_runs():
  rng = np.random.default_rng(2)
  tight = segment_ratio(_runs([1.0] * 6, rng, 0.02), _runs([1.2] * 6, rng, 0.02))
  loose = segment_ratio(_runs(_between(6, rng, 0.2), rng, 0.02), _runs(1.2 * _between(6, rng, 0.2), rng, 0.02))
  assert tight[2] - tight[1] < loose[2] - loose[1]
  assert tight[1] > 1.0
