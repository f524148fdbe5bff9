"""Cross-host statistics: the per-host means, their spread, and the slowest host."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ckptbench.api._tags import is_rate_unit
from ckptbench.stats import host_statistics


def test_times_name_the_host_with_the_largest_mean():
  block = host_statistics({0: [1.0, 1.2], 1: [3.0, 2.0], 2: [0.5]})
  per_host = [1.1, 2.5, 0.5]
  assert block.n == 3
  assert block.per_host == {0: pytest.approx(1.1), 1: 2.5, 2: 0.5}
  assert block.min == 0.5 and block.max == 2.5
  assert block.mean == pytest.approx(np.mean(per_host))
  assert block.p50 == pytest.approx(1.1)
  assert block.p99 == pytest.approx(np.percentile(per_host, 99))
  assert block.std == pytest.approx(np.std(per_host, ddof=1))
  assert (block.slowest_host, block.slowest_value) == (1, 2.5)


def test_rates_name_the_host_with_the_smallest_value():
  block = host_statistics({0: [2.0], 1: [0.5], 2: [4.0]}, higher_is_better=True)
  assert (block.slowest_host, block.slowest_value) == (1, 0.5)


def test_ties_go_to_the_lowest_host_and_one_host_has_no_spread():
  assert host_statistics({3: [1.0], 1: [1.0]}).slowest_host == 1
  single = host_statistics({0: [2.0, 4.0]})
  assert (single.n, single.std, single.p99, single.slowest_host) == (1, 0.0, 3.0, 0)


def test_hosts_without_finite_samples_are_left_out():
  block = host_statistics({0: [], 1: [math.nan], 2: [1.0, math.inf], 3: [2.0]})
  assert block.per_host == {2: 1.0, 3: 2.0}
  assert host_statistics({0: [], 1: [math.nan]}) is None


def test_direction_follows_the_unit():
  assert is_rate_unit("GiB/s") and is_rate_unit("MiB/s")
  assert not any(is_rate_unit(u) for u in ("s", "GiB", "bytes", "count", "ratio"))
