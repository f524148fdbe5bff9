"""`ckptbench.tune`: the best setting of a suite's grid on this machine and storage, by racing it.

A race (engine/race/_race.py) runs the suite as `ckptbench.run` does (the same OUT,
store targets, links and views), dropping candidates as they are decided worse
than the best or past a constraint, and OUT/tune.json says what it found: the
best setting with its median and interval and its ratio to the suite's
reference, every candidate's status (the round it was dropped, and why), the
runs measured, and what the whole grid would have cost at the repeats the best
got. The answer is one line a user can paste into a config.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Sequence

from ckptbench.api import RunRecord, is_host_memory_tag, timed_runs, warmup_runs
from ckptbench.errors import EXIT_BENCHMARK_FAILED, CkptbenchError
from ckptbench.results import write_json_atomic
from ckptbench.stats import DEFAULT_ALPHA, Observation, median_interval, race_ratio
from ckptbench.engine._entry import RunOutcome, run
from ckptbench.engine.race._race import RaceResult
from ckptbench.engine.race._spec import MAX_RACED, Constraint, Race
from ckptbench.engine._settings import RunSettings
from ckptbench.engine.memory._pass_choices import asked_host_memory

TUNE_FILE = "tune.json"
TUNE_SCHEMA_VERSION = 1


@dataclasses.dataclass(frozen=True)
class TuneOutcome:
  """What `tune` found.

  Attributes:
    run: the race's run (OUT as `ckptbench run` writes it).
    document: tune.json's content.
    answer: the best setting as one line of YAML (None: no candidate kept every constraint).
    path: where tune.json is.
  """

  run: RunOutcome
  document: dict[str, Any]
  answer: str | None
  path: pathlib.Path

  @property
  def exit_code(self) -> int:
    """The run's code; 1 when no candidate was left to answer with."""
    code = self.run.exit_code
    return code if code or self.answer is not None else EXIT_BENCHMARK_FAILED


def tune(
    suite: Any,
    settings: RunSettings,
    objective: str,
    constraints: Sequence[str | Constraint] = (),
    *,
    max_candidates: int = MAX_RACED,
    seed: int | None = None,
) -> TuneOutcome:
  """Races the suite's grid for the best `objective` within `constraints`; writes OUT/tune.json.

  Args:
    suite: a suite file's path, or a loaded `Suite` (as `ckptbench.run` takes).
    settings: the run's settings (OUT, checkpoint root and link, time budget, threshold).
    objective: the tag to make best, e.g. `save_0_basics/time_s` (a time lower, a throughput higher).
    constraints: `'TAG <= VALUE'` / `'TAG >= VALUE'` limits a candidate must keep.
    max_candidates: a larger grid is sampled down to this many cells (Optuna).
    seed: the sampler's seed (default a fresh one, recorded).

  Returns:
    The outcome; `outcome.answer` is the best setting as one line of YAML.

  Raises:
    CkptbenchError: a malformed constraint, a host-memory tag with `host_memory: pass`, an objective
      no run measured.

  Example:
    >>> outcome = ckptbench.tune("examples/three_factor.yaml", ckptbench.RunSettings(output_dir="out"),
    ...                          "save_0_basics/time_s", ["save_7_memory/host_rss_peak_diff_mib <= 1536"])
    >>> print(outcome.answer)
    {use_ocdbt: false, use_zarr3: false, save_concurrent_gb: 1.0}
  """
  parsed = tuple(c if isinstance(c, Constraint) else Constraint.parse(c) for c in constraints)
  race = Race(objective, parsed, max_candidates, seed)
  outcome = run(suite, dataclasses.replace(settings, race=race, host_memory=_host_memory(race, settings)))
  if not outcome.is_writer:
    return TuneOutcome(outcome, {}, None, outcome.output_dir / TUNE_FILE)
  document, answer = _document(outcome, race, settings.regression_threshold)
  path = outcome.output_dir / TUNE_FILE
  write_json_atomic(path, document)
  return TuneOutcome(outcome, document, answer, path)


def _host_memory(race: Race, settings: RunSettings) -> str:
  """Host memory in the race's own runs when a tag asks for it (a race's looks need it as they go; a memory
  pass measures after the rounds), else not at all."""
  wanted = any(is_host_memory_tag(t) for t in race.tags)
  if wanted and asked_host_memory(settings.host_memory) == "pass":
    raise CkptbenchError("tune measures host memory in the race's own runs (host_memory inline): its looks need"
                         " it as the rounds go, and a memory pass measures only after them")  # fmt: skip
  return "inline" if wanted else "off"


def _document(outcome: RunOutcome, race: Race, threshold: float) -> tuple[dict[str, Any], str | None]:
  """tune.json's content and the answer line."""
  repeats = outcome.summary.repeats or {}
  result: RaceResult | None = outcome.race
  benchmarks = {b.key: b for b in outcome.plan.benchmarks}
  timed = timed_runs(outcome.records)
  rounds = {key: len({r.repeat for r in timed if r.key == key}) for key in benchmarks}
  best = result.best if result else None
  candidates = [{
      "name": benchmarks[c.key].name, "key": c.key, "options": dict(benchmarks[c.key].varying), "status": c.status,
      "dropped_round": c.dropped_round, "why": c.why, "rounds": rounds[c.key],
      "median": _median(timed, c.key, race.objective),
  } for c in (result.candidates if result else ())]  # fmt: skip
  best_rounds = rounds.get(best, 0) if best else 0
  document = {
      "schema_version": TUNE_SCHEMA_VERSION, "suite": outcome.summary.suite, "objective": race.objective,
      "direction": None if result is None or result.direction is None else result.direction.value,
      "constraints": [str(c) for c in race.constraints], "threshold": threshold,
      "time_budget_s": repeats.get("time_budget_s"), "rounds": repeats.get("rounds"),
      "stopped": repeats.get("stopped"), "interrupted": outcome.interrupted,
      "best": _best(outcome, race, best, timed) if best else None, "candidates": candidates,
      "runs_measured": len(timed), "warmups": len(warmup_runs(outcome.records)),
      "grid_cells": len(benchmarks), "best_rounds": best_rounds, "grid_runs_at_same_repeats": len(benchmarks) * best_rounds,
      "sampled": result.sampled if result else None, "seed": result.seed if result else None,
  }  # fmt: skip
  answer = _flow_yaml(benchmarks[best].varying) if best else None
  return document, answer


def _median(records: Sequence[RunRecord], key: str, tag: str) -> float | None:
  found = median_interval([v for r in records if r.key == key and not r.failed and (v := r.value(tag)) is not None])
  return None if found is None else found.median


def _best(outcome: RunOutcome, race: Race, best: str, timed: Sequence[RunRecord]) -> dict[str, Any]:
  """The best candidate: its options, median and interval, and its ratio to the suite's reference."""
  values = [v for r in timed if r.key == best and not r.failed and (v := r.value(race.objective)) is not None]
  interval = median_interval(values)
  unit = next((r.metrics[race.objective].unit for r in timed if race.objective in r.metrics), None)
  reference = _reference_key(outcome)
  observations = [Observation((r.key,), r.repeat, v) for r in timed
                  if not r.failed and (v := r.value(race.objective)) is not None]  # fmt: skip
  ratio = low = high = None
  if reference is not None and any(o.levels[0] == reference for o in observations):
    ratio, low, high = race_ratio(observations, best, reference, DEFAULT_ALPHA)
  plan = {b.key: b for b in outcome.plan.benchmarks}
  return {
      "key": best, "name": plan[best].name, "options": dict(plan[best].varying), "unit": unit,
      "median": interval.median if interval else None, "low": interval.low if interval else None,
      "high": interval.high if interval else None, "coverage": interval.coverage if interval else None,
      "rounds": len(values), "reference": None if reference is None else dict(plan[reference].varying),
      "ratio_to_reference": ratio, "ratio_low": low, "ratio_high": high, "ratio_level": 1 - DEFAULT_ALPHA,
      "constraints": [_kept(c, [v for r in timed if r.key == best and (v := r.value(c.tag)) is not None])
                      for c in race.constraints],
  }  # fmt: skip


def _kept(constraint: Constraint, values: Sequence[float]) -> dict[str, Any]:
  """The best's mean of a constraint's tag, and whether it is within the limit (a best whose interval lay
  wholly past it would have been dropped; one whose mean is past it is not decided either way)."""
  mean = sum(values) / len(values) if values else None
  within = mean is not None and (mean <= constraint.limit if constraint.at_most else mean >= constraint.limit)
  return {"constraint": str(constraint), "mean": mean, "within_limit": within}


def _reference_key(outcome: RunOutcome) -> str | None:
  """The benchmark the suite names as its reference (its swept values), if it was raced."""
  wanted = outcome.summary.reference or {}
  for b in outcome.plan.benchmarks:
    if all(str(b.varying.get(k)).lower() == str(v).lower() for k, v in wanted.items()):
      return b.key
  return None


def _flow_yaml(options: dict[str, Any]) -> str:
  """`{use_ocdbt: true, save_concurrent_gb: 8}`: one line of YAML."""
  import yaml  # noqa: PLC0415

  return yaml.safe_dump(dict(options), default_flow_style=True, sort_keys=False, width=10_000).strip()
