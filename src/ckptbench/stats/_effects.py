"""The effect of each factor of a sweep, and of each pair of factors together. Pure statistics.

A sweep over several options (and meshes or checkpoint configs, which are
factors too) answers "does OCDBT help, and does it help only with zarr3?" only
through its factors, never cell by cell. The model is a linear one on the log
of the metric (a ratio is then a difference), effect-coded (sum-to-zero
contrasts, so each term is a deviation from the grand mean), with every
interaction of the factors and the round as a block (the rounds interleave the
cells, so what a round shared, a neighbour's burst, cancels):

    log y[cell, round] = mu + factors and their interactions (effect-coded) + round + e

fitted robustly (stats._cell_model, which the race shares). The terms
reported are contrasts of the fitted cell means, each averaged with equal
weights over the other factors' combinations on the log scale:
- a main effect: level against the reference level of one factor, as a ratio;
- a two-factor interaction: the ratio of ratios (A's effect where B is at its
  level, over A's effect where B is at its reference level).
A cell never measured (an invalid combination, every run failed) leaves out the
combinations it would take part in: each term says over how many of its
combinations it was averaged. A round with a run missing costs that run only.

Verdicts use the rule of every other comparison (stats._decide: worse / better
when the two-sided interval excludes no change and the estimate lies beyond the
threshold; equivalent when two one-sided tests put it within), with the
intervals from the t distribution of the fit. Several terms are judged at once,
so each family of tests is corrected across the terms of a metric by Holm's
step-down (Holm 1979): the no-change tests at the look's `Design.spent`, the
equivalence tests at its `equivalence_spent`. A term's interval is at the level
its Holm step tested it at (the level of the step where the procedure stopped,
for terms after it), so a decided term's interval shows its decision.

One alpha-spending rule serves verdicts, effects and the race: a run's looks
share alpha by a `Design` (auto repeats' spending here), and a look's share is
divided over the tests it makes at once: Holm's step-down here, as the terms
are a family fixed before the data (its first step is Bonferroni's share, its
later steps spend what the decided ones left); the race divides its share by
Bonferroni, as it compares with a best the data picked (stats._race).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Mapping, Sequence

from ckptbench.api import Verdict
from ckptbench.stats._cell_model import CellModel, ContrastEstimate, Factor, Observation, ratio_or_none, t_interval
from ckptbench.stats._decide import Design, Intervals, repeats_to_decide, verdict_of
from ckptbench.stats._direction import Direction


@dataclasses.dataclass(frozen=True)
class Conditional:
  """One factor's effect at one level of another (the conditional table of a decided interaction)."""

  factor: str
  level: str
  reference_level: str
  given_factor: str
  given_level: str
  ratio: float
  low: float | None
  high: float | None


@dataclasses.dataclass(frozen=True)
class Term:
  """A main effect (one factor) or a two-factor interaction (two), judged.

  Attributes:
    factors: the factor names (one or two).
    levels: the level of each, against `reference_levels`.
    ratio: the main effect's ratio (level over reference level), or the interaction's ratio of ratios.
    low: the interval's lower end (the equivalence interval for `equivalent`, else the two-sided
      one, each at its Holm step's level); None when unbounded (no residual degrees of freedom).
    high: the upper end.
    verdict: the four words, by the rule of every comparison (stats._decide).
    confidence: the level of `low`-`high`.
    repeats_needed: for inconclusive, about how many rounds a decision needs (1/sqrt(n) shrinking).
    combinations: the other factors' combinations averaged over (all cells needed measured).
    possible: the combinations a full grid would give.
    conditionals: for an interaction decided worse or better, each factor's effect at each level of the other.
  """

  factors: tuple[str, ...]
  levels: tuple[str, ...]
  reference_levels: tuple[str, ...]
  ratio: float
  low: float | None
  high: float | None
  verdict: Verdict
  confidence: float
  repeats_needed: int | None
  combinations: int
  possible: int
  conditionals: tuple[Conditional, ...] = ()

  @property
  def is_interaction(self) -> bool:
    return len(self.factors) == 2


@dataclasses.dataclass(frozen=True)
class FactorialFit:
  """Every term of one metric, and what the fit stood on.

  Attributes:
    terms: the main effects (factor by factor, level by level), then the two-factor interactions.
    rounds: the rounds with at least one observation.
    observations: the runs fitted.
    missing_cells: cells of the full grid with no observation (their combinations are left out).
    residual_df: the fit's residual degrees of freedom (0: no interval).
  """

  terms: tuple[Term, ...]
  rounds: int
  observations: int
  missing_cells: tuple[tuple[str, ...], ...]
  residual_df: float


@dataclasses.dataclass(frozen=True)
class _Contrast:
  """A term before judging: its weights on the cells and the combinations behind them."""

  factors: tuple[str, ...]
  levels: tuple[str, ...]
  reference_levels: tuple[str, ...]
  weights: Mapping[tuple[str, ...], float]
  combinations: int
  possible: int


def factor_effects(
    factors: Sequence[Factor],
    observations: Sequence[Observation],
    direction: Direction,
    *,
    threshold: float,
    design: Design = Design(),
    blocks: bool = True,
) -> FactorialFit:
  """Main effects and two-factor interactions of `factors` on the log of a positive metric.

  Args:
    factors: the sweep's factors, each with two or more levels.
    observations: one per run (positive, finite values; others are left out).
    direction: which way is better (a neutral metric is not judged).
    threshold: the relative change that matters (0.1 = 10%), as for every verdict.
    design: the look's error rates (see stats._decide.Design); Holm divides them across the terms.
    blocks: the rounds interleaved the cells, so the round is a block (else repeat r of two cells
      shared nothing, and the model has no round term).

  Raises:
    ValueError: a factor with fewer than two levels, or an observation whose levels do not match.

  Example:
    >>> a = Factor("use_ocdbt", ("False", "True"), "False")
    >>> obs = [Observation((lv,), r, (2.0 if lv == "True" else 1.0) * (1 + 0.01 * ((r * 7 + i) % 5)))
    ...        for r in range(12) for i, lv in enumerate(("False", "True"))]
    >>> fit = factor_effects([a], obs, Direction.LOWER, threshold=0.1)
    >>> round(fit.terms[0].ratio, 1), fit.terms[0].verdict.value
    (2.0, 'worse')
  """
  _check(factors, observations)
  kept = [o for o in observations if math.isfinite(o.value) and o.value > 0]
  present = {o.levels for o in kept}
  grid = list(itertools.product(*(f.levels for f in factors)))
  missing = tuple(c for c in grid if c not in present)
  contrasts = [c for c in _contrasts(factors, present) if c.combinations]
  rounds = len({o.round for o in kept})
  if not contrasts or direction == Direction.NEUTRAL:
    return FactorialFit((), rounds, len(kept), missing, 0.0)
  model = CellModel.fit(factors, kept, blocks=blocks)
  margin = math.log1p(threshold)
  estimates = [model.contrast(c.weights) for c in contrasts]
  df = model.residual_df
  now = holm_rates(estimates, df, margin, Rates.of(design))
  ahead = holm_rates(estimates, df, margin, Rates.of(design.ahead()))
  judged = judge_contrasts(estimates, df, margin, direction, now=now, ahead=ahead, rounds=rounds)
  terms = [Term(c.factors, c.levels, c.reference_levels, math.exp(e.estimate), j.low, j.high, j.verdict,
                j.confidence, j.repeats_needed, c.combinations, c.possible)
           for c, e, j in zip(contrasts, estimates, judged)]  # fmt: skip
  terms = [_with_conditionals(t, factors, present, model, design) for t in terms]
  return FactorialFit(tuple(terms), rounds, len(kept), missing, df)


def _check(factors: Sequence[Factor], observations: Sequence[Observation]) -> None:
  for factor in factors:
    if len(factor.levels) < 2 or factor.reference not in factor.levels:
      raise ValueError(f"factor {factor.name!r} needs two or more levels and its reference among them,"
                       f" got levels {list(factor.levels)} and reference {factor.reference!r}")  # fmt: skip
  known = [set(f.levels) for f in factors]
  for o in observations:
    if len(o.levels) != len(factors) or any(lv not in k for lv, k in zip(o.levels, known)):
      raise ValueError(f"observation levels {o.levels} do not match the factors {[f.name for f in factors]}")


def _contrasts(factors: Sequence[Factor], present: set[tuple[str, ...]]) -> list[_Contrast]:
  """Every main effect and two-factor interaction as weights on the measured cells."""
  out = []
  for i, factor in enumerate(factors):
    others = [f for j, f in enumerate(factors) if j != i]
    for level in factor.levels:
      if level != factor.reference:
        out.append(_averaged(factors, present, {i: ((level, 1.0), (factor.reference, -1.0))}, others))
  for (i, a), (j, b) in itertools.combinations(enumerate(factors), 2):
    others = [f for k, f in enumerate(factors) if k not in (i, j)]
    for level_a in (lv for lv in a.levels if lv != a.reference):
      for level_b in (lv for lv in b.levels if lv != b.reference):
        signs = {i: ((level_a, 1.0), (a.reference, -1.0)), j: ((level_b, 1.0), (b.reference, -1.0))}
        out.append(_averaged(factors, present, signs, others))
  return out


def _averaged(
    factors: Sequence[Factor],
    present: set[tuple[str, ...]],
    signs: Mapping[int, tuple[tuple[str, float], ...]],
    others: Sequence[Factor],
) -> _Contrast:
  """The difference (or difference of differences) at each combination of the other factors whose cells
  were all measured, averaged with equal weights."""
  positions = [k for k in range(len(factors)) if k not in signs]
  combos = list(itertools.product(*(f.levels for f in others)))
  usable = []
  for combo in combos:
    cells = []
    for choice in itertools.product(*signs.values()):
      levels = dict(zip(positions, combo))
      levels.update({k: lv for k, (lv, _) in zip(signs, choice)})
      cells.append((tuple(levels[k] for k in range(len(factors))), math.prod(s for _, s in choice)))
    if all(cell in present for cell, _ in cells):
      usable.append(cells)
  weights: dict[tuple[str, ...], float] = {}
  for cells in usable:
    for cell, sign in cells:
      weights[cell] = weights.get(cell, 0.0) + sign / len(usable)
  names = tuple(factors[k].name for k in signs)
  levels = tuple(choice[0][0] for choice in signs.values())
  references = tuple(choice[-1][0] for choice in signs.values())
  return _Contrast(names, levels, references, weights, len(usable), len(combos))


def holm_levels(p_values: Sequence[float], alpha: float) -> list[float]:
  """Each test's error rate in Holm's step-down: alpha / (m - j) for the j-th smallest p-value, and
  for every test after the first it keeps, that step's rate; a test rejects when p <= its rate.

  Example:
    >>> holm_levels([0.001, 0.04, 0.01], 0.05)
    [0.016666666666666666, 0.05, 0.025]
  """
  m = len(p_values)
  levels = [0.0] * m
  stopped = None
  for step, index in enumerate(sorted(range(m), key=lambda k: p_values[k])):
    rate = alpha / (m - step) if stopped is None else stopped
    levels[index] = rate
    if stopped is None and p_values[index] > rate:
      stopped = rate
  return levels


@dataclasses.dataclass(frozen=True)
class Rates:
  """Error rates: each no-change (two-sided) test's and each one-sided test of equivalence's; a look's
  (`Rates.of` its Design), or one test's share of them (Holm's step for a term, Bonferroni's for the race)."""

  two_sided: float
  equivalence: float

  @classmethod
  def of(cls, design: Design) -> Rates:
    return cls(design.spent, design.equivalence_spent)


@dataclasses.dataclass(frozen=True)
class ContrastJudgement:
  """A contrast judged by the rule of every comparison (stats._decide).

  Attributes:
    verdict: the four words.
    low: the interval's lower end as a ratio (the equivalence interval for `equivalent`, else the two-sided
      one); None when unbounded.
    high: the upper end.
    confidence: the level of `low`-`high`.
    repeats_needed: for inconclusive, about how many rounds a decision needs (1/sqrt(n) shrinking).
  """

  verdict: Verdict
  low: float | None
  high: float | None
  confidence: float
  repeats_needed: int | None


def holm_rates(contrasts: Sequence[ContrastEstimate], df: float, margin: float, look: Rates) -> list[Rates]:
  """Each contrast's error rates in Holm's step-down over the family `contrasts`, from the look's: the no-change
  tests' and the equivalence tests', each family stepped down on its own p-values."""
  from scipy import stats as distributions  # noqa: PLC0415

  t = distributions.t
  p_zero, p_equivalent = [], []
  for c in contrasts:
    usable = df > 0 and 0 < c.error < math.inf
    p_zero.append(2 * t.sf(abs(c.estimate) / c.error, df) if usable else 1.0)
    p_equivalent.append(max(t.sf((c.estimate + margin) / c.error, df), t.cdf((c.estimate - margin) / c.error, df))
                        if usable else 1.0)  # fmt: skip
  two_sided, equivalence = holm_levels(p_zero, look.two_sided), holm_levels(p_equivalent, look.equivalence)
  return [Rates(a, b) for a, b in zip(two_sided, equivalence)]


def judge_contrasts(
    contrasts: Sequence[ContrastEstimate], df: float, margin: float, direction: Direction, *,
    now: Sequence[Rates], ahead: Sequence[Rates], rounds: int,
) -> list[ContrastJudgement]:  # fmt: skip
  """Each contrast judged by stats._decide's rule at its own error rates: `now` (Holm's steps for the effects,
  Bonferroni's shares for the race) and `ahead`, the most lenient look to come, for repeats_needed. The
  estimates are on the log scale; the judgements' bounds are ratios."""
  out = []
  for contrast, rates, later in zip(contrasts, now, ahead):
    intervals = _intervals(contrast, df, rates)
    verdict = verdict_of(contrast.estimate, intervals, margin, direction)
    needed = None
    if verdict == Verdict.INCONCLUSIVE and df > 0:
      needed = repeats_to_decide(rounds, contrast.estimate, _intervals(contrast, df, later), margin,
                                 design=Design(), paired=True)  # fmt: skip
    elif verdict == Verdict.INCONCLUSIVE:
      needed = rounds + 2
    if verdict == Verdict.EQUIVALENT:
      (low, high), confidence = intervals.equivalence, 1 - 2 * rates.equivalence
    else:
      (low, high), confidence = intervals.two_sided, 1 - rates.two_sided
    out.append(ContrastJudgement(verdict, ratio_or_none(low), ratio_or_none(high), confidence, needed))
  return out


def _intervals(contrast: ContrastEstimate, df: float, rates: Rates) -> Intervals:
  """The two-sided interval at 1 - rates.two_sided and the equivalence one at 1 - 2 rates.equivalence."""
  return Intervals(t_interval(contrast, df, rates.two_sided / 2), t_interval(contrast, df, rates.equivalence))


def _with_conditionals(
    term: Term, factors: Sequence[Factor], present: set[tuple[str, ...]], model: CellModel, design: Design
) -> Term:
  """A decided interaction (worse or better) gets its conditional table: each factor's effect at each
  level of the other, averaged over the remaining factors, at the look's two-sided level."""
  if not term.is_interaction or term.verdict not in (Verdict.WORSE, Verdict.BETTER):
    return term
  by_name = {f.name: (k, f) for k, f in enumerate(factors)}
  rows = []
  for shown, given in (term.factors, term.factors[::-1]):
    (i, a), (j, b) = by_name[shown], by_name[given]
    for given_level in b.levels:
      for level in (lv for lv in a.levels if lv != a.reference):
        others = [f for k, f in enumerate(factors) if k not in (i, j)]
        signs = {i: ((level, 1.0), (a.reference, -1.0)), j: ((given_level, 1.0),)}
        contrast = _averaged(factors, present, dict(sorted(signs.items())), others)
        if not contrast.combinations:
          continue
        estimate = model.contrast(contrast.weights)
        low, high = t_interval(estimate, model.residual_df, design.spent / 2)
        rows.append(Conditional(shown, level, a.reference, given, given_level, math.exp(estimate.estimate),
                                ratio_or_none(low), ratio_or_none(high)))  # fmt: skip
  return dataclasses.replace(term, conditionals=tuple(rows))
