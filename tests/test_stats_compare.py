"""The four-word rule: planted samples give known verdicts (pure, fast)."""

from __future__ import annotations

import math
import random
import statistics

import pytest
import scipy.stats

from ckptbench.stats import AUTO_LOOKS, Decision, Design, Direction, Verdict, compare_samples, decide
from ckptbench.stats import per_repeat_across_hosts
from ckptbench.stats._decide import min_rounds, _rank_sum_cdf, _signed_rank_cdf, effect_interval

BASE = [1.00, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1.00, 1.01, 0.99]


def scaled(samples, factor):
  return [v * factor for v in samples]


def noisy(rng, n, factor=1.0, spread=0.03):
  return [factor * math.exp(rng.gauss(0, spread)) for _ in range(n)]


def test_a_planted_slowdown_beyond_the_threshold_is_worse_with_its_interval():
  d = decide(BASE, scaled(BASE, 1.3), Direction.LOWER, paired=True)
  assert d.verdict == Verdict.WORSE
  assert d.ratio == pytest.approx(1.3) and d.low <= 1.3 <= d.high and d.low > 1
  assert (d.n, d.paired, d.level, d.repeats_needed) == (10, True, 0.95, None)


def test_faster_is_better_and_throughput_reads_the_other_way():
  assert decide(BASE, scaled(BASE, 0.7), Direction.LOWER, paired=True).verdict == Verdict.BETTER
  assert decide(BASE, scaled(BASE, 0.7), Direction.HIGHER, paired=True).verdict == Verdict.WORSE
  assert decide(BASE, scaled(BASE, 1.3), Direction.HIGHER, paired=False).verdict == Verdict.BETTER


def test_the_same_samples_are_equivalent():
  rng = random.Random(1)
  a, b = noisy(rng, 20), noisy(rng, 20)
  d = decide(a, b, Direction.LOWER, paired=True)
  assert d.verdict == Verdict.EQUIVALENT
  assert 1 / 1.1 <= d.low <= d.high <= 1.1


def test_a_small_real_change_inside_the_threshold_is_equivalent_not_worse():
  # 4% slower, clearly different from 1 yet within +-10%: as asv, a change this small is no regression.
  d = decide(BASE, scaled(BASE, 1.04), Direction.LOWER, paired=True)
  assert d.verdict == Verdict.EQUIVALENT and d.low > 1


def test_a_change_near_the_threshold_is_inconclusive_and_says_how_many_repeats_would_decide():
  rng = random.Random(2)
  ref = noisy(rng, 10, spread=0.15)
  cur = [v * f for v, f in zip(ref, noisy(rng, 10, 1.1, spread=0.15))]
  d = decide(ref, cur, Direction.LOWER, paired=True)
  assert d.verdict == Verdict.INCONCLUSIVE
  assert d.repeats_needed > 10


def test_too_few_repeats_bound_no_interval_and_are_inconclusive():
  d = decide([1.0, 1.1, 0.9], [3.0, 3.1, 2.9], Direction.LOWER, paired=True)
  assert d.verdict == Verdict.INCONCLUSIVE and (d.low, d.high) == (None, None)
  assert d.ratio == pytest.approx(3.0, rel=0.01) and d.repeats_needed == 6  # the fewest rounds a 95% interval needs


def test_early_looks_spend_a_tenth_of_alpha_and_the_last_the_rest():
  rng = random.Random(3)
  a, b = noisy(rng, 27, spread=0.1), noisy(rng, 27, spread=0.1)
  early, last = Design(early_looks=2, last=False), Design(early_looks=5, last=True)
  assert early.level == pytest.approx(1 - 0.0025) and last.level == pytest.approx(1 - (0.05 - 5 * 0.0025))
  assert Design().level == pytest.approx(0.95)  # a fixed repeat count: one look
  # Over any run, the looks never spend more than alpha: 7 early looks (the most) and the last.
  assert 7 * early.spent + Design(early_looks=7).spent == pytest.approx(0.05)
  one, narrow, wide = (decide(a, b, Direction.LOWER, paired=True, design=d) for d in (Design(), last, early))
  assert wide.low <= narrow.low <= one.low and one.high <= narrow.high <= wide.high
  assert "spent over 6 looks" in last.rule(0.1, paired=True) and "looks" not in Design().rule(0.1, paired=True)


def test_memory_near_zero_is_judged_on_the_absolute_floor():
  # 0-3 MiB added either way: within the 8 MiB floor, equivalent; no ratio of tiny numbers.
  ref = [0.0, 1.0, 2.0, 0.5, 1.5, 0.0, 3.0, 1.0, 2.0, 0.0]
  cur = [1.0, 0.0, 2.5, 1.0, 0.5, 2.0, 1.0, 0.0, 3.0, 1.0]
  d = decide(ref, cur, Direction.LOWER, paired=True, floor=8.0)
  assert d.verdict == Verdict.EQUIVALENT and d.ratio is None
  grown = decide(ref, [v + 100 for v in cur], Direction.LOWER, paired=True, floor=8.0)
  assert grown.verdict == Verdict.WORSE


def test_neutral_metrics_are_not_judged():
  d = decide(BASE, scaled(BASE, 3.0), Direction.NEUTRAL, paired=False)
  assert d.verdict == Verdict.NOT_JUDGED and d.ratio == pytest.approx(3.0)


def test_paired_samples_must_match_and_threshold_must_be_positive():
  with pytest.raises(ValueError, match="one value per round"):
    decide([1.0, 2.0], [1.0], Direction.LOWER, paired=True)
  with pytest.raises(ValueError, match="threshold"):
    decide(BASE, BASE, Direction.LOWER, paired=False, threshold=-0.1)


def test_pairing_cancels_drift_that_leaves_two_samples_undecided():
  rng = random.Random(4)
  drift = [math.exp(rng.gauss(0, 0.4)) for _ in range(12)]  # each round's machine state, shared by both
  ref = [d * math.exp(rng.gauss(0, 0.02)) for d in drift]
  cur = [1.2 * d * math.exp(rng.gauss(0, 0.02)) for d in drift]
  assert decide(ref, cur, Direction.LOWER, paired=True).verdict == Verdict.WORSE
  assert decide(ref, cur, Direction.LOWER, paired=False).verdict == Verdict.INCONCLUSIVE


def test_exact_null_distributions_match_scipy():
  assert _signed_rank_cdf(8)[3] == pytest.approx(5 / 256)  # rank sums <= 3: {}, {1}, {2}, {3}, {1, 2}
  u = 7
  expected = scipy.stats.mannwhitneyu([1, 2, 3, 4, 5], [6, 7, 8, 9, 10], method="exact").pvalue
  assert _rank_sum_cdf(5, 5)[0] * 2 == pytest.approx(expected)
  assert _rank_sum_cdf(4, 6)[u] == pytest.approx(sum(_counts_u(4, 6, k) for k in range(u + 1)) / math.comb(10, 4))


def _counts_u(m, n, u):
  """The number of ways to reach U = u, by brute force."""
  import itertools  # noqa: PLC0415

  return sum(
      1 for picks in itertools.combinations(range(m + n), m)
      if sum(1 for i in picks for j in set(range(m + n)) - set(picks) if j < i) == u
  )  # fmt: skip


def test_effect_interval_is_hodges_lehmann():
  estimate, low, high = effect_interval([0.0] * 9, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], True, 0.9)
  assert estimate == 5.0 and low < 5.0 < high


def test_compare_samples_is_the_unpaired_rule_for_baselines():
  c = compare_samples(BASE, scaled(BASE, 1.3), Direction.LOWER)
  assert c.verdict == Verdict.WORSE and c.ratio == pytest.approx(1.3, rel=0.02)
  assert (c.n_baseline, c.n_current) == (10, 10)
  assert compare_samples([], [1.0], Direction.LOWER).verdict == Verdict.INCONCLUSIVE


def test_zero_baseline_has_no_ratio_and_uses_the_absolute_floor():
  zeros, ones = [0.0] * 8, [1.0] * 8
  assert compare_samples(zeros, ones, Direction.LOWER).ratio is None
  assert compare_samples(zeros, ones, Direction.LOWER, min_abs_change=2.0).verdict == Verdict.EQUIVALENT


def test_worst_host_per_repeat():
  by_host = {0: {0: 1.0, 1: 5.0}, 1: {0: 3.0, 1: 2.0, 2: 4.0}}
  assert per_repeat_across_hosts(by_host, Direction.LOWER) == [3.0, 5.0, 4.0]
  assert per_repeat_across_hosts(by_host, Direction.HIGHER) == [1.0, 2.0, 4.0]
  assert per_repeat_across_hosts(by_host, Direction.NEUTRAL) == [2.0, 3.5, 4.0]


def test_repeats_needed_is_the_fewest_that_could_decide():
  # Beyond the threshold the way out is worse / better: the two-sided interval has to shed no change.
  rng = random.Random(8)
  a = noisy(rng, 12, spread=0.3)
  b = [v * math.exp(rng.gauss(0, 0.3)) for v in a]
  far = decide(a, b, Direction.LOWER, paired=True)
  assert far.verdict == Verdict.INCONCLUSIVE and far.ratio > 1.1 and far.level == Design().level
  half = (math.log(far.high) - math.log(far.low)) / 2
  assert far.repeats_needed == max(13, math.ceil(12 * (half / math.log(far.ratio)) ** 2))
  # Near no change it is equivalence: its (narrower) interval has to fit in +-10%.
  logs = _symmetric_logs(12, 0.3)
  near = decide([1.0] * 12, [math.exp(x) for x in logs], Direction.LOWER, paired=True)
  assert near.verdict == Verdict.INCONCLUSIVE and near.ratio == pytest.approx(1.0)
  _, low, high = effect_interval([0.0] * 12, logs, True, Design().equivalence_level)
  assert high - low < math.log(near.high) - math.log(near.low)
  assert near.repeats_needed == max(13, math.ceil(12 * ((high - low) / 2 / math.log1p(0.1)) ** 2))


def test_an_aa_simulation_calls_no_difference_and_an_ab_one_finds_it():
  """Heavy-tailed noise (1 in 10 repeats 1.8x slow), 27 rounds at the level of a last look after three early ones."""
  rng = random.Random(5)
  design = Design(early_looks=3, last=True)

  def trial(factor):
    drift = [math.exp(rng.gauss(0, 0.3)) for _ in range(27)]
    a = [d * math.exp(rng.gauss(0, 0.05)) * (1.8 if rng.random() < 0.1 else 1) for d in drift]
    b = [factor * d * math.exp(rng.gauss(0, 0.05)) * (1.8 if rng.random() < 0.1 else 1) for d in drift]
    return decide(a, b, Direction.LOWER, paired=True, design=design).verdict

  aa = [trial(1.0) for _ in range(100)]
  ab = [trial(1.2) for _ in range(100)]
  assert aa.count(Verdict.WORSE) + aa.count(Verdict.BETTER) <= 1
  assert ab.count(Verdict.WORSE) >= 70 and ab.count(Verdict.BETTER) == 0
  assert isinstance(decide([1.0], [1.0], Direction.LOWER, paired=True), Decision)


def _symmetric_logs(n, spread):
  """n per-round log ratios at the normal's quantiles: no change, a spread of `spread`."""
  normal = statistics.NormalDist()
  return [spread * normal.inv_cdf((i + 0.5) / n) for i in range(n)]


def test_equivalence_is_two_one_sided_tests_on_the_narrower_interval():
  """TOST: equivalent when the 1 - 2 alpha interval lies within +-10%; the 1 - alpha one (the old rule) did not."""
  logs = _symmetric_logs(20, 0.2)
  margin = math.log1p(0.1)
  _, low, high = effect_interval([0.0] * 20, logs, True, Design().level)  # 95%
  assert low < -margin and high > margin  # the 95% interval reaches past +-10%: the old rule said inconclusive
  d = decide([1.0] * 20, [math.exp(x) for x in logs], Direction.LOWER, paired=True)
  assert d.verdict == Verdict.EQUIVALENT and d.level == pytest.approx(0.90)
  assert Design().equivalence_level == pytest.approx(0.90)
  _, eq_low, eq_high = effect_interval([0.0] * 20, logs, True, 0.90)
  assert (d.low, d.high) == pytest.approx((math.exp(eq_low), math.exp(eq_high)))  # the interval it was decided on
  assert 1 / 1.1 < d.low < 1 < d.high < 1.1
  assert "equivalent: the 90.00% interval (two one-sided tests at 5% each)" in Design().rule(0.1, paired=True)
  early = Design(last=False).rule(0.1, True)  # an early look: Pocock-type, a twelfth of alpha each test
  assert "equivalent: the 99.17% interval (two one-sided tests at 0.4167% each)" in early
  assert "the 99.75% one otherwise" in early


def test_worse_and_better_keep_the_two_sided_interval():
  rng = random.Random(11)
  design = Design(early_looks=4, last=True)
  for factor in (0.6, 1.5):
    ref = noisy(rng, 30, spread=0.2)
    cur = [factor * v * math.exp(rng.gauss(0, 0.2)) for v in ref]
    d = decide(ref, cur, Direction.LOWER, paired=True, design=design)
    assert d.verdict == (Verdict.BETTER if factor < 1 else Verdict.WORSE) and d.level == pytest.approx(design.level)
    _, low, high = effect_interval([math.log(v) for v in ref], [math.log(v) for v in cur], True, design.level)
    assert (d.low, d.high) == pytest.approx((math.exp(low), math.exp(high)))


def _false_equivalence_rate(trials, looks, rng):
  """Runs stopped at their first decided look, the true ratio exactly 1.1 (the bound): the share
  called equivalent (a false claim) and the share called better (the wrong way)."""
  equivalent = better = 0
  for _ in range(trials):
    logs = [math.log1p(0.1) + rng.gauss(0, 0.05) for _ in range(looks[-1])]
    for i, n in enumerate(looks):
      design = Design(early_looks=i, last=n == looks[-1])
      d = decide([1.0] * n, [math.exp(x) for x in logs[:n]], Direction.LOWER, paired=True, design=design)
      if d.verdict.decided:
        equivalent, better = equivalent + (d.verdict == Verdict.EQUIVALENT), better + (d.verdict == Verdict.BETTER)
        break
  return equivalent / trials, better / trials


def test_at_the_true_bound_equivalence_is_claimed_at_most_alpha_of_the_time():
  """Simulated comparisons whose true ratio is exactly 1.1: a false `equivalent` in at most 5% (a tolerance
  of 3 binomial standard deviations), at one look (2000 runs) or at the looks of auto repeats (1000)."""
  rng = random.Random(21)
  one_look, better = _false_equivalence_rate(2000, (20,), rng)
  assert one_look <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000) and better == 0
  assert one_look >= 0.03  # the test uses its alpha: the old 95% interval's ends erred half as often
  looks = tuple(n for n in AUTO_LOOKS if n < 40) + (40,)  # four early looks, the budget's last at 40 rounds
  sequential, better = _false_equivalence_rate(1000, looks, rng)
  assert sequential <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 1000) and better == 0


def test_auto_looks_spend_alpha_exactly_in_both_tests():
  """However many early looks the clock allows (at most all but the cap), each test's error rates sum to alpha,
  and so do the rates of any wrong verdict: the equivalence interval is never wider than the two-sided one
  (its one-sided rate at least half the two-sided rate, at every look, the last after eight early ones
  included), and the first look can bound both."""
  for early in range(len(AUTO_LOOKS)):
    looks = [Design(early_looks=i, last=False) for i in range(early)] + [Design(early_looks=early, last=True)]
    assert sum(d.spent for d in looks) == pytest.approx(0.05)
    assert sum(d.equivalence_spent for d in looks) == pytest.approx(0.05)
    assert all(d.equivalence_level <= d.level and d.equivalence_spent >= d.spent / 2 for d in looks)
    # A wrong verdict needs an interval's end on the wrong side of the truth: on either side the
    # two intervals of a look err with the larger of their rates, alpha_k / 2 or beta_k; summed, alpha.
    assert sum(max(d.spent / 2, d.equivalence_spent) for d in looks) == pytest.approx(0.05)
  early = Design(early_looks=3, last=False)  # Pocock-type equivalence: the same level at every early look
  assert early.level == pytest.approx(0.9975) and early.equivalence_level == pytest.approx(1 - 0.05 / 6)
  last = Design(early_looks=7, last=True)
  assert last.level == pytest.approx(0.9675) and last.equivalence_level == pytest.approx(1 - 2 * 0.05 * 5 / 12)
  first = Design(early_looks=0, last=False)
  assert min_rounds(first.spent, paired=True) <= AUTO_LOOKS[0]
  assert min_rounds(2 * first.equivalence_spent, paired=True) <= AUTO_LOOKS[0]


def test_an_early_look_counts_the_repeats_needed_at_the_levels_of_the_last_look_to_come():
  """Futility asks whether the budget could decide: at the most lenient look still ahead (the next as the
  last), not at the early look's own strict level (at 10 rounds that interval is the whole range)."""
  early = Design(early_looks=2, last=False)
  assert early.ahead() == Design(early_looks=3, last=True) and Design(early_looks=3).ahead() == Design(early_looks=3)
  logs = _symmetric_logs(10, 0.3)
  d = decide([1.0] * 10, [math.exp(x) for x in logs], Direction.LOWER, paired=True, design=early)
  assert d.verdict == Verdict.INCONCLUSIVE and d.level == pytest.approx(early.level)  # its own level, reported
  _, low, high = effect_interval([0.0] * 10, logs, True, early.ahead().equivalence_level)
  assert d.repeats_needed == math.ceil(10 * ((high - low) / 2 / math.log1p(0.1)) ** 2)
  _, strict_low, strict_high = effect_interval([0.0] * 10, logs, True, early.equivalence_level)
  assert d.repeats_needed < 0.5 * 10 * ((strict_high - strict_low) / 2 / math.log1p(0.1)) ** 2
