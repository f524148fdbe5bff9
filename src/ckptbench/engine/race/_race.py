"""The rounds of a race (`ckptbench tune`): every surviving candidate once per round, in a random order,
until one is left, the rest are equivalent to it, or the budget is spent.

After each round of `stats.RACE_LOOKS` the race looks (stats._race): a survivor
whose interval lies past a constraint's limit is dropped, then each survivor
decided worse than the best by the objective. Once one candidate is left (or
the rest are equivalent to it), the winner runs on alone until it has
`stats.ANSWER_ROUNDS` runs, enough for its median's interval, its constraints still checked.
The suite's reference, when raced, runs in each of the first `stats.ANSWER_ROUNDS`
rounds, dropped or not: the answer's ratio to it is paired over the rounds both ran. Once every
survivor's ratio to it is decided beyond the threshold (`stats.reference_settled`) it stops. A grid of
more than `Race.max_candidates` cells is sampled first, with Optuna.
"""

from __future__ import annotations

import dataclasses
import random
import time
from typing import Any, Callable, Mapping, Sequence

from ckptbench.api import RunRecord, Verdict, sampled_records
from ckptbench.errors import CkptbenchError
from ckptbench.stats import ANSWER_ROUNDS, AUTO_LOOKS, RACE_LOOKS, Design, Direction, Observation, RaceRule, Rates
from ckptbench.stats import metric_direction, past_limit, race_look, reference_settled
from ckptbench.views import RunProgress
from ckptbench.engine.race._spec import Race
from ckptbench.engine.loop._rounds import RepeatsDone, RoundClock, round_order
from ckptbench.engine._run_plan import RunPlan
from ckptbench.engine.loop._schedule import ScheduledRun
from ckptbench.engine.loop._stop import StopRequest
from ckptbench.engine._sweep import PlannedBenchmark


@dataclasses.dataclass(frozen=True)
class CandidateOutcome:
  """One candidate of a race: its benchmark, how it ended, and when and why it was dropped.

  Attributes:
    key: the benchmark's key.
    status: `best`, `equivalent` (to the best), `surviving` (undecided when the race ended),
      `dropped` or `not sampled`.
    dropped_round: the round after which it was dropped (None: not dropped).
    why: why it was dropped, or why it is equivalent.
  """

  key: str
  status: str
  dropped_round: int | None = None
  why: str = ""


@dataclasses.dataclass(frozen=True)
class RaceResult:
  """How a race ended: every candidate, the best's key, the suite's reference's key (when raced: it runs in the
  first `ANSWER_ROUNDS` rounds, or until its ratios are decided, for the answer's paired ratio), the direction of
  the objective, the sampling."""

  candidates: tuple[CandidateOutcome, ...]
  best: str | None
  reference: str | None
  direction: Direction | None
  sampled: str | None  # how the grid was sampled, None when raced whole
  seed: int


@dataclasses.dataclass(frozen=True)
class RaceRun:
  """What a race runs with, built once by the runner.

  Attributes:
    run_plan: the run's plan (its benchmarks are the grid; its reference, the answer's ratio's).
    race: the objective and constraints.
    rng: the rounds' random order.
    execute: runs one scheduled run, its record appended to `records`.
    stop: the user's request to stop.
    records: the run's records as they arrive (the looks read them).
    progress: where the race's notes go.
    seed: the sampler's seed (tune.json records it).
    now: the run's clock for its time budget (`RoundClock`).
  """

  run_plan: RunPlan
  race: Race
  rng: random.Random
  execute: Callable[[ScheduledRun], None]
  stop: StopRequest
  records: list[RunRecord]
  progress: RunProgress
  seed: int
  now: Callable[[], float] = time.perf_counter


@dataclasses.dataclass(frozen=True)
class LookOutcome:
  """What one look decided: the survivors after it, the winner (once one is left or the rest are equivalent to
  it), and the candidates whose status it changed."""

  survivors: tuple[int, ...]
  winner: int | None
  changed: Mapping[int, CandidateOutcome]


def race_rounds(run: RaceRun) -> tuple[RepeatsDone, RaceResult]:
  """Warm-ups of the candidates, then rounds of the survivors (and the suite's reference beside them in the first
  rounds) until the race ends (module docstring)."""
  benchmarks = run.run_plan.plan.benchmarks
  chosen, sampled = _candidates(benchmarks, run.race.max_candidates, run.seed)
  reference = _reference(run.run_plan, chosen)
  outcome: dict[int, CandidateOutcome] = {b: CandidateOutcome(benchmarks[b].key, "surviving") for b in chosen}

  def result(winner: int | None, rule: RaceRule | None) -> RaceResult:
    return _result(benchmarks, outcome, winner, reference, rule, sampled, run.seed)

  if sampled:
    run.progress.note(sampled)
  repeats = run.run_plan.repeats
  if not _warm_up(run, chosen):
    return RepeatsDone(True, 0, "interrupted"), result(None, None)
  clock = RoundClock(repeats, run.now)
  survivors, rounds, rule, winner, stopped = list(chosen), 0, None, None, "most rounds"
  settled = False  # every survivor's paired ratio to the reference decided: it need not run beside them
  while rounds < RACE_LOOKS[-1]:
    clock.round_started()
    # The reference runs beside the survivors for the answer's first rounds: its ratio to the answer is paired over
    # the rounds both ran, and the answer runs in every round.
    beside = reference is not None and reference not in survivors and rounds < ANSWER_ROUNDS and not settled
    running = [*survivors, reference] if beside else survivors
    for b in round_order(len(running), run.rng):
      if run.stop.requested:
        return RepeatsDone(True, rounds, "interrupted"), result(winner, rule)
      run.execute(ScheduledRun(running[b], rounds, False))
    clock.round_ended()
    rounds += 1
    if rule is None:  # after the first round: every tag asked for was measured, or the race stops here
      rule = RaceRule(_direction(run.race.objective, run.records), run.run_plan.threshold, len(run.race.constraints))
      _check_constraints(run.race, run.records)
    # A winner alone is still looked at: a constraint it breaks drops it too.
    if rounds in RACE_LOOKS:
      look = _look(run, survivors, rounds, rule, len(chosen))
      outcome.update(look.changed)
      survivors, winner = list(look.survivors), look.winner
      survivors = survivors if winner is None else [winner]
    if beside and survivors:
      settled = _reference_settled(run, survivors, reference)
    if not survivors:
      run.progress.note(f"race: no candidate left after {rounds} rounds (each broke a constraint or failed)")
      stopped = "no candidate left"
      break
    if winner is not None and rounds >= ANSWER_ROUNDS:
      stopped = "decided"
      break
    if not clock.next_round_fits():
      run.progress.note(f"race: time budget {repeats.budget_s:g} s spent after {rounds} rounds (--time_budget gives more)")
      stopped = "time budget"
      break
  if winner is None and survivors and rule is not None:  # undecided: the best so far, said as such
    winner = _best_so_far(run, survivors, rule)
  # summary.json's pairwise verdicts were never looked at, but the race's looks chose each cell's runs: they
  # are judged as at the last of the most looks auto repeats take, the most conservative share.
  design = Design(early_looks=len(AUTO_LOOKS) - 1)
  return RepeatsDone(False, rounds, stopped, design), result(winner, rule)


def _warm_up(run: RaceRun, chosen: Sequence[int]) -> bool:
  """Each candidate's warm-ups; False when a stop was asked for on the way."""
  for b in chosen:
    for w in range(run.run_plan.repeats.warmups):
      if run.stop.requested:
        return False
      run.execute(ScheduledRun(b, w, True))
  return True


def _reference(run_plan: RunPlan, chosen: Sequence[int]) -> int | None:
  """The raced benchmark the suite names as its reference (its swept values), if any."""
  wanted = run_plan.reference or {}
  for b in chosen:
    varying = run_plan.plan.benchmarks[b].varying
    if all(str(varying.get(k)).lower() == str(v).lower() for k, v in wanted.items()):
      return b
  return None


def _reference_settled(run: RaceRun, survivors: Sequence[int], reference: int) -> bool:
  benchmarks = run.run_plan.plan.benchmarks
  return reference_settled(_observations(run.race, run.records), [benchmarks[b].key for b in survivors],
                           benchmarks[reference].key, run.run_plan.threshold)  # fmt: skip


def _best_so_far(run: RaceRun, survivors: list[int], rule: RaceRule) -> int:
  """The survivor with the best fitted objective when the race ended undecided."""
  if len(survivors) == 1:
    return survivors[0]
  keys = {run.run_plan.plan.benchmarks[b].key: b for b in survivors}
  look = race_look(_observations(run.race, run.records), list(keys), rule, look_after=RACE_LOOKS[-1])
  return keys[look.best]


def _observations(race: Race, records: Sequence[RunRecord]) -> list[Observation]:
  """The objective of every measured run, each candidate a level."""
  return [Observation((r.key,), r.repeat, v) for r in sampled_records(records)
          if (v := r.value(race.objective)) is not None]  # fmt: skip


def _look(run: RaceRun, survivors: Sequence[int], rounds: int, rule: RaceRule, raced: int) -> LookOutcome:
  """One look: constraints first, then the objective, each test at its share of the look's alpha (`RaceRule`);
  `raced`: the candidates the race started with."""
  benchmarks = run.run_plan.plan.benchmarks
  rates = rule.rates(rounds, len(survivors))
  measured = sampled_records(run.records)
  left, changed = [], {}
  for b in survivors:
    key = benchmarks[b].key
    if not any(r.key == key and r.value(run.race.objective) is not None for r in measured):
      changed[b] = CandidateOutcome(key, "dropped", rounds, f"no run measured {run.race.objective} (every run failed?)")
      continue
    broken = _broken_constraint(run.race, [r for r in measured if r.key == key], rates)
    if broken:
      changed[b] = CandidateOutcome(key, "dropped", rounds, broken)
    else:
      left.append(b)
  if len(left) < 2:
    return LookOutcome(tuple(left), left[0] if left else None, changed)
  keys = {benchmarks[b].key: b for b in left}
  look = race_look(_observations(run.race, run.records), list(keys), rule, look_after=rounds)
  best = keys[look.best]
  for standing in look.worse:
    changed[keys[standing.candidate]] = CandidateOutcome(
        standing.candidate, "dropped", rounds, f"worse than {benchmarks[best].name}: {_ratio_text(standing)}")
  kept = tuple(b for b in left if b not in changed)
  run.progress.note(f"race after {rounds} rounds: {len(kept)} of {raced} candidates left, best so far"
                    f" {benchmarks[best].name}")  # fmt: skip
  if not look.decided:
    return LookOutcome(kept, None, changed)
  for standing in look.standings:
    if standing.verdict == Verdict.EQUIVALENT:
      changed[keys[standing.candidate]] = CandidateOutcome(
          standing.candidate, "equivalent", rounds, f"equivalent to {benchmarks[best].name}: {_ratio_text(standing)}")
  return LookOutcome(kept, best, changed)


def _broken_constraint(race: Race, runs: Sequence[RunRecord], rates: Rates) -> str | None:
  """Why a candidate breaks a constraint (its interval wholly past the limit, at a test's share), or None."""
  for constraint in race.constraints:
    values = [v for r in runs if (v := r.value(constraint.tag)) is not None]
    if past_limit(values, constraint.limit, at_most=constraint.at_most, tail=rates.equivalence):
      return f"breaks {constraint} (mean {_mean(values):.4g})"
  return None


def _ratio_text(standing) -> str:
  bounds = "" if standing.low is None else f" [{standing.low:.3g}-{standing.high:.3g}]"
  return f"{standing.ratio:.3g}x{bounds}"


def _mean(values: Sequence[float]) -> float:
  return sum(values) / len(values)


def _direction(objective: str, records: Sequence[RunRecord]) -> Direction:
  """The objective's direction, from the unit a run recorded it in.

  Raises:
    CkptbenchError: no run measured it (the tags that were measured are named), or it is neutral.
  """
  for record in records:
    entry = record.metrics.get(objective)
    if entry is not None:
      direction = metric_direction(objective, entry.unit)
      if direction == Direction.NEUTRAL:
        raise CkptbenchError(f"--objective {objective}: a neutral metric (a count or a size) has no best; give a"
                             " time, a throughput or a memory tag")  # fmt: skip
      return direction
  measured = sorted({t for r in records for t in r.metrics if t.endswith(("/time_s", "_gbps"))})
  raise CkptbenchError(f"--objective {objective}: no run measured it; measured tags include {', '.join(measured[:8])}")


def _check_constraints(race: Race, records: Sequence[RunRecord]) -> None:
  """Raises CkptbenchError for a constraint whose tag no run measured (it could never drop anything)."""
  measured = {t for r in records for t in r.metrics}
  for constraint in race.constraints:
    if constraint.tag not in measured:
      near = sorted(t for t in measured if t.split("/")[-1] == constraint.tag.split("/")[-1])
      hint = f"; measured: {', '.join(near[:6])}" if near else ""
      raise CkptbenchError(f"--constraint '{constraint}': no run measured {constraint.tag}{hint}")


def _candidates(benchmarks: Sequence[PlannedBenchmark], most: int, seed: int) -> tuple[list[int], str | None]:
  """The benchmarks to race: all of them, or `most` sampled by Optuna over the grid's factors."""
  if len(benchmarks) <= most:
    return list(range(len(benchmarks))), None
  import optuna  # noqa: PLC0415  (only for grids too large to race)

  optuna.logging.set_verbosity(optuna.logging.WARNING)
  cells = {_cell(b): i for i, b in enumerate(benchmarks)}
  names = list(dict.fromkeys(n for cell in cells for n, _ in cell))
  choices = {n: sorted({v for cell in cells for k, v in cell if k == n}) for n in names}
  study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
  chosen: list[int] = []
  for _ in range(20 * most):  # combinations the plan lacks (invalid ones) are skipped
    if len(chosen) == most:
      break
    trial = study.ask()
    cell = tuple((n, trial.suggest_categorical(n, choices[n])) for n in names)
    study.tell(trial, 0.0)
    if cell in cells and cells[cell] not in chosen:
      chosen.append(cells[cell])
  how = (f"race: the grid has {len(benchmarks)} cells, over the {most} a race takes: racing {len(chosen)} sampled"
         f" by Optuna's RandomSampler (seed {seed}) over the grid's factors, each cell once")  # fmt: skip
  return sorted(chosen), how


def _cell(benchmark: PlannedBenchmark) -> tuple[tuple[str, Any], ...]:
  """A benchmark's point of the grid as text: its options, mesh and checkpoint config."""
  levels = {k: str(v) for k, v in benchmark.varying.items()}
  return (*levels.items(), ("mesh", str(benchmark.mesh_index)), ("checkpoint", str(benchmark.checkpoint_index)))


def _result(
    benchmarks: Sequence[PlannedBenchmark], outcome: Mapping[int, CandidateOutcome], winner: int | None,
    reference: int | None, rule: RaceRule | None, sampled: str | None, seed: int,
) -> RaceResult:  # fmt: skip
  every = []
  for i, b in enumerate(benchmarks):
    found = outcome.get(i, CandidateOutcome(b.key, "not sampled"))
    every.append(dataclasses.replace(found, status="best") if i == winner else found)
  key = lambda i: None if i is None else benchmarks[i].key  # noqa: E731
  return RaceResult(tuple(every), key(winner), key(reference), None if rule is None else rule.direction, sampled, seed)
