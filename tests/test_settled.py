"""The memory pass's rule (stats/_settled.py): readings until two in a row agree, and the verdict on their figures."""

from __future__ import annotations

import pytest

import ckptbench
from ckptbench.analysis import sweep_verdicts
from ckptbench.api import MetricEntry, Verdict
from ckptbench.stats import Direction, decide_settled, readings_agree

PEAK = "save_7_memory/host_rss_peak_diff_mib"


@pytest.mark.parametrize("readings, agreed", [
    ([], False), ([106.0], False),
    ([105.9, 105.8], True),  # the OCDBT save: flat
    ([117.7, 105.9, 105.8], True),  # a high first reading, then two alike
    ([175.9, 183.1], True),  # a load 4% apart: within 5%
    ([38.3, 45.6, 54.8], False),  # a save that moves by 7-9 MiB
    ([30.1, 31.9], True),  # 6% but under 2 MiB
    ([180.0, 160.0, 175.0, 176.0, 150.0], True),  # agreed once: settled whatever comes after
])  # fmt: skip
def test_readings_agree_once_two_in_a_row_are_within_5_percent_or_2_mib(readings, agreed):
  assert readings_agree(readings) is agreed


def test_settled_figures_are_compared_with_both_errors():
  better = decide_settled([105.9, 105.8], [33.2, 35.3], Direction.LOWER, threshold=0.1, floor=8.0)
  assert better.verdict == Verdict.BETTER and better.ratio == pytest.approx(34.25 / 105.85)
  # the difference -71.6 MiB, +- (8% of 105.85) + 6 MiB (the 34 MiB figure's error is the 6 MiB floor)
  assert better.low == pytest.approx(1 + (-71.6 - 8.468 - 6) / 105.85) and better.level == 0.95
  worse = decide_settled([33.2, 35.3], [105.9, 105.8], Direction.LOWER, threshold=0.1, floor=8.0)
  assert worse.verdict == Verdict.WORSE
  # 106 against 106: +-(8.5 + 8.5) MiB is wider than the 10.6 MiB threshold, so no equivalence is claimed
  same = decide_settled([105.9, 105.8], [105.8, 105.9], Direction.LOWER, threshold=0.1, floor=8.0)
  assert same.verdict == Verdict.INCONCLUSIVE and same.repeats_needed is None
  # at a 25% threshold (26.5 MiB) it is
  assert decide_settled([105.9, 105.8], [105.8, 105.9], Direction.LOWER, threshold=0.25, floor=8.0).verdict == (
      Verdict.EQUIVALENT)
  # a few MiB on each side: no ratio, and equivalent within the 8 MiB floor (neither side below 0)
  tiny = decide_settled([0.2, 0.21], [0.3, 0.29], Direction.LOWER, threshold=0.1, floor=8.0)
  assert tiny.verdict == Verdict.EQUIVALENT and tiny.ratio is None
  # 12% more is beyond the threshold but within both errors: inconclusive, never worse
  close = decide_settled([100.0, 100.0], [112.0, 112.0], Direction.LOWER, threshold=0.1, floor=8.0)
  assert close.verdict == Verdict.INCONCLUSIVE


def _record(key: str, repeat: int, peak: float, memory_pass: bool = True) -> ckptbench.RunRecord:
  return ckptbench.RunRecord(
      suite="s", benchmark=key, key=key, generator="g", options={"x": key}, varying={"x": key}, mesh=None,
      checkpoint_config=None, repeat=repeat, warmup=False, host=0, num_hosts=1, path="", started_at="",
      duration_s=1.0, metrics={PEAK: MetricEntry(peak, "MiB")}, memory_pass=memory_pass)  # fmt: skip


def test_a_memory_pass_verdict_takes_the_settled_rule_only_when_both_sides_settled():
  settled = [_record("a", r, v) for r, v in enumerate([105.9, 105.8])] + [
      _record("b", r, v) for r, v in enumerate([33.2, 34.9])]
  (verdict,) = sweep_verdicts(settled, {"x": "a"}, paired=True, threshold=0.1)
  assert verdict.verdict == Verdict.BETTER and verdict.rule.startswith("memory pass: readings until two in a row agree")
  # b never settled in 6 readings: the rank-based rule at one look, on 2 against 6 readings (no interval)
  unsettled = settled[:2] + [_record("b", r, v) for r, v in enumerate([38.3, 45.6, 54.8, 36.7, 28.7, 66.2])]
  (verdict,) = sweep_verdicts(unsettled, {"x": "a"}, paired=True, threshold=0.1)
  assert verdict.verdict == Verdict.INCONCLUSIVE and verdict.rule.startswith("Hodges-Lehmann 95.00% interval of the unpaired")
