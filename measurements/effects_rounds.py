"""How many rounds a main effect takes to decide, pooled over the grid, against the pairwise comparison.

Simulates interleaved rounds of a 2 x 2 x 2 sweep (OCDBT x Zarr 3 x concurrency), the save time of each
run the planted effect times a round's shared drift (5%) and the run's own noise (`--noise`, log-normal,
plus a slow run now and then as a busy machine gives), and looks at the rounds auto repeats look at
(`stats.AUTO_LOOKS`, each look spending its share of alpha). For each trial it finds the first look where
(a) the main effect of OCDBT is decided (stats.factor_effects: every cell, Holm across the 6 terms) and
(b) the pairwise verdict of the one cell that differs from the reference in OCDBT alone is decided
(stats.decide, as summary.json's verdicts), and prints the median rounds of each and how often each
decided first.

Usage:
  PYTHONPATH=src python measurements/effects_rounds.py [--trials 40] [--effect 1.2] [--noise 0.08]
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics

import numpy as np

from ckptbench.stats import AUTO_LOOKS, Design, Direction, Factor, Observation, decide, factor_effects

FACTORS = [Factor("ocdbt", ("F", "T"), "F"), Factor("zarr3", ("F", "T"), "F"), Factor("gb", ("1", "8"), "1")]


def _trial(rng, effect: float, noise: float) -> tuple[int | None, int | None]:
  """(rounds until the pooled main effect is decided, rounds until the pairwise verdict is): None past 240."""
  rounds = AUTO_LOOKS[-1]
  observations = []
  for r in range(rounds):
    drift = rng.normal(0, 0.05)
    for cell in itertools.product(*(f.levels for f in FACTORS)):
      slow = rng.exponential(0.3) if rng.random() < 0.05 else 0.0
      value = (effect if cell[0] == "T" else 1.0) * math.exp(drift + rng.normal(0, noise) + slow)
      observations.append(Observation(cell, r, value))
  pooled = pairwise = None
  for early, look in enumerate(AUTO_LOOKS):
    design = Design(early_looks=early, last=look == AUTO_LOOKS[-1])
    seen = [o for o in observations if o.round < look]
    if pooled is None:
      fit = factor_effects(FACTORS, seen, Direction.LOWER, threshold=0.1, design=design)
      if next(t for t in fit.terms if t.factors == ("ocdbt",)).verdict.decided:
        pooled = look
    if pairwise is None:
      reference = [o.value for o in seen if o.levels == ("F", "F", "1")]
      current = [o.value for o in seen if o.levels == ("T", "F", "1")]
      if decide(reference, current, Direction.LOWER, paired=True, threshold=0.1, design=design).verdict.decided:
        pairwise = look
    if pooled and pairwise:
      break
  return pooled, pairwise


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--trials", type=int, default=40)
  parser.add_argument("--effect", type=float, default=1.2, help="OCDBT's planted ratio")
  parser.add_argument("--noise", type=float, default=0.08, help="each run's own log-normal spread")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  rng = np.random.default_rng(args.seed)
  results = [_trial(rng, args.effect, args.noise) for _ in range(args.trials)]
  past = AUTO_LOOKS[-1] * 2  # undecided by the last look: counted as twice the most rounds
  pooled = [p or past for p, _ in results]
  pairwise = [q or past for _, q in results]
  print(f"effect {args.effect}x, noise {args.noise:.0%}, {args.trials} trials: median rounds to decide OCDBT's effect"
        f" pooled {statistics.median(pooled):g}, pairwise {statistics.median(pairwise):g};"
        f" pooled sooner in {sum(p < q for p, q in zip(pooled, pairwise))}, later in"
        f" {sum(p > q for p, q in zip(pooled, pairwise))}; undecided by round {AUTO_LOOKS[-1]}:"
        f" pooled {sum(p is None for p, _ in results)}, pairwise {sum(q is None for _, q in results)}")


if __name__ == "__main__":
  main()
