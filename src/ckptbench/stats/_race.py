"""Racing a grid of settings: which candidates a look drops, and the answer's ratio. Pure statistics.

Every surviving candidate runs once per round, so the rounds block the model of
stats._effects (the log of the objective, one effect per candidate, the round as
a block), fitted on every run measured so far, the dropped candidates' too: the
spread is pooled over all cells, so a candidate far off the best is decided
after three rounds, where a comparison of two cells alone would need ten (the
first look of `num_repeats: auto`).

At a look, the best is the survivor with the best fitted mean; each other
survivor is judged against it by the rule of every comparison (worse / better /
equivalent / inconclusive at the threshold), Holm-corrected across the
survivors. A race looks after each round of `RACE_LOOKS`, and each look spends
an equal share of alpha on each family of tests (Bonferroni across the looks),
so a race that stops at any of them keeps its error rate.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

from ckptbench.api import Verdict
from ckptbench.stats._defaults import DEFAULT_ALPHA
from ckptbench.stats._direction import Direction
from ckptbench.stats._effects import Factor, Observation, Rates, _bounds, _combine, _fit_cells, _ratio, judge_contrasts

# The rounds after which a race looks: every round early, then about 1.25x apart up to the most rounds
# auto repeats take. Not after two: a burst of a busy machine hitting one cell in both of its first two
# rounds is the cell's whole estimate, and dropped the true best in trials here; after three the robust
# fit (stats._effects) weighs one slow run down.
RACE_LOOKS = (3, 4, 5, 6, 8, 10, 12, 15, 19, 24, 30, 38, 48, 60, 75, 95, 120, 150, 190, 240)
# The answer quotes the winner's median and interval, so a winner left alone sooner runs on, alone, until
# it has this many runs: from 9 on, the median's 95% distribution-free interval (stats._interval) leaves
# out the slowest and the fastest run; 10 is the first look at or after 9 (the winner's constraints are
# checked there, within the looks' alpha).
ANSWER_ROUNDS = 10


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
  def all_equivalent(self) -> bool:
    return all(s.verdict == Verdict.EQUIVALENT for s in self.standings)


def look_rates(alpha: float = DEFAULT_ALPHA) -> Rates:
  """Each look's share of alpha, for each family of tests (Bonferroni across `RACE_LOOKS`)."""
  return Rates(alpha / len(RACE_LOOKS), alpha / len(RACE_LOOKS))


def race_look(
    observations: Sequence[Observation],
    survivors: Sequence[str],
    direction: Direction,
    *,
    threshold: float,
    rates: Rates,
) -> RaceLook:
  """The best survivor and each other survivor's verdict against it.

  Args:
    observations: every run so far, each `levels` one candidate's name (dropped candidates' runs too:
      they pool the spread).
    survivors: the candidates still racing (two or more).
    direction: which way of the objective is better (lower or higher).
    threshold: the relative change that matters.
    rates: this look's error rates (`look_rates`).

  Raises:
    ValueError: fewer than two survivors, a neutral direction, or a survivor with no positive run.

  Example:
    >>> obs = [Observation((c,), r, v * (1 + 0.02 * ((r * 3 + i) % 4))) for r in range(3)
    ...        for i, (c, v) in enumerate((("a", 1.0), ("b", 2.0), ("c", 1.02)))]
    >>> look = race_look(obs, ["a", "b", "c"], Direction.LOWER, threshold=0.1, rates=look_rates())
    >>> look.best, [(s.candidate, s.verdict.value) for s in look.standings]
    ('a', [('b', 'worse'), ('c', 'inconclusive')])
  """
  if len(survivors) < 2 or direction == Direction.NEUTRAL:
    raise ValueError(f"a race look needs two or more survivors and a direction, got {list(survivors)}, {direction}")
  means, covariance, df, rounds = _fit(observations, survivors)
  sign = 1 if direction == Direction.LOWER else -1
  best = min(survivors, key=lambda c: sign * float(means[(c,)][-1]))
  others = [c for c in survivors if c != best]
  estimates, errors = zip(*(_combine({(c,): 1.0, (best,): -1.0}, means, covariance) for c in others))
  judged = judge_contrasts(estimates, errors, df, math.log1p(threshold), direction, rates, rates, rounds)
  standings = tuple(Standing(c, math.exp(e), low, high, verdict)
                    for c, e, (verdict, low, high, _, _) in zip(others, estimates, judged))  # fmt: skip
  return RaceLook(best, standings)


def race_ratio(
    observations: Sequence[Observation], candidate: str, reference: str, alpha: float = DEFAULT_ALPHA
) -> tuple[float, float | None, float | None]:
  """The candidate's fitted mean over the reference's, with its two-sided interval at 1 - alpha (the
  answer's ratio to the suite's reference, which may have been dropped early: the model pools it)."""
  if candidate == reference:
    return 1.0, 1.0, 1.0
  means, covariance, df, _ = _fit(observations, [candidate, reference])
  estimate, error = _combine({(candidate,): 1.0, (reference,): -1.0}, means, covariance)
  low, high = _bounds(estimate, error, df, alpha / 2)
  return math.exp(estimate), _ratio(low), _ratio(high)


def past_limit(values: Sequence[float], limit: float, at_most: bool, alpha: float) -> bool:
  """Whether the mean of `values` is past `limit` with its one-sided interval at 1 - alpha wholly past
  it (`at_most`: the constraint is value <= limit); too few values: not decided, False.

  Example:
    >>> past_limit([2.0, 2.1, 1.9, 2.05], 1.5, True, 0.01)
    True
  """
  from scipy import stats as distributions  # noqa: PLC0415

  finite = [v for v in values if math.isfinite(v)]
  n = len(finite)
  if n < 2:
    return False
  mean = math.fsum(finite) / n
  spread = math.sqrt(math.fsum((v - mean) ** 2 for v in finite) / (n - 1) / n)
  reach = float(distributions.t.isf(alpha, n - 1)) * spread
  return mean - reach > limit if at_most else mean + reach < limit


def _fit(observations: Sequence[Observation], needed: Sequence[str]):
  """The candidates' model (stats._effects, one factor, the round as a block) on the positive runs."""
  kept = [o for o in observations if math.isfinite(o.value) and o.value > 0]
  names = list(dict.fromkeys(o.levels[0] for o in kept))
  lacking = [c for c in needed if c not in names]
  if lacking:
    raise ValueError(f"no positive run of {lacking}")
  means, covariance, df = _fit_cells([Factor("candidate", tuple(names), names[0])], kept, True)
  return means, covariance, df, len({o.round for o in kept})

