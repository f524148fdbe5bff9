"""The scale model: growth laws planted in synthetic data are found, checked and extrapolated."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ckptbench.stats._scaling import LAWS, check_largest, first_crossing, fit_law, predict, select_law
from ckptbench.stats._store_model import PROFILES, StoreProfile, store_time

HOSTS = [1, 2, 4, 8, 16, 32]
PLANTED = {
    "constant": lambda n: 7.0,
    "log": lambda n: 3.0 + 5.0 * math.log2(n),
    "linear": lambda n: 4.0 + 6.0 * n,
    "nlogn": lambda n: 2.0 + 0.5 * n * math.log2(n),
    "inverse": lambda n: 1.0 + 64.0 / n,
}


@pytest.mark.parametrize("law", LAWS)
def test_an_exact_planted_law_is_found_and_extrapolates_exactly(law):
  values = [PLANTED[law](n) for n in HOSTS]
  fit = select_law(HOSTS, values, floor=1.0)
  assert fit.law == law
  assert fit.held_out_error == pytest.approx(0.0, abs=1e-9)
  p = predict(fit, 1024)
  assert p.value == pytest.approx(PLANTED[law](1024))
  assert p.low == pytest.approx(p.value) and p.high == pytest.approx(p.value)
  check = check_largest(HOSTS, values, floor=1.0)
  assert check.law == law and check.relative_error == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("law", ["log", "linear", "nlogn"])
def test_a_noisy_planted_law_is_found_and_its_interval_holds_the_truth(law):
  rng = np.random.default_rng(0)
  hosts = [1, 2, 4, 8, 16, 32, 64]
  values = [PLANTED[law](n) * (1 + rng.normal(0, 0.03)) for n in hosts]
  fit = select_law(hosts, values)
  assert fit.law == law
  assert 0 < fit.held_out_error < 0.15
  p = predict(fit, 128)
  assert p.low < p.value < p.high
  assert p.low <= PLANTED[law](128) <= p.high
  assert check_largest(hosts, values).relative_error < 0.1


def test_a_constant_count_prefers_the_constant_law_and_names_its_term():
  fit = select_law([1, 2, 4, 8], [5, 5, 5, 5], floor=1.0)
  assert (fit.law, fit.a, fit.b) == ("constant", 5.0, 0.0)
  assert predict(fit, 4096).dominant == "constant"


def test_the_dominant_term_switches_where_growth_overtakes_the_constant():
  fit = select_law([1, 2, 4, 8], [1000 + 2 * n for n in (1, 2, 4, 8)], floor=1.0)
  assert fit.law == "linear"
  assert predict(fit, 16).dominant == "constant"
  assert predict(fit, 1024).dominant == "linear"


def test_check_needs_three_host_counts_and_fit_needs_distinct_ones():
  assert check_largest([1, 2], [3.0, 4.0]) is None
  with pytest.raises(ValueError, match="at least 2 host counts"):
    select_law([4], [1.0])
  with pytest.raises(ValueError, match="linear law needs 2 distinct"):
    fit_law("linear", [4, 4], [1.0, 2.0])
  with pytest.raises(ValueError, match="possible values"):
    fit_law("cubic", [1, 2], [1.0, 2.0])
  # With two points only the constant law can be held out: it is chosen, honestly imprecise.
  assert select_law([1, 2], [3.0, 5.0]).law == "constant"


def test_first_crossing_is_the_smallest_host_count_at_the_limit():
  assert first_crossing(lambda n: 3.0 * n, 3000.0) == 1000
  assert first_crossing(lambda n: 3.0 * n, 1.0) == 1
  assert first_crossing(lambda n: 5.0, 6.0) is None
  n = first_crossing(lambda n: n * math.log2(n), 10_000.0, stop=2048)
  assert n * math.log2(n) >= 10_000.0 > (n - 1) * math.log2(n - 1)
  assert first_crossing(lambda n: n * math.log2(n), 10_000.0, stop=512) is None


def test_store_time_names_the_largest_term():
  gcs = PROFILES["gcs"]
  # Few requests, many per host: the round trips of the busiest host dominate.
  t = store_time(gcs, total_requests=100, busiest_host_requests=3200, busiest_host_bytes=0, writes=True)
  assert t.dominant == "request latency" and t.seconds == pytest.approx(3200 * 0.05 / 32)
  # The bucket's write rate: 50,000 writes at 1000/s.
  t = store_time(gcs, total_requests=50_000, busiest_host_requests=50, busiest_host_bytes=0, writes=True)
  assert t.dominant == "write request rate" and t.seconds == pytest.approx(50.0)
  # Reads use the read rate; the primary's extra requests, one round trip each, win when largest.
  t = store_time(gcs, total_requests=50_000, busiest_host_requests=50, busiest_host_bytes=0, writes=False,
                 primary_round_trips=600)  # fmt: skip
  assert t.terms["read request rate"] == pytest.approx(10.0) and t.dominant == "primary commit"
  assert t.seconds == pytest.approx(600 * 0.05)
  slow_nic = StoreProfile("x", 0.01, None, None, host_bandwidth_bps=1e9)
  t = store_time(slow_nic, total_requests=10, busiest_host_requests=10, busiest_host_bytes=5e9, writes=True)
  assert t.dominant == "host bandwidth" and t.seconds == pytest.approx(5.0)
  assert set(t.terms) == {"request latency", "host bandwidth"}
