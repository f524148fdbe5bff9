"""The memory pass's rule (stats/_settled.py): readings until the figure is precise, and Welch's verdict on two."""

from __future__ import annotations

import numpy as np
import pytest

import ckptbench
from ckptbench.analysis import sweep_verdicts
from ckptbench.api import MetricEntry, Verdict
from ckptbench.stats import Direction, decide_settled, figure_error, readings_settled

PEAK = "save_7_memory/host_rss_peak_diff_mib"


@pytest.mark.parametrize("readings, settled", [
    ([], False), ([106.0], False),
    ([105.9, 105.8], False),  # two alike are not enough: the pair agreeing may be chance
    ([105.9, 105.8, 106.0], True),  # the OCDBT save: flat
    ([117.7, 105.9, 105.8], False),  # a high first reading: the figure is +-12 MiB
    ([175.9, 183.1, 179.0], False),  # a load 4% apart: three give +-6 MiB, more than 2.5% (4.5 MiB)
    ([175.9, 183.1, 179.0, 178.2], True),  # a fourth: +-3.5 MiB
    ([38.3, 45.6, 54.8], False),  # a save that moves by 7-9 MiB
    ([1.16, 1.72, 0.99], True),  # a 1 MiB save: within 2 MiB
])  # fmt: skip
def test_a_figure_settles_once_its_error_is_within_2_5_percent_or_2_mib(readings, settled):
  assert readings_settled(readings) is settled


def test_a_smaller_least_lets_two_readings_that_agree_settle_and_no_others():
  # measurements/memory_rule.py weighs a minimum of 2 against the rule's own (docs/performance.md)
  assert readings_settled([105.9, 105.8], least=2) and not readings_settled([105.9, 105.8])
  assert not readings_settled([175.9, 183.1], least=2)  # +-23 MiB from two readings 7 MiB apart


def test_the_figure_error_shrinks_with_more_readings_of_the_same_spread():
  few, many = [40.0, 47.0, 33.0], [40.0, 47.0, 33.0] * 4
  assert figure_error(many) < figure_error(few) / 2


def test_the_verdict_is_welch_s_interval_of_the_difference_of_the_means():
  better = decide_settled([105.9, 105.8, 106.0], [33.2, 35.3, 34.0], Direction.LOWER, threshold=0.1, floor=8.0)
  assert better.verdict == Verdict.BETTER and better.ratio == pytest.approx(34.1667 / 105.9, rel=1e-4)
  # the 95% interval of -71.7 MiB: Welch's, with the readings' own spreads (about +-2.6 MiB here)
  assert 1 + (-71.73 - 3.0) / 105.9 < better.low < 1 + (-71.73 - 2.0) / 105.9 and better.level == 0.95
  assert decide_settled([33.2, 35.3, 34.0], [105.9, 105.8, 106.0], Direction.LOWER, threshold=0.1,
                        floor=8.0).verdict == Verdict.WORSE  # fmt: skip
  # 106 against 106, steady: equivalent within 10% (the fixed 8.5 MiB error a side never allowed it)
  same = decide_settled([105.9, 105.8, 106.0], [105.8, 105.9, 105.7], Direction.LOWER, threshold=0.1, floor=8.0)
  assert same.verdict == Verdict.EQUIVALENT and same.level == 0.9 and 0.9 < same.low <= same.high < 1.1
  # a few MiB on each side: no ratio, and equivalent within the 8 MiB floor
  tiny = decide_settled([1.16, 1.72, 0.99], [0.93, 1.07, 0.98], Direction.LOWER, threshold=0.1, floor=8.0)
  assert tiny.verdict == Verdict.EQUIVALENT and tiny.ratio is None
  # readings that repeat exactly: the difference decides by its size alone
  assert decide_settled([64.0] * 3, [0.0] * 3, Direction.LOWER, threshold=0.1, floor=8.0).verdict == Verdict.BETTER


def test_more_readings_decide_what_fewer_leave_open():
  rng = np.random.default_rng(3)
  noisy = lambda n: list(40.0 + 7.0 * rng.standard_normal(n))  # noqa: E731  (the non-OCDBT save's spread)
  few = decide_settled(noisy(4), noisy(4), Direction.LOWER, threshold=0.1, floor=8.0)
  assert few.verdict == Verdict.INCONCLUSIVE and few.repeats_needed > 4
  many = decide_settled(noisy(60), noisy(60), Direction.LOWER, threshold=0.1, floor=8.0)
  assert many.verdict == Verdict.EQUIVALENT
  # 12% more is beyond the threshold: undecided at 3 noisy readings, worse at 60 steady ones
  assert decide_settled([100.0, 90.0, 110.0], [112.0, 122.0, 102.0], Direction.LOWER, threshold=0.1,
                        floor=8.0).verdict == Verdict.INCONCLUSIVE  # fmt: skip
  assert decide_settled(list(100 + rng.standard_normal(60)), list(112 + rng.standard_normal(60)), Direction.LOWER,
                        threshold=0.1, floor=8.0).verdict == Verdict.WORSE  # fmt: skip


def test_one_reading_a_side_decides_nothing():
  one = decide_settled([106.0], [40.0], Direction.LOWER, threshold=0.1, floor=8.0)
  assert one.verdict == Verdict.INCONCLUSIVE and one.repeats_needed == 2


def test_a_side_the_pass_read_nothing_for_is_inconclusive_not_an_error():
  """`run pytorch --set num_repeats=1` once ended in statistics.StatisticsError here: a variant's pass run failed."""
  for reference, current in (([], [40.0, 41.0]), ([106.0, 105.0], [])):
    none = decide_settled(reference, current, Direction.LOWER, threshold=0.1, floor=8.0)
    assert none.verdict == Verdict.INCONCLUSIVE and none.ratio is None


def _record(key: str, repeat: int, peak: float, memory_pass: bool = True) -> ckptbench.RunRecord:
  return ckptbench.RunRecord(
      suite="s", benchmark=key, key=key, generator="g", options={"x": key}, varying={"x": key}, mesh=None,
      checkpoint_config=None, repeat=repeat, warmup=False, host=0, num_hosts=1, path="", started_at="",
      duration_s=1.0, metrics={PEAK: MetricEntry(peak, "MiB")}, memory_pass=memory_pass)  # fmt: skip


def test_a_memory_pass_verdict_takes_the_memory_rule_settled_or_not():
  settled = [_record("a", r, v) for r, v in enumerate([105.9, 105.8, 106.0])] + [
      _record("b", r, v) for r, v in enumerate([33.2, 34.9, 34.1])]
  (verdict,) = sweep_verdicts(settled, {"x": "a"}, paired=True, threshold=0.1)
  assert verdict.verdict == Verdict.BETTER and verdict.rule.startswith("memory pass: readings until the figure")
  # b never settled in 6 readings: the same rule, with the error its readings give
  unsettled = settled[:3] + [_record("b", r, v) for r, v in enumerate([38.3, 45.6, 54.8, 36.7, 28.7, 66.2])]
  (verdict,) = sweep_verdicts(unsettled, {"x": "a"}, paired=True, threshold=0.1)
  assert verdict.verdict == Verdict.BETTER and verdict.rule.startswith("memory pass: readings until the figure")
  assert verdict.n_reference == 3 and verdict.n_current == 6
