"""How `tune`'s race and the effects hold under a busy machine's noise, on simulated planted sweeps.

The sweep is the planted 3-factor grid of tests/planted_effects_benchmarks.py (`use_ocdbt` x `use_zarr3` x
`concurrent_gb` 1/4/8: 12 cells; the best 0.56 of the reference). Each run's time is the plant times
12% log-normal noise, a 2.5x burst in 1 run of 20, and a drift between rounds shared by the round's runs
(a random walk of 4% a round plus 5% of its own). The race is the engine's (engine/race/_race.py) over the
statistics it calls (stats.race_look, stats.RaceRule, stats.paired_ratio): looks after `stats.RACE_LOOKS`,
the winner on to `stats.ANSWER_ROUNDS`, the reference in each of the first as many until every survivor's ratio to it
is decided (stats.reference_settled), at most `--max_rounds` (the time budget). The effects are auto repeats deciding on effects (stats.factor_effects at each of `stats.AUTO_LOOKS`,
each look its Design) until every term is decided or `--max_rounds`.

It prints, for the race: how often the answer is not the planted best, how often it is not within the
threshold of it either (also on a hard case: three candidates 1.12x the best, just beyond the
threshold), the runs measured against the grid at the best's rounds, and how often the paired ratio's
95% interval holds the planted ratio; for the effects: how often each term's interval holds its
plant, the sweeps with any wrong verdict (a change called where there is none or the wrong way, equivalence
called of a change beyond the threshold), and the main effects within 7% of their plant.

Usage:
  PYTHONPATH=src python measurements/noisy_sweeps.py [--trials 200] [--seed 1] [--max_rounds 60]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import statistics
import time

import numpy as np

from ckptbench.api import Verdict
from ckptbench.stats import ANSWER_ROUNDS, AUTO_LOOKS, RACE_LOOKS, Design, Direction, Factor, Observation, RaceRule
from ckptbench.stats import factor_effects, paired_ratio, race_look, reference_settled

LEVELS = {"use_ocdbt": ("False", "True"), "use_zarr3": ("False", "True"), "concurrent_gb": ("1", "4", "8")}
PLANTS = {"use_ocdbt": {"True": 0.8}, "use_zarr3": {"True": 1.3}, "concurrent_gb": {"4": 1.15, "8": 0.7}}
INTERACTION = 1.2  # use_ocdbt=True with use_zarr3=True
THRESHOLD = 0.1
NOISE, BURST, BURST_EVERY = 0.12, 2.5, 20
WALK, ROUND_JITTER = 0.04, 0.05
FACTORS = [Factor(name, levels, levels[0]) for name, levels in LEVELS.items()]
CELLS = list(itertools.product(*LEVELS.values()))
REFERENCE = CELLS[0]


def planted(cell: tuple[str, ...]) -> float:
  factor = INTERACTION if cell[0] == "True" and cell[1] == "True" else 1.0
  return factor * math.prod(PLANTS[name].get(level, 1.0) for name, level in zip(LEVELS, cell))


BEST = min(CELLS, key=planted)


class Machine:
  """A busy machine's noise: each run's own (log-normal, with bursts) on a drift shared by a round's runs."""

  def __init__(self, rng: np.random.Generator):
    self.rng, self.walk = rng, 0.0

  def round_factor(self) -> float:
    self.walk += self.rng.normal(0, WALK)
    return math.exp(self.walk + self.rng.normal(0, ROUND_JITTER))

  def run(self, truth: float, shared: float) -> float:
    burst = BURST if self.rng.random() < 1 / BURST_EVERY else 1.0
    return truth * shared * burst * math.exp(self.rng.normal(0, NOISE))


@dataclasses.dataclass(frozen=True)
class RaceTrial:
  answer: tuple[str, ...]
  runs: int
  best_rounds: int
  ratio_low: float | None
  ratio_high: float | None
  ratio_rounds: int


# The hard case for the race's answer: three candidates just beyond the threshold of the best (1.12x), which a
# wrong pick would answer with, among far ones.
CLOSE = dict(zip(CELLS, (1.8, 1.0, 1.12, 1.12, 1.12, 1.3, 1.3, 1.6, 1.7, 1.8, 1.9, 2.0)))


def race(rng: np.random.Generator, max_rounds: int, truth=planted) -> RaceTrial:
  """One race, as engine/race/_race.py runs it, of the cells whose times are `truth(cell)`."""
  machine, names = Machine(rng), {cell: ",".join(cell) for cell in CELLS}
  cell_of = {v: k for k, v in names.items()}
  rule = RaceRule(Direction.LOWER, THRESHOLD)
  survivors, winner, observations, rounds, settled = list(CELLS), None, [], 0, False
  while rounds < min(RACE_LOOKS[-1], max_rounds):
    shared = machine.round_factor()
    beside = REFERENCE not in survivors and rounds < ANSWER_ROUNDS and not settled
    for cell in [*survivors, REFERENCE] if beside else survivors:
      observations.append(Observation((names[cell],), rounds, machine.run(truth(cell), shared)))
    rounds += 1
    if rounds in RACE_LOOKS and winner is None:
      look = race_look(observations, [names[c] for c in survivors], rule, look_after=rounds)
      worse = {cell_of[s.candidate] for s in look.worse}
      survivors = [c for c in survivors if c not in worse]
      if look.decided:
        winner = cell_of[look.best]
        survivors = [winner]
    if beside:
      settled = reference_settled(observations, [names[c] for c in survivors], names[REFERENCE], THRESHOLD)
    if winner is not None and rounds >= ANSWER_ROUNDS:
      break
  if winner is None:  # the time budget: the best so far
    winner = survivors[0] if len(survivors) == 1 else cell_of[race_look(
        observations, [names[c] for c in survivors], rule, look_after=RACE_LOOKS[-1]).best]  # fmt: skip
  ratio = paired_ratio(observations, names[winner], names[REFERENCE])
  best_rounds = sum(o.levels[0] == names[winner] for o in observations)
  return RaceTrial(winner, len(observations), best_rounds, ratio.low, ratio.high, ratio.rounds)


@dataclasses.dataclass(frozen=True)
class EffectsTrial:
  rounds: int
  decided: bool
  covered: int
  terms: int
  wrong: bool
  mains_within_7: bool


def _truth(factors: tuple[str, ...], levels: tuple[str, ...]) -> float:
  """A term's plant: a main effect averaged (log scale) over the other factors' levels; an interaction's ratio of ratios."""
  if len(factors) == 2:
    return INTERACTION if factors == ("use_ocdbt", "use_zarr3") else 1.0
  index = list(LEVELS).index(factors[0])
  logs = [math.log(planted(c[:index] + (levels[0],) + c[index + 1:]) / planted(c[:index] + (FACTORS[index].reference,)
                                                                                 + c[index + 1:]))
          for c in CELLS if c[index] == FACTORS[index].reference]  # fmt: skip
  return math.exp(sum(logs) / len(logs))


def _wrong(verdict: Verdict, truth: float) -> bool:
  beyond = abs(math.log(truth)) > math.log1p(THRESHOLD)
  if verdict in (Verdict.WORSE, Verdict.BETTER):
    return not beyond or (verdict == Verdict.WORSE) != (truth > 1)
  return verdict == Verdict.EQUIVALENT and beyond


def effects(rng: np.random.Generator, max_rounds: int) -> EffectsTrial:
  """One sweep under auto repeats deciding on effects."""
  machine, observations, fit, rounds = Machine(rng), [], None, 0
  looks = [n for n in AUTO_LOOKS if n <= max_rounds]
  for early, look in enumerate(looks):
    while rounds < look:
      shared = machine.round_factor()
      observations += [Observation(cell, rounds, machine.run(planted(cell), shared)) for cell in CELLS]
      rounds += 1
    design = Design(early_looks=early, last=look == looks[-1])
    fit = factor_effects(FACTORS, observations, Direction.LOWER, threshold=THRESHOLD, design=design)
    if all(t.verdict.decided for t in fit.terms):
      break
  truths = [_truth(t.factors, t.levels) for t in fit.terms]
  covered = sum(t.low is not None and t.low <= truth <= t.high for t, truth in zip(fit.terms, truths))
  mains = all(abs(t.ratio / truth - 1) <= 0.07 for t, truth in zip(fit.terms, truths) if not t.is_interaction)
  return EffectsTrial(rounds, all(t.verdict.decided for t in fit.terms), covered, len(fit.terms),
                      any(_wrong(t.verdict, truth) for t, truth in zip(fit.terms, truths)), mains)  # fmt: skip


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--trials", type=int, default=200)
  parser.add_argument("--seed", type=int, default=1)
  parser.add_argument("--max_rounds", type=int, default=60, help="the time budget, in rounds")
  parser.add_argument("--only", choices=("race", "effects"), help="simulate only the race, or only the effects")
  args = parser.parse_args()
  rng = np.random.default_rng(args.seed)
  started = time.perf_counter()
  if args.only != "effects":
    _races(rng, args)
  if args.only != "race":
    _effects(rng, args)
  print(f"({time.perf_counter() - started:.0f} s)")


def _races(rng: np.random.Generator, args: argparse.Namespace) -> None:
  races = [race(rng, args.max_rounds) for _ in range(args.trials)]
  planted_ratio = planted(BEST) / planted(REFERENCE)
  not_best = sum(r.answer != BEST for r in races)
  beyond = sum(planted(r.answer) / planted(BEST) > 1 + THRESHOLD for r in races)
  fractions = [r.runs / (len(CELLS) * r.best_rounds) for r in races]
  covered = sum(r.ratio_low is not None and r.ratio_low <= planted_ratio <= r.ratio_high for r in races)
  print(f"race, {args.trials} trials of {len(CELLS)} cells (best {planted_ratio:.2f}x the reference),"
        f" {NOISE:.0%} log-normal noise, a {BURST}x burst in 1 run of {BURST_EVERY}, round drift:")
  print(f"  answer not the planted best: {not_best}/{args.trials}; not within {THRESHOLD:.0%} of it: {beyond}/{args.trials}")
  print(f"  runs / grid at the best's rounds: median {statistics.median(fractions):.2f}, worst {max(fractions):.2f};"
        f" over half: {sum(f > 0.5 for f in fractions)}/{args.trials}; best's rounds median"
        f" {statistics.median(r.best_rounds for r in races):g}")
  widths = [r.ratio_high / r.ratio_low for r in races if r.ratio_low is not None]
  print(f"  paired ratio's 95% interval holds {planted_ratio:.2f}: {covered}/{args.trials} ({covered / args.trials:.1%});"
        f" paired rounds median {statistics.median(r.ratio_rounds for r in races):g}, high / low median"
        f" {statistics.median(widths):.2f}")
  close = [race(rng, args.max_rounds, CLOSE.get) for _ in range(args.trials)]
  best = min(CLOSE, key=CLOSE.get)
  print(f"race, {args.trials} trials of the hard case (three candidates 1.12x the best, beyond the {THRESHOLD:.0%}"
        f" threshold), the same noise:")
  print(f"  answer not the best: {sum(r.answer != best for r in close)}/{args.trials}; not within {THRESHOLD:.0%} of it:"
        f" {sum(CLOSE[r.answer] > 1 + THRESHOLD for r in close)}/{args.trials}; runs / grid median"
        f" {statistics.median(r.runs / (len(CELLS) * r.best_rounds) for r in close):.2f}")


def _effects(rng: np.random.Generator, args: argparse.Namespace) -> None:
  sweeps = [effects(rng, args.max_rounds) for _ in range(args.trials)]
  terms = sum(s.terms for s in sweeps)
  print(f"effects, {args.trials} sweeps under auto repeats deciding on effects (at most {args.max_rounds} rounds):")
  print(f"  intervals holding their plant: {sum(s.covered for s in sweeps)}/{terms}"
        f" ({sum(s.covered for s in sweeps) / terms:.1%}); sweeps with any wrong verdict:"
        f" {sum(s.wrong for s in sweeps)}/{args.trials}")
  print(f"  every main effect within 7% of its plant: {sum(s.mains_within_7 for s in sweeps)}/{args.trials};"
        f" every term decided: {sum(s.decided for s in sweeps)}/{args.trials}, rounds median"
        f" {statistics.median(s.rounds for s in sweeps):g}")


if __name__ == "__main__":
  main()
