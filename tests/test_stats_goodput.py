"""Goodput model against a direct simulation; slopes and step-time ratios."""

from __future__ import annotations

import math

import pytest

from ckptbench.stats import (
    CheckpointCost,
    expected_goodput,
    median_ratio,
    optimal_interval,
    simulate_goodput,
    theil_sen_slope,
    young_interval,
)

HOUR = 3600.0
CASES = [
    CheckpointCost(blocking_s=60, lag_s=0, recovery_s=300),  # synchronous saves (Daly)
    CheckpointCost(blocking_s=20, lag_s=200, recovery_s=300),  # async: durable 200 s later
    CheckpointCost(blocking_s=5, lag_s=900, recovery_s=120),  # write-bound: the lag sets the pace
]


@pytest.mark.parametrize("cost", CASES)
@pytest.mark.parametrize("interval", [300.0, 2000.0])
def test_expected_goodput_matches_a_direct_simulation(cost, interval):
  # 20,000 failures' worth of wall time: the simulated goodput's error is ~1e-3.
  simulated = simulate_goodput(interval, cost, HOUR, horizon_s=20_000 * HOUR, seed=1)
  assert expected_goodput(interval, cost, HOUR) == pytest.approx(simulated, abs=3e-3)


@pytest.mark.parametrize("cost", CASES)
def test_the_optimal_interval_beats_its_neighbours_in_simulation_too(cost):
  best = optimal_interval(cost, HOUR)
  at_best = expected_goodput(best, cost, HOUR)
  for factor in (0.5, 2.0):
    assert expected_goodput(best * factor, cost, HOUR) < at_best
  simulated = simulate_goodput(best, cost, HOUR, horizon_s=20_000 * HOUR, seed=2)
  assert simulated == pytest.approx(at_best, abs=3e-3)
  assert simulated > simulate_goodput(best * 3, cost, HOUR, horizon_s=20_000 * HOUR, seed=2)


def test_optimal_interval_is_close_to_young_when_saves_are_cheap():
  cost = CheckpointCost(blocking_s=2.0)
  assert optimal_interval(cost, 24 * HOUR) == pytest.approx(young_interval(2.0, 24 * HOUR), rel=0.01)


def test_lag_longer_than_the_optimum_sets_the_interval():
  assert optimal_interval(CASES[2], HOUR) == pytest.approx(900.0, rel=1e-4)


def test_goodput_without_recovery_is_refused_but_the_interval_is_not():
  cost = CheckpointCost(blocking_s=10.0)
  with pytest.raises(ValueError, match="recovery"):
    expected_goodput(600.0, cost, HOUR)
  assert optimal_interval(cost, HOUR) > 0


def test_an_unknown_lag_refuses_goodput_but_not_the_interval():
  unknown = CheckpointCost(blocking_s=10.0, lag_s=None, recovery_s=60.0)
  with pytest.raises(ValueError, match="lag"):
    expected_goodput(600.0, unknown, HOUR)
  assert optimal_interval(unknown, HOUR) == pytest.approx(optimal_interval(CheckpointCost(10.0, 30.0), HOUR))


def test_bad_costs_are_rejected():
  with pytest.raises(ValueError, match="blocking_s"):
    CheckpointCost(blocking_s=-1.0)
  with pytest.raises(ValueError, match="no optimal interval"):
    optimal_interval(CheckpointCost(blocking_s=0.0), HOUR)


def test_theil_sen_slope_ignores_one_spike():
  values = [100.0 + 2.0 * i for i in range(20)]
  values[7] += 500.0
  slope = theil_sen_slope(values)
  assert slope.per_step == pytest.approx(2.0)
  assert slope.low <= 2.0 <= slope.high and slope.n == 20


def test_median_ratio_has_an_interval_around_it():
  ratio, low, high = median_ratio([1.0, 1.1, 0.9, 1.0, 1.05], [1.5, 1.6, 1.4, 1.55, 1.5])
  assert ratio == pytest.approx(1.5)
  assert low <= ratio <= high
  assert median_ratio([0.0, 0.0], [1.0, 1.0]) == (None, None, None)
  assert not math.isnan(median_ratio([1.0], [2.0])[0])
