"""The rounds of a race (`ckptbench tune`): every surviving candidate once per round, in a random order,
until one is left, the rest are equivalent to it, or the budget is spent.

After each round of `stats.RACE_LOOKS` the race looks (stats._race): a survivor
whose interval lies past a constraint's limit is dropped, then each survivor
decided worse than the best by the objective. Once one candidate is left (or
the rest are equivalent to it), the winner runs on alone until it has
`stats.ANSWER_ROUNDS` runs, enough for its median's interval, its constraints still checked. A grid of
more than `Race.max_candidates` cells is sampled first, with Optuna.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Sequence

from ckptbench.api import RunRecord, Verdict, sampled_records
from ckptbench.errors import CkptbenchError
from ckptbench.stats import ANSWER_ROUNDS, AUTO_LOOKS, RACE_LOOKS, Design, Direction, Observation, look_rates
from ckptbench.stats import metric_direction, past_limit, race_look
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
  """How a race ended: every candidate, the best's key, the direction of the objective, the sampling."""

  candidates: tuple[CandidateOutcome, ...]
  best: str | None
  direction: Direction | None
  sampled: str | None  # how the grid was sampled, None when raced whole
  seed: int


def race_rounds(
    run_plan: RunPlan, race: Race, rng, execute: Callable[[ScheduledRun], None], stop: StopRequest,
    records: list[RunRecord], progress: RunProgress, seed: int,
) -> tuple[RepeatsDone, RaceResult]:  # fmt: skip
  """Warm-ups of the candidates, then rounds of the survivors until the race ends (module docstring)."""
  benchmarks = run_plan.plan.benchmarks
  chosen, sampled = _candidates(benchmarks, race.max_candidates, seed)
  outcome: dict[int, CandidateOutcome] = {b: CandidateOutcome(benchmarks[b].key, "surviving") for b in chosen}
  if sampled:
    progress.note(sampled)
  repeats = run_plan.repeats
  for b in chosen:
    for w in range(repeats.warmups):
      if stop.requested:
        return RepeatsDone(True, 0, "interrupted"), _result(benchmarks, outcome, None, None, sampled, seed)
      execute(ScheduledRun(b, w, True))
  clock = RoundClock(repeats, time.perf_counter())
  survivors, rounds, direction, winner, stopped = list(chosen), 0, None, None, "most rounds"
  while rounds < RACE_LOOKS[-1]:
    clock.round_started()
    for b in round_order(len(survivors), rng):
      if stop.requested:
        return RepeatsDone(True, rounds, "interrupted"), _result(benchmarks, outcome, winner, direction, sampled, seed)
      execute(ScheduledRun(survivors[b], rounds, False))
    clock.round_ended()
    rounds += 1
    if direction is None:  # after the first round: every tag asked for was measured, or the race stops here
      direction = _direction(race.objective, records)
      _check_constraints(race, records)
    # A winner alone is still looked at: a constraint it breaks drops it too.
    if rounds in RACE_LOOKS:
      survivors, winner = _look(race, run_plan, records, survivors, outcome, rounds, direction, progress)
      survivors = survivors if winner is None else [winner]
    if not survivors:
      progress.note(f"race: no candidate left after {rounds} rounds (each broke a constraint or failed)")
      stopped = "no candidate left"
      break
    if winner is not None and rounds >= ANSWER_ROUNDS:
      stopped = "decided"
      break
    if not clock.next_round_fits():
      progress.note(f"race: time budget {repeats.budget_s:g} s spent after {rounds} rounds (--time_budget gives more)")
      stopped = "time budget"
      break
  if winner is None and survivors and direction is not None:  # undecided: the best so far, said as such
    winner = _best_so_far(race, run_plan, records, survivors, direction)
  # summary.json's pairwise verdicts were never looked at, but the race's looks chose each cell's runs: they
  # are judged as at the last of the most looks auto repeats take, the most conservative share.
  design = Design(early_looks=len(AUTO_LOOKS) - 1)
  return RepeatsDone(False, rounds, stopped, design), _result(benchmarks, outcome, winner, direction, sampled, seed)


def _best_so_far(
    race: Race, run_plan: RunPlan, records: Sequence[RunRecord], survivors: list[int], direction: Direction
) -> int:
  """The survivor with the best fitted objective when the race ended undecided."""
  if len(survivors) == 1:
    return survivors[0]
  keys = {run_plan.plan.benchmarks[b].key: b for b in survivors}
  look = race_look(_observations(race, records), list(keys), direction, threshold=run_plan.threshold,
                   rates=look_rates())  # fmt: skip
  return keys[look.best]


def _observations(race: Race, records: Sequence[RunRecord]) -> list[Observation]:
  """The objective of every measured run, each candidate a level."""
  return [Observation((r.key,), r.repeat, v) for r in sampled_records(records)
          if (v := r.value(race.objective)) is not None]  # fmt: skip


def _look(
    race: Race, run_plan: RunPlan, records: Sequence[RunRecord], survivors: list[int],
    outcome: dict[int, CandidateOutcome], rounds: int, direction: Direction, progress: RunProgress,
) -> tuple[list[int], int | None]:  # fmt: skip
  """One look: constraints first, then the objective; (the survivors, the winner once one is left or the
  rest are equivalent to it, else None)."""
  benchmarks = run_plan.plan.benchmarks
  rates = look_rates()
  measured = sampled_records(records)
  for b in list(survivors):
    key = benchmarks[b].key
    if not any(r.key == key and r.value(race.objective) is not None for r in measured):
      survivors.remove(b)
      outcome[b] = CandidateOutcome(key, "dropped", rounds, f"no run measured {race.objective} (every run failed?)")
      continue
    for constraint in race.constraints:
      values = [v for r in measured if r.key == key and (v := r.value(constraint.tag)) is not None]
      if past_limit(values, constraint.limit, constraint.at_most, rates.two_sided):
        survivors.remove(b)
        outcome[b] = CandidateOutcome(key, "dropped", rounds, f"breaks {constraint} (mean {_mean(values):.4g})")
        break
  if len(survivors) < 2:
    return survivors, survivors[0] if survivors else None
  keys = {benchmarks[b].key: b for b in survivors}
  look = race_look(_observations(race, records), list(keys), direction, threshold=run_plan.threshold, rates=rates)
  best = keys[look.best]
  for standing in look.worse:
    b = keys[standing.candidate]
    survivors.remove(b)
    outcome[b] = CandidateOutcome(standing.candidate, "dropped", rounds,
                                  f"worse than {benchmarks[best].name}: {_ratio_text(standing)}")  # fmt: skip
  progress.note(f"race after {rounds} rounds: {len(survivors)} of {len(outcome)} candidates left, best so far"
                f" {benchmarks[best].name}")  # fmt: skip
  left = [s for s in look.standings if keys[s.candidate] in survivors]
  if len(survivors) == 1 or all(s.verdict == Verdict.EQUIVALENT for s in left):
    for standing in left:
      b = keys[standing.candidate]
      outcome[b] = CandidateOutcome(standing.candidate, "equivalent", rounds,
                                    f"equivalent to {benchmarks[best].name}: {_ratio_text(standing)}")  # fmt: skip
    return survivors, best
  return survivors, None


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


def _result(benchmarks, outcome: dict[int, CandidateOutcome], winner: int | None, direction, sampled, seed) -> RaceResult:
  every = []
  for i, b in enumerate(benchmarks):
    found = outcome.get(i, CandidateOutcome(b.key, "not sampled"))
    every.append(dataclasses.replace(found, status="best") if i == winner else found)
  return RaceResult(tuple(every), None if winner is None else benchmarks[winner].key, direction, sampled, seed)
