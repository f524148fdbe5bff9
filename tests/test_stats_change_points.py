"""Change points on planted series: a step, a drift, an outlier, and A/A series with none; the
scan test's critical values; runs judged on arrival. The rates over 1,000 series per case are in
tests/test_history.py (through the history and its gate) and benchmarks/history_gate_rates.py."""

from __future__ import annotations

import numpy as np
import pytest

from ckptbench.stats import (
    MIN_REFERENCE_RUNS,
    SCAN_ALPHA,
    Direction,
    arrival_tests,
    change_points,
    level_changes,
    run_levels,
)
from ckptbench.stats._change_points import EDGE_ALPHA, MIN_RUNS, largest_split_t, scan_critical_values, segment_ratio
from ckptbench.stats._scan_table import CRITICAL


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


def test_a_step_with_three_runs_after_it_is_confirmed_most_often():
  """Shuffling runs could not go below 1/286 with 3 of 13 runs after a step; the scan test's
  critical values have no such floor. 12 series here (tests/test_history.py measures 1,000)."""
  found = 0
  for seed in range(12):
    rng = np.random.default_rng(seed)
    levels = _between(13, rng) * np.array([1.0] * 10 + [1.5] * 3)
    changes = change_points(_runs(levels, rng), Direction.LOWER)
    found += any(c.worse and c.index in (9, 10) and c.low > 1.0 for c in changes)
  assert found >= 9


@pytest.mark.parametrize("runs", [4, 13, 40])
def test_the_stored_critical_values_are_what_fresh_normal_series_exceed_at_the_alphas(runs):
  rng = np.random.default_rng(2026 + runs)  # not the seeds the table was drawn with
  stats = largest_split_t(rng.standard_normal((40_000, runs)), MIN_RUNS)
  scan, edge = CRITICAL[runs]
  assert scan_critical_values(runs) == (scan, edge)
  # 80 and 2,000 draws expected beyond them; binomial spreads of 9 and 44.
  assert abs(np.sum(stats > scan) - 40_000 * SCAN_ALPHA) < 4 * np.sqrt(40_000 * SCAN_ALPHA)
  assert abs(np.sum(stats > edge) - 40_000 * EDGE_ALPHA) < 4 * np.sqrt(40_000 * EDGE_ALPHA)


@pytest.mark.parametrize("group, reference", [(1, 5), (1, 20), (3, 5), (3, 20)])
@pytest.mark.parametrize("heavy", [False, True])
def test_each_arrival_test_flags_at_most_its_share_of_runs_normal_or_heavy_tailed(group, reference, heavy):
  """The stored critical values (stats/_arrival_table.py) against fresh series (not the table's seeds):
  the run alone against the reference's mean, or the median of the newest three against the
  reference's median, in units of the reference's spread; at most the test's share of a side
  (GROUP_ALPHAS) beyond each."""
  from ckptbench.stats import GROUP_ALPHAS
  from ckptbench.stats._arrival_table import CRITICAL, FIRST_REFERENCE

  rng = np.random.default_rng(7 + 2 * reference + group + 100 * heavy)
  draws = 200_000
  x = rng.standard_t(3, (draws, reference + group)) if heavy else rng.standard_normal((draws, reference + group))
  ref, new = x[:, :reference], x[:, reference:]
  s = ref.std(1, ddof=1)
  if group == 1:
    stat = (new[:, 0] - ref.mean(1)) / (s * np.sqrt(1 + 1 / reference))
  else:
    stat = (np.median(new, 1) - np.median(ref, 1)) / s
  expected = draws * GROUP_ALPHAS[group]  # 1,000 the run alone, 200 the three; binomial spreads of 32 and 14
  assert np.sum(stat > CRITICAL[group][reference - FIRST_REFERENCE]) < expected + 4 * np.sqrt(expected)


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


# -- runs judged on arrival
def _levels(medians):
  x = np.log(np.asarray(medians, dtype=float))
  return x, np.zeros(len(x))


def _each_run(x, w, changes=(), direction=Direction.LOWER):
  """Every run's test, as it was when the run arrived (the newest of the series up to it)."""
  return {j: t for j in range(len(x)) if (t := arrival_tests(x[: j + 1], w[: j + 1], [c for c in changes if c <= j], direction).newest)}


def test_a_run_is_judged_against_the_runs_of_its_segment_once_there_are_enough():
  x, w = _levels([1.0, 1.03, 0.97, 1.01, 0.99, 1.02, 1.5])
  tests = _each_run(x, w)
  assert sorted(tests) == list(range(MIN_REFERENCE_RUNS, 7))  # the first runs have too few before them
  assert [tests[j].worse for j in sorted(tests)] == [False, False, False, True]
  found = arrival_tests(x, w, [], Direction.LOWER)
  assert found.flagged == (found.newest,) and found.newest == tests[6]
  assert found.newest.reference_runs == 6 and 1.45 < found.newest.ratio < 1.55 and found.newest.low > 1.0
  # Throughput: a drop is worse, a rise is not.
  assert arrival_tests(-x, w, [], Direction.HIGHER).newest.worse
  assert not arrival_tests(x, w, [], Direction.HIGHER).newest.worse
  assert not arrival_tests(x, w, [], Direction.NEUTRAL).newest.worse


def test_a_run_within_the_threshold_or_as_noisy_as_its_segment_is_not_flagged():
  x, w = _levels([1.0, 1.001, 0.999, 1.0, 1.0005, 1.05])
  assert not arrival_tests(x, w, [], Direction.LOWER).newest.worse  # far outside the runs' spread, but 5%
  assert arrival_tests(x, w, [], Direction.LOWER, threshold=0.02).newest.worse
  # The same 1.3x step brought by a run whose own samples spread 40%: its median says little.
  x, w = _levels([1.0, 1.02, 0.98, 1.01, 0.99, 1.3])
  assert arrival_tests(x, w, [], Direction.LOWER).newest.worse
  noisy = np.array([0.0] * 5 + [np.pi / 2 * 0.4**2 / 5])
  assert not arrival_tests(x, noisy, [], Direction.LOWER).newest.worse


def test_memory_moves_below_the_absolute_floor_are_neither_flagged_nor_changes():
  """Peak memory added sits near zero: 0.13 -> 0.20 MiB is 1.5x, and nothing (the verdicts' 8 MiB floor)."""
  mib = [0.13, 0.131, 0.129, 0.13, 0.1305, 0.1295] * 2
  x, w = _levels(mib + [0.2])
  assert arrival_tests(x, w, [], Direction.LOWER).newest.worse
  assert not arrival_tests(x, w, [], Direction.LOWER, floor=8.0).newest.worse
  runs = [[v] for v in mib + [0.2] * 6]
  assert [c.index for c in level_changes(np.log([r[0] for r in runs]), Direction.LOWER)] == [12]
  assert level_changes(np.log([r[0] for r in runs]), Direction.LOWER, floor=8.0) == []


def test_a_flagged_run_stays_out_of_the_reference_while_pending_and_a_step_keeps_failing():
  x, w = _levels([1.0, 1.04, 0.96, 1.02, 0.98, 1.01, 0.99, 1.5, 1.5, 1.5, 1.5, 1.5])
  tests = _each_run(x, w)
  # Each run of the step is judged against the seven before it, not the flagged runs of the step.
  assert [(tests[j].worse, tests[j].reference_runs) for j in (7, 8, 9, 10)] == [(True, 7)] * 4
  assert [t.index for t in arrival_tests(x, w, [], Direction.LOWER).flagged][:4] == [7, 8, 9, 10]
  # Once confirmed, the step is a segment: its first run judged against the runs before it, the
  # next ones against the new level (too few runs yet, then not worse).
  tests = _each_run(x, w, changes=[7])
  assert tests[7].worse and tests[7].reference_runs == 7
  assert 8 not in tests and 9 not in tests and not tests[10].worse and tests[10].reference_runs == 3


def test_an_odd_run_flagged_on_arrival_rejoins_the_reference_once_no_longer_pending():
  x, w = _levels([1.0, 1.04, 0.96, 1.02, 0.98, 1.6, 1.01, 0.99, 1.0, 1.02])
  tests = _each_run(x, w)
  assert tests[5].worse and not any(tests[j].worse for j in range(6, 10))
  assert [tests[j].reference_runs for j in (6, 7, 8, 9)] == [5, 6, 7, 9]
  assert [t.index for t in arrival_tests(x, w, [], Direction.LOWER).flagged] == [5]


def test_run_levels_are_log_medians_and_the_variance_of_each_median():
  x, w = run_levels([[1.0, 2.0, 4.0], [3.0], [2.0, 2.0]])
  assert np.allclose(x, np.log([2.0, 3.0, 2.0]))
  assert np.isclose(w[0], np.pi / 2 * np.var(np.log([1.0, 2.0, 4.0]), ddof=1) / 3) and w[1] == 0.0 and w[2] == 0.0
  x, w = run_levels([[1.0, 2.0], [0.0, 1.0]])
  assert np.isfinite(x[0]) and not np.isfinite(w[1])  # a sample at zero: not a ratio
