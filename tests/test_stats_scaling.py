"""The scale model: growth laws planted in synthetic data are found, checked and extrapolated."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ckptbench.stats._scaling import (
    LAWS,
    TooFewHostCounts,
    check_largest,
    check_refusal,
    first_crossing,
    fit_law,
    predict,
    select_law,
    too_few_counts,
)
from ckptbench.stats._request_time import check_request_time, fit_request_time
from ckptbench.stats._store_model import PROFILES, StoreProfile, model_benchmark, store_time

HOSTS = [1, 2, 4, 8, 16, 32]
PLANTED = {
    "constant": lambda n: 7.0,
    "log": lambda n: 3.0 + 5.0 * math.log2(n),
    "linear": lambda n: 4.0 + 6.0 * n,
    "nlogn": lambda n: 2.0 + 0.5 * n * math.log2(n),
    "quadratic": lambda n: 90.0 * n + 3.0 * n * n,  # n hosts each reading 3 objects of every host
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


def test_a_law_is_chosen_only_from_three_host_counts_and_the_check_needs_three_below_the_largest():
  # The report: 15, 19, 27 PUTs (11 + 4n) at 1, 2, 4 hosts. From 2 counts leave-one-out
  # can score the constant law alone, which predicted 23 at 64 hosts where the line gives 267.
  with pytest.raises(TooFewHostCounts, match=r"needs 3 distinct host counts, got 2 \(2, 4\)"):
    select_law([2, 4], [19.0, 27.0])
  with pytest.raises(TooFewHostCounts, match=r"got 2 \(2, 4\)"):
    select_law([2, 2, 4], [19.0, 19.0, 27.0])  # repeats of a count are one count
  fit = select_law([1, 2, 4], [15.0, 19.0, 27.0], floor=1.0)
  assert (fit.law, fit.a, fit.b) == ("linear", 11.0, 4.0)
  p = predict(fit, 64)
  assert p.value == pytest.approx(267.0) and p.from_hosts == (1, 2, 4)
  assert check_largest([1, 2, 4], [15.0, 19.0, 27.0]) is None
  assert check_refusal([1, 2, 4]) == "predicting 4 hosts from the smaller counts needs 3 distinct host counts, got 2 (1, 2)"
  check = check_largest([1, 2, 4, 8], [15.0, 19.0, 27.0, 43.0], floor=1.0)
  assert (check.predicted, check.from_hosts, check.law) == (43.0, (1, 2, 4), "linear")
  assert check_refusal([1, 2, 4, 8]) is None and too_few_counts([1, 2, 4]) is None
  with pytest.raises(ValueError, match="linear law needs 2 distinct"):
    fit_law("linear", [4, 4], [1.0, 2.0])
  with pytest.raises(ValueError, match="possible values"):
    fit_law("cubic", [1, 2], [1.0, 2.0])


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("hosts", [(1, 2, 4), (2, 4, 8), (1, 2, 4, 8)])
def test_three_exact_counts_of_any_law_recover_it_and_predict_far_out(law, hosts):
  values = [round(PLANTED[law](n), 9) for n in hosts]
  fit = select_law(list(hosts), values, floor=1.0)
  assert fit.law == law and fit.hosts == hosts
  assert predict(fit, 64).value == pytest.approx(PLANTED[law](64), rel=1e-6)
  assert predict(fit, 64).from_hosts == hosts


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


def test_a_total_of_per_host_reads_of_every_host_is_quadratic_and_n_log_n_would_miss_it_far_out():
  hosts = [2, 4, 8, 16, 32]
  values = [PLANTED["quadratic"](n) for n in hosts]
  fit = select_law(hosts, values, floor=1.0)
  assert fit.law == "quadratic" and fit.formula == "a*n + b*n^2"
  assert predict(fit, 1024).value == pytest.approx(90 * 1024 + 3 * 1024**2)
  assert predict(fit, 1024).dominant == "quadratic" and set(fit.terms_at(4)) == {"linear", "quadratic"}
  nlogn = select_law(hosts, values, floor=1.0, laws=["nlogn"])
  assert nlogn.at(1024) < 0.5 * fit.at(1024)  # the look-alike law undershoots by more than half


def test_a_time_made_of_requests_is_predicted_from_its_count_and_the_latency_measured():
  # Planted: 0.05 s of own work plus 40 + 3n requests one after another, at a latency that jumps
  # at 16 hosts (the shared machine's contention), measured at every count.
  hosts = [2, 4, 8, 16]
  requests = [40 + 3 * n for n in hosts]
  latency = [0.004, 0.005, 0.007, 0.05]
  times = [0.05 + r * lat for r, lat in zip(requests, latency)]
  fit = fit_request_time(times, requests, latency)
  assert (fit.a, fit.b) == (pytest.approx(0.05), pytest.approx(1.0)) and fit.held_out_error == pytest.approx(0, abs=1e-9)
  check = check_request_time(hosts, times, requests, latency)
  assert check.hosts == 16 and check.relative_error == pytest.approx(0, abs=1e-9) and "linear" in check.law
  # A growth law in n fitted to the same times misses the largest count by far.
  assert check_largest(hosts, times, floor=1e-3).relative_error > 0.2
  assert check_request_time(hosts[:2], times[:2], requests[:2], latency[:2]) is None
  with pytest.raises(ValueError, match="at least 2 points"):
    fit_request_time([1.0], [3], [0.1])


def test_the_benchmark_model_predicts_the_commit_on_the_profiles_latency():
  hosts = [2, 4, 8, 16]
  series = {
      "primary_commit_distinct_requests": {n: 40.0 + 3 * n for n in hosts},
      "primary_commit_request_s": {n: (40 + 3 * n) * 0.002 * n for n in hosts},
      "primary_commit_s": {n: 0.05 + (40 + 3 * n) * 0.002 * n for n in hosts},
  }
  kinds = {"primary_commit_distinct_requests": "count", "primary_commit_request_s": "time", "primary_commit_s": "time"}
  model = model_benchmark(series, kinds, [1024], PROFILES["gcs"], save_interval_s=60, host_memory_mib=1e5, fit_from=2)
  assert model.commit.seconds[1024] == pytest.approx(0.05 + (40 + 3 * 1024) * 0.05)
  assert model.commit.from_hosts == (2, 4, 8, 16) and model.commit.check.from_hosts == (2, 4, 8)
  assert model.commit.check.relative_error == pytest.approx(0, abs=1e-9)
  # Each repeat's time with that repeat's latency (three repeats, latencies far apart): exact again.
  factors = (0.5, 1.0, 4.0)
  repeats = {"primary_commit_distinct_requests": {n: (40.0 + 3 * n,) * 3 for n in hosts},
             "primary_commit_request_s": {n: tuple((40 + 3 * n) * 0.002 * n * f for f in factors) for n in hosts},
             "primary_commit_s": {n: tuple(0.05 + (40 + 3 * n) * 0.002 * n * f for f in factors) for n in hosts}}  # fmt: skip
  paired = model_benchmark(series, kinds, [1024], PROFILES["gcs"], save_interval_s=60, host_memory_mib=1e5,
                           fit_from=2, repeats=repeats)  # fmt: skip
  assert (paired.commit.fit.a, paired.commit.fit.b) == (pytest.approx(0.05), pytest.approx(1.0))
  assert paired.commit.fit.held_out_error == pytest.approx(0, abs=1e-9)
  missing = model_benchmark({k: v for k, v in series.items() if k != "primary_commit_s"}, kinds, [1024],
                            PROFILES["gcs"], save_interval_s=60, host_memory_mib=1e5, fit_from=2)  # fmt: skip
  assert missing.commit is None


def test_a_commit_time_that_falls_as_its_requests_grow_gives_no_model_rather_than_a_negative_time():
  # CI's failure, planted: on a loaded machine the commit at 1 host took longer than at 4, so the
  # least-squares slope came out negative and the model predicted -0.56 s at 1,024 hosts.
  series = {
      "primary_commit_distinct_requests": {1: 15.0, 2: 22.0, 4: 30.0},
      "primary_commit_request_s": {1: 0.30, 2: 0.40, 4: 0.50},
      "primary_commit_s": {1: 0.9, 2: 0.6, 4: 0.4},
  }
  kinds = {"primary_commit_distinct_requests": "count", "primary_commit_request_s": "time", "primary_commit_s": "time"}
  model = model_benchmark(series, kinds, [1024], PROFILES["gcs"], save_interval_s=60, host_memory_mib=1e5)
  assert model.commit is None and "did not grow with its requests" in model.commit_refused
  assert set(model.metrics) == set(series)  # each metric keeps its own law


def test_the_restores_read_rate_counts_distinct_reads_where_the_link_counted_them():
  hosts = [2, 4, 8]
  series = {name: {n: 10.0 * n for n in hosts} for name in (
      "requests_put_total", "requests_delete_total", "requests_put_max_host", "array_bytes_written_max_host",
      "requests_list_total", "requests_list_max_host", "requests_get_max_host")}  # fmt: skip
  series["requests_get_total"] = {n: 5000.0 * n for n in hosts}  # polls included
  kinds = dict.fromkeys(series, "count")
  args = dict(save_interval_s=60, host_memory_mib=1e5, fit_from=2)
  everything = model_benchmark(series, kinds, [1000], PROFILES["gcs"], **args)
  assert everything.restore[1000].terms["read request rate"] == pytest.approx((5000 + 10) * 1000 / 5000)
  series["requests_get_distinct_total"] = {n: 90.0 * n for n in hosts}
  kinds["requests_get_distinct_total"] = "count"
  distinct = model_benchmark(series, kinds, [1000], PROFILES["gcs"], **args)
  assert distinct.restore[1000].terms["read request rate"] == pytest.approx((90 + 10) * 1000 / 5000)


def test_a_cross_host_metric_from_two_counts_gets_no_law_and_the_save_says_which_term_it_lacks():
  # 1, 2, 4 hosts: the PUTs are 11 + 4n from all three; the primary's extra requests exist from
  # 2 hosts on, so they have 2 counts: no law, no prediction, and the save's primary commit term is
  # left out, by name, rather than guessed.
  hosts = [1, 2, 4]
  series = {name: {n: 11.0 + 4 * n for n in hosts} for name in (
      "requests_put_total", "requests_delete_total", "requests_put_max_host", "array_bytes_written_max_host",
      "requests_get_total", "requests_list_total", "requests_get_max_host", "requests_list_max_host")}  # fmt: skip
  series["primary_extra_distinct_requests_save"] = {1: 0.0, 2: 28.0, 4: 38.0}
  kinds = dict.fromkeys(series, "count")
  model = model_benchmark(series, kinds, [64], PROFILES["gcs"], save_interval_s=60, host_memory_mib=1e5,
                          first_hosts={"primary_extra_distinct_requests_save": 2})  # fmt: skip
  put = model.metrics["requests_put_total"]
  assert put.predictions[0].value == pytest.approx(267.0) and put.predictions[0].from_hosts == (1, 2, 4)
  assert put.check is None and put.no_check.startswith("predicting 4 hosts from the smaller counts needs 3")
  assert "primary_extra_distinct_requests_save" not in model.metrics
  assert model.no_law == {"primary_extra_distinct_requests_save":
                          "a law from 2 hosts on needs 3 distinct host counts, got 2 (2, 4)"}
  assert "primary commit" not in model.save[64].terms
  assert model.left_out == {"primary commit": "primary_extra_distinct_requests_save: a law from 2 hosts on needs 3"
                                              " distinct host counts, got 2 (2, 4)"}
  # One more host count gives it a law (28 + 5(n-2) from 2, 4, 8), and the term is back.
  series = {name: {**points, 8: 11.0 + 4 * 8} for name, points in series.items()}
  series["primary_extra_distinct_requests_save"][8] = 58.0
  model = model_benchmark(series, kinds, [64], PROFILES["gcs"], save_interval_s=60, host_memory_mib=1e5,
                          first_hosts={"primary_extra_distinct_requests_save": 2})  # fmt: skip
  extra = model.metrics["primary_extra_distinct_requests_save"]
  assert extra.fit.hosts == (2, 4, 8) and extra.predictions[0].value == pytest.approx(18 + 5 * 64)
  assert model.save[64].terms["primary commit"] == pytest.approx((18 + 5 * 64) * 0.05)
  assert not model.no_law and not model.left_out
