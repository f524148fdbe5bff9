"""Racing a grid of settings: which candidates a look drops, and the answer's ratio. Pure statistics.

Every surviving candidate runs once per round, so the rounds block the model of
stats._cell_model (the log of the objective, one effect per candidate, the round
as a block), fitted on every run measured so far, the dropped candidates' too:
the spread is pooled over all cells, so a candidate far off the best is decided
after three rounds, where a comparison of two cells alone would need ten (the
first look of `num_repeats: auto`).

At a look, the best is the survivor with the best fitted mean; each other
survivor is judged against it by the rule of every comparison (worse / better /
equivalent / inconclusive at the threshold).

Alpha, by the rule of every verdict (stats._decide): the race's looks share it
by a `Design` whose spending (`RACE_SPENDING`) gives each of the `RACE_LOOKS`
an equal share; and a look's share is divided (Bonferroni) over the tests the
true best can fail at that look: its comparisons with the other survivors and
its constraints (`RaceRule.rates`). Each test is one-sided at that share
(worse than the best or not; the two one-sided tests of equivalence; a
constraint's one-sided interval).

That division is what charges the race for re-picking its best from the data
at each look (multiple comparisons with the best, Hsu 1984): the true best is
dropped, or a candidate beyond the threshold of it declared equivalent to the
pick, only when one of the true best's own comparisons with the other
survivors (the pick is one of them) or its constraints has an interval end on
the wrong side of the truth. Were the survivors fixed, that would bound the
chance of a wrong answer by the sum of the looks' shares, alpha (Paulson's
elimination, 1964, divides by every candidate raced). Dividing by the
survivors at each look instead (the candidates dropped as far worse no longer
compete with the true best) is what lets a race decide its near candidates in
a dozen rounds; as the survivors depend on the data, that bound is measured,
not proved: measurements/noisy_sweeps.py, on planted sweeps
and on a hard case with three candidates just beyond the threshold of the best
(docs/performance.md). A race stopped by its time budget names the best so far,
with no such bound.

The answer's ratio to the suite's reference is paired: the reference runs
beside the survivors, dropped or not, as the answer does (stats._decide's
Hodges-Lehmann interval of the per-round ratios), so drift between rounds
cancels where a model of rounds run at different times would carry it. It runs
in each of the race's first `ANSWER_ROUNDS` rounds, or fewer once every
survivor's ratio to it is decided beyond the threshold (`reference_settled`):
whichever survivor answers, the ratio then says how far it is from the
reference, at its stated level, with the fewest rounds that bound it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

from ckptbench.api import Verdict
from ckptbench.stats._cell_model import CellModel, Factor, Observation
from ckptbench.stats._decide import Design, Spending, min_rounds, effect_interval
from ckptbench.stats._defaults import DEFAULT_ALPHA
from ckptbench.stats._direction import Direction
from ckptbench.stats._effects import Rates, judge_contrasts

# The rounds after which a race looks: every round early, then about 1.25x apart up to the most rounds
# auto repeats take. Not after two: a burst of a busy machine hitting one cell in both of its first two
# rounds is the cell's whole estimate, and dropped the true best in trials here; after three the robust
# fit (stats._cell_model) weighs one slow run down.
RACE_LOOKS = (3, 4, 5, 6, 8, 10, 12, 15, 19, 24, 30, 38, 48, 60, 75, 95, 120, 150, 190, 240)
# An equal share of alpha at each look, on worse / better and on each test of equivalence.
RACE_SPENDING = Spending(1 / len(RACE_LOOKS), 1 / len(RACE_LOOKS))
# The answer quotes the winner's median and interval, so a winner left alone sooner runs on, alone, until
# it has this many runs: from 9 on, the median's 95% distribution-free interval (stats._interval) leaves
# out the slowest and the fastest run; 10 is the first look at or after 9 (the winner's constraints are
# checked there, within the looks' alpha); the reference runs beside it as long, unless its ratios are decided sooner.
ANSWER_ROUNDS = 10


@dataclasses.dataclass(frozen=True)
class RaceRule:
  """What a race's looks decide by.

  Attributes:
    direction: which way of the objective is better (lower or higher).
    threshold: the relative change that matters.
    constraints: the constraints each candidate must keep.
    alpha: the chance, over the race, that the true best is dropped or a candidate beyond the threshold of
      it is declared equivalent to the answer.
  """

  direction: Direction
  threshold: float
  constraints: int = 0
  alpha: float = DEFAULT_ALPHA

  def design(self, rounds: int) -> Design:
    """The look after `rounds` (one of `RACE_LOOKS`) as a look of the rule of every verdict."""
    index = RACE_LOOKS.index(rounds)
    return Design(self.alpha, early_looks=index, last=index == len(RACE_LOOKS) - 1, spending=RACE_SPENDING)

  def rates(self, rounds: int, survivors: int) -> Rates:
    """Each test's share of the look after `rounds` with `survivors` racing: the look's share divided over the
    tests the true best faces. Every test of a race is one-sided (a survivor against the best is worse or not, and
    equivalence is two one-sided tests), so the two-sided interval that decides worse has that share beyond each
    end."""
    share = self.design(rounds).equivalence_spent / max(1, survivors - 1 + self.constraints)
    return Rates(2 * share, share)


@dataclasses.dataclass(frozen=True)
class Standing:
  """A survivor against the look's best: the ratio of its fitted mean to the best's, and the verdict."""

  candidate: str
  ratio: float
  low: float | None
  high: float | None
  verdict: Verdict


@dataclasses.dataclass(frozen=True)
class RaceLook:
  """One look of a race: the best survivor, and every other survivor against it."""

  best: str
  standings: tuple[Standing, ...]

  @property
  def worse(self) -> list[Standing]:
    return [s for s in self.standings if s.verdict == Verdict.WORSE]

  @property
  def decided(self) -> bool:
    """Whether the race has its answer: every other survivor is worse than the best or equivalent to it."""
    return all(s.verdict in (Verdict.WORSE, Verdict.EQUIVALENT) for s in self.standings)


def race_look(
    observations: Sequence[Observation], survivors: Sequence[str], rule: RaceRule, *, look_after: int
) -> RaceLook:
  """The best survivor and each other survivor's verdict against it, each comparison at the look's share divided by
  the survivors (`RaceRule.rates`).

  Args:
    observations: every run so far, each `levels` one candidate's name (dropped candidates' runs too:
      they pool the spread).
    survivors: the candidates still racing (two or more).
    rule: the race's direction, threshold and constraints.
    look_after: the rounds run (one of `RACE_LOOKS`).

  Raises:
    ValueError: fewer than two survivors, a neutral direction, or a survivor with no positive run.

  Example:
    >>> obs = [Observation((c,), r, v * (1 + 0.02 * ((r * 3 + i) % 4))) for r in range(3)
    ...        for i, (c, v) in enumerate((("a", 1.0), ("b", 2.0), ("c", 1.02)))]
    >>> look = race_look(obs, ["a", "b", "c"], RaceRule(Direction.LOWER, threshold=0.1), look_after=3)
    >>> look.best, [(s.candidate, s.verdict.value) for s in look.standings]
    ('a', [('b', 'worse'), ('c', 'inconclusive')])
  """
  if len(survivors) < 2 or rule.direction == Direction.NEUTRAL:
    raise ValueError(f"a race look needs two or more survivors and a direction, got {list(survivors)}, {rule.direction}")
  model, rounds = _fit(observations, survivors)
  sign = 1 if rule.direction == Direction.LOWER else -1
  best = min(survivors, key=lambda c: sign * float(model.cell_means[(c,)][-1]))
  others = [c for c in survivors if c != best]
  contrasts = [model.contrast({(c,): 1.0, (best,): -1.0}) for c in others]
  rates = [rule.rates(look_after, survivors=len(survivors))] * len(others)
  judged = judge_contrasts(contrasts, model.residual_df, math.log1p(rule.threshold), rule.direction, now=rates,
                           ahead=rates, rounds=rounds)  # fmt: skip
  return RaceLook(best, tuple(Standing(c, math.exp(e.estimate), j.low, j.high, j.verdict)
                              for c, e, j in zip(others, contrasts, judged)))  # fmt: skip


@dataclasses.dataclass(frozen=True)
class PairedRatio:
  """A candidate over the reference, paired by round: the Hodges-Lehmann ratio of the rounds both ran, and its
  interval at `level` (None: too few rounds to bound it)."""

  ratio: float
  low: float | None
  high: float | None
  rounds: int
  level: float


def paired_ratio(
    observations: Sequence[Observation], candidate: str, reference: str, alpha: float = DEFAULT_ALPHA
) -> PairedRatio | None:
  """The candidate's ratio to the reference over the rounds both ran (None: no such round).

  Example:
    >>> obs = [Observation((c,), r, v * (1 + 0.1 * r)) for r in range(10) for c, v in (("a", 0.5), ("ref", 1.0))]
    >>> found = paired_ratio(obs, "a", "ref")
    >>> round(found.ratio, 6), round(found.low, 6), round(found.high, 6), found.rounds
    (0.5, 0.5, 0.5, 10)
  """
  level = 1 - alpha
  if candidate == reference:
    rounds = len({o.round for o in observations if o.levels[0] == candidate})
    return PairedRatio(1.0, 1.0, 1.0, rounds, level)
  values = {(o.levels[0], o.round): o.value for o in observations if math.isfinite(o.value) and o.value > 0}
  rounds = sorted({r for c, r in values if c == candidate} & {r for c, r in values if c == reference})
  if not rounds:
    return None
  reference_logs = [math.log(values[(reference, r)]) for r in rounds]
  candidate_logs = [math.log(values[(candidate, r)]) for r in rounds]
  estimate, low, high = effect_interval(reference_logs, candidate_logs, paired=True, level=level)
  bounded = math.isfinite(low) and math.isfinite(high)
  return PairedRatio(math.exp(estimate), math.exp(low) if bounded else None, math.exp(high) if bounded else None,
                     len(rounds), level)  # fmt: skip


def reference_settled(
    observations: Sequence[Observation], survivors: Sequence[str], reference: str, threshold: float,
    alpha: float = DEFAULT_ALPHA,
) -> bool:  # fmt: skip
  """Whether every survivor's paired ratio to the reference, over the fewest rounds both ran that bound it at
  `alpha` or more, has its interval wholly beyond the threshold of 1 (either way): the reference need not run
  beside them any more, whichever answers.

  Example:
    >>> obs = [Observation((c,), r, v * (1 + 0.01 * (r % 3)))
    ...        for r in range(6) for c, v in (("a", 0.5), ("ref", 1.0))]
    >>> reference_settled(obs, ["a"], "ref", 0.1), reference_settled(obs[:10], ["a"], "ref", 0.1)
    (True, False)
  """
  if reference in survivors:
    return False
  fewest = min_rounds(alpha, paired=True)
  for survivor in survivors:
    found = paired_ratio(observations, survivor, reference, alpha)
    if found is None or found.rounds < fewest or found.low is None:
      return False
    if found.low <= 1 + threshold and found.high >= 1 / (1 + threshold):
      return False
  return True


@dataclasses.dataclass(frozen=True)
class MeanInterval:
  """A mean and its interval, each end at `tail` of the t distribution (None: too few values to bound it)."""

  mean: float
  low: float | None
  high: float | None
  tail: float


def mean_interval(values: Sequence[float], tail: float) -> MeanInterval | None:
  """The mean of the finite `values` with its t interval (None: no value).

  Example:
    >>> mean_interval([2.0, 2.0, 2.0], 0.025)
    MeanInterval(mean=2.0, low=2.0, high=2.0, tail=0.025)
  """
  from scipy import stats as distributions  # noqa: PLC0415

  finite = [v for v in values if math.isfinite(v)]
  n = len(finite)
  if n == 0:
    return None
  mean = math.fsum(finite) / n
  if n < 2:
    return MeanInterval(mean, None, None, tail)
  spread = math.sqrt(math.fsum((v - mean) ** 2 for v in finite) / (n - 1) / n)
  reach = float(distributions.t.isf(tail, n - 1)) * spread
  return MeanInterval(mean, mean - reach, mean + reach, tail)


def past_limit(values: Sequence[float], limit: float, *, at_most: bool, tail: float) -> bool:
  """Whether the mean of `values` lies past `limit` with its one-sided interval (`tail` beyond its end) wholly past
  it (`at_most`: the constraint is value <= limit); too few values: not decided, False.

  Example:
    >>> past_limit([2.0, 2.1, 1.9, 2.05], 1.5, at_most=True, tail=0.01)
    True
  """
  interval = mean_interval(values, tail)
  if interval is None or interval.low is None:
    return False
  return interval.low > limit if at_most else interval.high < limit


def _fit(observations: Sequence[Observation], needed: Sequence[str]) -> tuple[CellModel, int]:
  """The candidates' model (one factor, the round as a block) on the positive runs, and the rounds it spans."""
  kept = [o for o in observations if math.isfinite(o.value) and o.value > 0]
  names = list(dict.fromkeys(o.levels[0] for o in kept))
  lacking = [c for c in needed if c not in names]
  if lacking:
    raise ValueError(f"no positive run of {lacking}")
  model = CellModel.fit([Factor("candidate", tuple(names), names[0])], kept, blocks=True)
  return model, len({o.round for o in kept})
