"""The effects of a sweep's factors on simulated series: planted ratios recovered, intervals that cover the
truth, false verdicts at or under alpha across terms (A/A and planted), cells never measured, Holm's
levels, and the race's looks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ckptbench.api import Verdict
from ckptbench.stats import Design, Direction, Factor, Observation, factor_effects, holm_levels
from ckptbench.stats import RACE_LOOKS, RaceRule, mean_interval, paired_ratio, past_limit, race_look, reference_settled

FACTORS = [Factor("ocdbt", ("F", "T"), "F"), Factor("zarr3", ("F", "T"), "F"), Factor("gb", ("1", "8"), "1")]
PLANT = {"ocdbt": {"T": 0.7}, "zarr3": {"T": 1.3}, "gb": {"8": 0.85}}
INTERACTION = 1.25  # ocdbt=T with zarr3=T
THRESHOLD = 0.1


def _series(rng, rounds: int, plant, interaction: float, heavy: bool = False) -> list[Observation]:
  """Rounds of every cell: the planted time, a shared per-round drift, 4% noise, and (heavy) a slow run
  now and then, as a busy machine gives."""
  out = []
  for r in range(rounds):
    drift = rng.normal(0, 0.05)
    for cell in itertools.product(*(f.levels for f in FACTORS)):
      value = math.prod(plant[f.name].get(level, 1.0) for f, level in zip(FACTORS, cell))
      value *= interaction if cell[:2] == ("T", "T") else 1.0
      noise = rng.normal(0, 0.04) + (rng.exponential(0.4) if heavy and rng.random() < 0.1 else 0.0)
      out.append(Observation(cell, r, value * math.exp(drift + noise)))
  return out


def _truth(term, plant, interaction: float) -> float:
  """The planted ratio of a term: a main effect averaged (log scale) over the other factors' levels."""
  if term.is_interaction:
    return interaction if term.factors == ("ocdbt", "zarr3") else 1.0
  (name,), (level,) = term.factors, term.levels
  shared = math.sqrt(interaction) if name in ("ocdbt", "zarr3") else 1.0  # half the cells carry it
  return plant[name].get(level, 1.0) * shared


def _wrong(verdict: Verdict, truth: float) -> bool:
  """A verdict the truth contradicts: a change called where there is none, the wrong way, or equivalence
  called of a change beyond the threshold."""
  beyond = abs(math.log(truth)) > math.log1p(THRESHOLD)
  if verdict in (Verdict.WORSE, Verdict.BETTER):
    return not beyond or (verdict == Verdict.WORSE) != (truth > 1)
  return verdict == Verdict.EQUIVALENT and beyond


def test_planted_effects_and_their_interaction_are_recovered_with_their_verdicts():
  fit = factor_effects(FACTORS, _series(np.random.default_rng(3), 12, PLANT, INTERACTION), Direction.LOWER,
                       threshold=THRESHOLD)  # fmt: skip
  terms = {(t.factors, t.levels): t for t in fit.terms}
  assert len(terms) == 3 + 3  # a main effect per factor's non-reference level, an interaction per pair
  for term in fit.terms:
    assert term.ratio == pytest.approx(_truth(term, PLANT, INTERACTION), rel=0.03)
    assert term.low < term.ratio < term.high and term.combinations == term.possible
  assert terms[(("ocdbt",), ("T",))].verdict == Verdict.BETTER
  assert terms[(("zarr3",), ("T",))].verdict == Verdict.WORSE
  assert terms[(("gb",), ("8",))].verdict == Verdict.BETTER
  together = terms[(("ocdbt", "zarr3"), ("T", "T"))]
  assert together.verdict == Verdict.WORSE
  # Decided: its conditional table, OCDBT's effect with zarr3 off and on, as planted.
  conditional = {(c.factor, c.given_level): c.ratio for c in together.conditionals}
  assert conditional[("ocdbt", "F")] == pytest.approx(0.7, rel=0.03)
  assert conditional[("ocdbt", "T")] == pytest.approx(0.7 * INTERACTION, rel=0.03)
  assert terms[(("ocdbt", "gb"), ("T", "8"))].verdict == Verdict.EQUIVALENT
  assert terms[(("ocdbt", "gb"), ("T", "8"))].conditionals == ()


@pytest.mark.parametrize("heavy", [False, True], ids=["normal", "slow-runs"])
@pytest.mark.parametrize("planted", [False, True], ids=["A/A", "planted"])
def test_intervals_cover_the_truth_and_false_verdicts_stay_under_alpha(planted, heavy):
  """150 simulated sweeps of 8 rounds, at one look (alpha 5%): the intervals hold the planted ratio at least
  as often as their lowest level says (90%: an equivalence interval's), and a sweep with any wrong verdict
  among its six terms is at most 5%."""
  plant, interaction = (PLANT, INTERACTION) if planted else ({f.name: {} for f in FACTORS}, 1.0)
  rng = np.random.default_rng(11 + planted + 2 * heavy)
  covered = terms = wrong_sweeps = 0
  for _ in range(150):
    fit = factor_effects(FACTORS, _series(rng, 8, plant, interaction, heavy), Direction.LOWER, threshold=THRESHOLD)
    truths = [_truth(t, plant, interaction) for t in fit.terms]
    covered += sum(t.low <= truth <= t.high for t, truth in zip(fit.terms, truths))
    terms += len(fit.terms)
    wrong_sweeps += any(_wrong(t.verdict, truth) for t, truth in zip(fit.terms, truths))
  assert covered / terms >= 0.9
  assert wrong_sweeps / 150 <= 0.05


def test_a_cell_never_measured_leaves_out_its_combinations_and_says_so():
  observations = [o for o in _series(np.random.default_rng(5), 12, PLANT, INTERACTION) if o.levels != ("T", "T", "8")]
  fit = factor_effects(FACTORS, observations, Direction.LOWER, threshold=THRESHOLD)
  assert fit.missing_cells == (("T", "T", "8"),)
  terms = {(t.factors, t.levels): t for t in fit.terms}
  ocdbt = terms[(("ocdbt",), ("T",))]
  assert (ocdbt.combinations, ocdbt.possible) == (3, 4)  # (zarr3, gb) = (T, 8) has no OCDBT cell
  assert ocdbt.ratio == pytest.approx(0.7 * INTERACTION ** (1 / 3), rel=0.03)  # one of three carries it
  assert terms[(("ocdbt", "zarr3"), ("T", "T"))].ratio == pytest.approx(INTERACTION, rel=0.04)


def test_a_round_with_runs_missing_still_blocks_the_rest():
  rng = np.random.default_rng(7)
  observations = _series(rng, 12, PLANT, INTERACTION)
  unbalanced = [o for i, o in enumerate(observations) if not (o.round % 3 == 0 and i % 2)]
  fit = factor_effects(FACTORS, unbalanced, Direction.LOWER, threshold=THRESHOLD)
  assert fit.observations < len(observations)
  for term in fit.terms:
    assert term.ratio == pytest.approx(_truth(term, PLANT, INTERACTION), rel=0.04)


def test_holm_steps_down_and_stops_at_the_first_kept_test():
  assert holm_levels([0.001, 0.04, 0.01], 0.05) == pytest.approx([0.05 / 3, 0.05, 0.05 / 2])
  assert holm_levels([0.3, 0.001, 0.2], 0.05) == pytest.approx([0.025, 0.05 / 3, 0.025])


def test_a_later_look_spends_less_and_repeats_needed_guides_an_undecided_term():
  few = _series(np.random.default_rng(9), 3, PLANT, 1.08)
  fit = factor_effects(FACTORS, few, Direction.LOWER, threshold=THRESHOLD, design=Design(early_looks=0, last=False))
  undecided = [t for t in fit.terms if t.verdict == Verdict.INCONCLUSIVE]
  assert undecided and all(t.repeats_needed and t.repeats_needed > 3 for t in undecided)


def test_a_race_look_drops_the_far_candidates_after_three_rounds_and_keeps_the_close_one():
  rng = np.random.default_rng(2)
  times = {"best": 1.0, "close": 1.05, "slow": 1.6, "slower": 2.5}
  obs = [Observation((c,), r, v * math.exp(rng.normal(0, 0.03))) for r in range(3) for c, v in times.items()]
  rule = RaceRule(Direction.LOWER, threshold=THRESHOLD)
  look = race_look(obs, list(times), rule, look_after=3)
  assert look.best == "best"
  assert {s.candidate for s in look.worse} == {"slow", "slower"}
  assert next(s for s in look.standings if s.candidate == "close").verdict != Verdict.WORSE


def test_the_race_spends_alpha_as_a_design_divided_over_the_tests_the_true_best_faces():
  rule = RaceRule(Direction.LOWER, threshold=THRESHOLD, constraints=1)
  designs = [rule.design(r) for r in RACE_LOOKS]
  assert sum(d.spent for d in designs) == pytest.approx(0.05)
  assert sum(d.equivalence_spent for d in designs) == pytest.approx(0.05)
  assert all(d.equivalence_spent >= d.spent / 2 for d in designs)  # the equivalence interval inside the two-sided
  assert designs[-1].last and not designs[0].last
  # 11 comparisons with the other survivors and 1 constraint, each one-sided at its share of the look's
  rates = rule.rates(3, survivors=12)
  assert rates.equivalence == pytest.approx(0.05 / 20 / 12) and rates.two_sided == 2 * rates.equivalence
  assert rule.rates(3, survivors=3).equivalence == pytest.approx(0.05 / 20 / 3)  # the far ones dropped
  assert "spent over 20 looks" in designs[-1].rule(THRESHOLD, paired=True)


def test_the_ratio_to_the_reference_is_paired_over_the_rounds_both_ran():
  """A drift shared by each round cancels in the pairing: the interval holds the truth at a drift that a
  comparison of rounds run at different times would carry whole."""
  rng = np.random.default_rng(5)
  obs = []
  for r in range(12):
    drift = 0.8 * r / 12  # the machine slows by 2.2x over the race
    obs.append(Observation(("best",), r, 0.56 * math.exp(drift + rng.normal(0, 0.05))))
    obs.append(Observation(("reference",), r, math.exp(drift + rng.normal(0, 0.05))))
  obs.append(Observation(("best",), 12, 9.9))  # a round the reference did not run is left out
  found = paired_ratio(obs, "best", "reference")
  assert found.rounds == 12 and found.level == 0.95
  assert found.low < 0.56 < found.high and found.ratio == pytest.approx(0.56, rel=0.05)
  assert paired_ratio(obs, "best", "best").ratio == 1.0 and paired_ratio(obs, "best", "nobody") is None
  few = paired_ratio(obs[:6], "best", "reference")
  assert few.rounds == 3 and few.low is None  # 3 pairs cannot bound a 95% signed-rank interval


def test_the_reference_stops_once_every_survivors_ratio_to_it_is_decided_beyond_the_threshold():
  """6 pairs bound the 95% signed-rank interval: from then, the reference need not run beside survivors whose
  ratios to it lie wholly beyond the threshold; one within it (or the reference still racing) keeps it running."""
  rng = np.random.default_rng(7)
  obs = [Observation((c,), r, v * math.exp(rng.normal(0, 0.03)))
         for r in range(6) for c, v in (("fast", 0.56), ("slow", 1.8), ("near", 0.97), ("reference", 1.0))]
  assert reference_settled(obs, ["fast", "slow"], "reference", 0.1)
  assert not reference_settled(obs, ["fast", "near"], "reference", 0.1)  # near's ratio reaches within 10%
  assert not reference_settled(obs, ["fast", "reference"], "reference", 0.1)  # still racing: it runs anyway
  five = [o for o in obs if o.round < 5]
  assert not reference_settled(five, ["fast"], "reference", 0.1)  # 5 pairs cannot bound it at 95%


def test_a_constraint_is_broken_only_when_its_interval_lies_past_the_limit():
  assert past_limit([2.0, 2.1, 1.9, 2.05], 1.5, at_most=True, tail=0.01)
  assert not past_limit([1.4, 1.7, 1.5, 1.6], 1.5, at_most=True, tail=0.01)  # the mean is past, its interval is not
  assert not past_limit([2.0], 1.5, at_most=True, tail=0.01)  # one value: nothing decided
  assert past_limit([1.0, 1.1, 0.9], 3.0, at_most=False, tail=0.01)  # at least 3: far below
  found = mean_interval([1.4, 1.7, 1.5, 1.6], 0.025)
  assert found.low < 1.5 < found.high and found.mean == pytest.approx(1.55)
