"""The looks of adaptive repeats keep their error rates: simulated A/A and A/B series (pure, seconds).

Each series is a run of `num_repeats: auto`: per-round log ratios, looked at after the rounds in
`AUTO_LOOKS` at the levels `Design` spends there, stopped at the first decided look or at the time
budget's last look. The noise is heavy-tailed (Student's t with 4 degrees of freedom) at the spread
measured here (per-round log ratio's standard deviation 0.2-0.4: docs/verdicts.md).
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from ckptbench.stats import AUTO_LOOKS, Design, Direction, Verdict, decide

MARGIN = math.log1p(0.1)
BUDGET_ROUNDS = 130  # the time budget's last look: after seven early looks, as a 300 s budget here allows


def _series(rng: np.random.Generator, effect: float, spread: float, rounds: int = BUDGET_ROUNDS) -> np.ndarray:
  t = rng.standard_t(4, rounds) / math.sqrt(2)  # unit variance
  return effect + spread * t


def sequential(logs: np.ndarray) -> tuple[Verdict, int]:
  """(the verdict, the rounds it took) of one auto run over the per-round log ratios `logs`."""
  looks = [n for n in AUTO_LOOKS if n < len(logs)] + [len(logs)]
  for k, n in enumerate(looks):
    design = Design(early_looks=k, last=k == len(looks) - 1)
    d = decide([1.0] * n, np.exp(logs[:n]).tolist(), Direction.LOWER, paired=True, design=design)
    if d.verdict.decided or design.last:
      return d.verdict, n
  raise AssertionError("unreachable: the last look always returns")


def _runs(seed: int, trials: int, effect: float, spread: float) -> list[tuple[Verdict, int]]:
  rng = np.random.default_rng(seed)
  return [sequential(_series(rng, effect, spread)) for _ in range(trials)]


def _at_most(rate: float, trials: int, alpha: float = 0.05) -> bool:
  """Within alpha plus three binomial standard deviations."""
  return rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / trials)


@pytest.mark.parametrize("spread", [0.2, 0.4])
def test_aa_series_call_no_difference_and_stop_early_when_the_noise_allows(spread):
  """No change: a false worse or better in at most alpha of the runs; at the spread of a
  quiet machine (0.2) the equivalence shows at an early look, half the rounds the budget holds."""
  runs = _runs(1, 300, 0.0, spread)
  verdicts = [v for v, _ in runs]
  wrong = verdicts.count(Verdict.WORSE) + verdicts.count(Verdict.BETTER)
  assert _at_most(wrong / len(runs), len(runs))
  if spread == 0.2:
    assert verdicts.count(Verdict.EQUIVALENT) >= 0.95 * len(runs)
    assert statistics.median(n for _, n in runs) <= 50  # an early look; the whole budget is 130
  else:
    assert verdicts.count(Verdict.EQUIVALENT) >= 0.3 * len(runs)


def test_ab_series_at_the_planted_effect_are_worse_never_better_or_equivalent():
  """The trials' plant (1.24x save time) at the noisiest spread measured: found, and never the wrong way."""
  runs = _runs(2, 200, math.log(1.24), 0.4)
  verdicts = [v for v, _ in runs]
  assert verdicts.count(Verdict.WORSE) >= 0.95 * len(runs)
  assert verdicts.count(Verdict.BETTER) == 0 and verdicts.count(Verdict.EQUIVALENT) == 0


@pytest.mark.parametrize("effect", [MARGIN, -MARGIN])
def test_at_the_true_bound_equivalence_over_the_looks_is_claimed_at_most_alpha_of_the_time(effect):
  """A true change of exactly the threshold (either way): `equivalent` is false; the looks together claim it
  in at most alpha of the runs, and never the opposite direction."""
  runs = _runs(3, 400, effect, 0.2)
  verdicts = [v for v, _ in runs]
  assert _at_most(verdicts.count(Verdict.EQUIVALENT) / len(runs), len(runs))
  wrong_way = Verdict.BETTER if effect > 0 else Verdict.WORSE
  assert verdicts.count(wrong_way) == 0
