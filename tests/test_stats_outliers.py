"""Outlying repeats (modified z-score) and the distribution-free interval of the median."""

from __future__ import annotations

import random

import pytest

from ckptbench.stats._interval import median_interval, ratio_interval
from ckptbench.stats._outliers import modified_z_scores, outlier_indices, outlier_threshold


def test_the_quickstarts_slow_first_repeat_is_an_outlier_and_the_others_are_not():
  assert outlier_indices([2.43, 1.05, 1.06]) == [0]
  assert outlier_indices([1.3, 1.05, 1.15]) == []  # three noisy repeats: no gap to speak of
  assert outlier_indices([2.43, 1.05, 1.06, 1.04, 1.07]) == [0]
  assert outlier_indices([1.05, 1.06, 1.04, 1.07, 1.05]) == []


def test_too_few_or_equal_samples_flag_nothing():
  assert outlier_indices([1.0, 9.0]) == []
  assert outlier_indices([2.0, 2.0, 2.0, 2.0]) == []
  # More than half equal: the mean absolute deviation stands in for a zero MAD.
  assert outlier_indices([2.0] * 14 + [9.0]) == [14]
  assert outlier_threshold(2) == float("inf")


@pytest.mark.parametrize("n", [3, 5, 10, 20])
def test_about_one_normal_sample_in_a_hundred_is_flagged(n):
  rng = random.Random(n)
  flagged = sum(len(outlier_indices([rng.gauss(1.0, 0.05) for _ in range(n)])) for _ in range(4000))
  assert flagged / (4000 * n) < 0.02


def test_z_scores_keep_nan_in_place():
  z = modified_z_scores([1.0, float("nan"), 1.1, 5.0])
  assert z[1] == 0.0 and abs(z[3]) > 3.5


@pytest.mark.parametrize(("n", "coverage"), [(3, 0.75), (5, 0.9375)])
def test_few_samples_give_the_range_with_its_real_coverage(n, coverage):
  m = median_interval(list(range(n)))
  assert (m.low, m.high) == (0, n - 1) and m.coverage == pytest.approx(coverage)


def test_enough_samples_give_a_95_percent_interval_inside_the_range():
  m = median_interval(list(range(20)))
  assert m.coverage >= 0.95 and 0 < m.low < m.median < m.high < 19
  assert median_interval([float("nan")]) is None


def test_a_ratio_interval_is_the_median_interval_of_the_pairwise_ratios():
  m = ratio_interval([1.0, 1.0, 1.0, 2.0], [2.0, 4.0, 1.0, 0.0])  # a zero denominator drops its pair
  assert (m.median, m.low, m.high, m.n) == (0.5, 0.25, 1.0, 3)
  with pytest.raises(ValueError, match="needs pairs"):
    ratio_interval([1.0], [1.0, 2.0])
