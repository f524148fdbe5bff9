"""Comparison statistics: known samples give known verdicts."""

from __future__ import annotations

import math

import pytest

from ckptbench.stats import (
    Direction,
    Verdict,
    compare_samples,
    min_p_value,
    per_repeat_across_hosts,
)

BASE = [1.00, 1.02, 0.98, 1.01, 0.99]


def scaled(samples, factor):
  return [v * factor for v in samples]


def test_slower_time_is_a_regression_with_ratio_and_interval():
  c = compare_samples(BASE, scaled(BASE, 1.3), Direction.LOWER)
  assert c.verdict == Verdict.REGRESSED
  assert c.ratio == pytest.approx(1.3)
  assert c.ci_low <= 1.3 <= c.ci_high
  assert c.ci_low > 1.1
  assert c.p_value == pytest.approx(2 / 252)  # complete separation, exact
  assert (c.n_baseline, c.n_current) == (5, 5)


def test_faster_time_is_an_improvement():
  assert compare_samples(BASE, scaled(BASE, 0.7), Direction.LOWER).verdict == Verdict.IMPROVED


def test_lower_throughput_is_a_regression_and_higher_an_improvement():
  assert compare_samples(BASE, scaled(BASE, 0.8), Direction.HIGHER).verdict == Verdict.REGRESSED
  assert compare_samples(BASE, scaled(BASE, 1.25), Direction.HIGHER).verdict == Verdict.IMPROVED


def test_significant_but_small_change_is_unchanged():
  c = compare_samples(BASE, scaled(BASE, 1.05), Direction.LOWER)
  assert c.p_value < 0.01
  assert c.verdict == Verdict.UNCHANGED


def test_large_but_noisy_change_is_unchanged():
  noisy_base = [1.0, 2.0, 0.5, 3.0, 1.5]
  noisy_cur = [1.2, 2.5, 0.6, 3.3, 2.0]
  c = compare_samples(noisy_base, noisy_cur, Direction.LOWER)
  assert c.ratio > 1.1
  assert c.p_value > 0.01
  assert c.verdict == Verdict.UNCHANGED


def test_threshold_is_a_parameter():
  cur = scaled(BASE, 1.05)
  assert compare_samples(BASE, cur, Direction.LOWER, threshold=0.02).verdict == Verdict.REGRESSED


def test_ties_keep_the_exact_p_value():
  c = compare_samples([100.0] * 5, [130.0] * 5, Direction.LOWER)
  assert c.p_value == pytest.approx(2 / 252)
  assert c.verdict == Verdict.REGRESSED


def test_identical_samples_are_unchanged():
  c = compare_samples([2.0] * 5, [2.0] * 5, Direction.LOWER)
  assert (c.verdict, c.ratio, c.p_value) == (Verdict.UNCHANGED, 1.0, 1.0)


@pytest.mark.parametrize("n_base,n_cur", [(1, 1), (2, 2), (3, 3), (4, 4), (4, 5), (3, 8)])
def test_too_few_samples_to_reach_significance(n_base, n_cur):
  assert min_p_value(n_base, n_cur) >= 0.01
  c = compare_samples(scaled(BASE, 1)[:n_base] or [1.0], [3.0] * n_cur, Direction.LOWER)
  assert c.verdict == Verdict.NOT_ENOUGH_SAMPLES
  assert c.ratio is not None  # values are still shown


def test_a_single_tied_sample_is_not_enough():
  c = compare_samples([1.0], [1.0, 2.0, 1.0, 3.0, 1.0], Direction.LOWER)
  assert c.verdict == Verdict.NOT_ENOUGH_SAMPLES and 0 < c.p_value <= 1


def test_five_a_side_is_enough_and_empty_is_not():
  assert min_p_value(5, 5) < 0.01
  assert compare_samples([], [1.0], Direction.LOWER).verdict == Verdict.NOT_ENOUGH_SAMPLES


def test_neutral_metrics_are_shown_not_judged():
  c = compare_samples(BASE, scaled(BASE, 3.0), Direction.NEUTRAL)
  assert c.verdict == Verdict.NOT_JUDGED
  assert c.ratio == pytest.approx(3.0)
  assert (c.p_value, c.ci_low) == (None, None)


def test_zero_baseline_has_no_ratio_and_uses_the_absolute_floor():
  zeros, ones = [0.0] * 5, [1.0] * 5
  assert compare_samples(zeros, ones, Direction.LOWER).ratio is None
  assert compare_samples(zeros, ones, Direction.LOWER).verdict == Verdict.REGRESSED
  assert compare_samples(zeros, ones, Direction.LOWER, min_abs_change=2.0).verdict == Verdict.UNCHANGED


def test_bootstrap_is_seeded():
  cur = [1.3, 1.1, 1.6, 1.2, 1.4]
  a = compare_samples(BASE, cur, Direction.LOWER, seed=7)
  b = compare_samples(BASE, cur, Direction.LOWER, seed=7)
  assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)


@pytest.mark.parametrize("kwargs", [{"threshold": -0.1}, {"alpha": 0.0}, {"alpha": 1.5}])
def test_bad_parameters_name_the_argument(kwargs):
  with pytest.raises(ValueError, match=next(iter(kwargs))):
    compare_samples(BASE, BASE, Direction.LOWER, **kwargs)


def test_worst_host_per_repeat():
  by_host = {0: {0: 1.0, 1: 5.0}, 1: {0: 3.0, 1: 2.0, 2: 4.0}}
  assert per_repeat_across_hosts(by_host, Direction.LOWER) == [3.0, 5.0, 4.0]
  assert per_repeat_across_hosts(by_host, Direction.HIGHER) == [1.0, 2.0, 4.0]
  assert per_repeat_across_hosts(by_host, Direction.NEUTRAL) == [2.0, 3.5, 4.0]


@pytest.mark.parametrize(
    "base,cur", [([0.0, 0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0, 5.0]), ([0, 0, 0, 1.0, 1.0], [0, 0, 0, 1.0, 1.0])]
)
def test_resamples_with_a_zero_baseline_median_warn_nothing(recwarn, base, cur):
  c = compare_samples(base, cur, Direction.LOWER)
  assert c.ci_high is None or math.isfinite(c.ci_high)
  assert c.ci_low is None or c.ci_low <= (c.ratio or 1.0)
  assert not recwarn.list
