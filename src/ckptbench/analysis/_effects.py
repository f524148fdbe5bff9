"""The sweep's effects as data: each factor's main effect and each pair's interaction, per judged metric.

Computed once, when the run ends (and at each look of auto repeats that decide on effects), into
summary.json's `effects` and `interactions` (the model and the rule: stats._effects); the console and
the report read them from there. The factors are the options a generator's variants sweep, and the
mesh and the checkpoint config when the suite has several. A sweep with fewer than two factors has
no effects: its verdicts already compare each level with the reference.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, Sequence

from ckptbench.api import ConditionalRecord, EffectRecord, InteractionRecord, JudgedMetric, RunRecord, Verdict
from ckptbench.api import judged_metrics, level_labels, timed_runs
from ckptbench.analysis._verdict import references_of, variants_of
from ckptbench.stats import Design, Factor, Observation, absolute_floor, factor_effects, metric_direction
from ckptbench.stats import per_repeat_across_hosts

MESH_FACTOR = "mesh"
CHECKPOINT_FACTOR = "checkpoint_config"


@dataclasses.dataclass(frozen=True)
class SweepEffects:
  """What summary.json carries: the effects, the interactions, and what a reader must know (cells never
  measured, metrics a log model does not fit)."""

  effects: tuple[EffectRecord, ...] = ()
  interactions: tuple[InteractionRecord, ...] = ()
  notes: tuple[str, ...] = ()

  @property
  def undecided(self) -> list[EffectRecord | InteractionRecord]:
    """The terms auto repeats still wait for when they decide on effects."""
    return [t for t in (*self.effects, *self.interactions) if not t.verdict.decided]


def sweep_effects(
    records: Sequence[RunRecord],
    reference: Mapping[str, Any] | None,
    *,
    paired: bool,
    design: Design = Design(),
    threshold: float,
) -> SweepEffects:
  """Main effects and two-factor interactions of each generator's sweep, per judged metric.

  Args:
    records: results.jsonl records (warm-ups, failed runs and memory-pass runs are left out).
    reference: swept option values that pick the reference variant, whose levels are the reference levels.
    paired: the rounds interleaved the variants, so the round is a block of the model.
    design: the look's error rates (Holm divides them across a metric's terms).
    threshold: the relative change that matters (`--threshold`).
  """
  measured = [r for r in timed_runs(records) if not r.failed]
  variants = [v for v in variants_of(records) if any(r.key == v.key for r in measured)]
  refs = references_of(variants, reference)
  effects: list[EffectRecord] = []
  interactions: list[InteractionRecord] = []
  notes: list[str] = []
  for ref_key in dict.fromkeys(r.key for r in refs.values()):
    group = {v.key for v in variants if refs[v.key].key == ref_key}
    runs = [r for r in measured if r.key in group]
    levels = _levels(runs)
    factors = _factors(levels, levels[ref_key])
    if len(factors) < 2:
      continue
    originals = {(name, str(value)): value for cell in levels.values() for name, value in cell.items()}
    for metric in judged_metrics({tag: e.unit for r in runs for tag, e in r.metrics.items()}):
      if absolute_floor(metric.unit) > 0:
        continue  # memory: changes near zero, judged as differences; a log model does not fit them
      fit = _fit(metric, runs, levels, factors, design, threshold, paired)
      if fit is None:
        notes.append(f"effects of {metric.tag}: not modelled (a value was not positive)")
        continue
      for term in fit.terms:
        if term.is_interaction:
          interactions.append(_interaction(metric, term, originals, threshold, fit.rounds))
        else:
          effects.append(_effect(metric, term, originals, threshold, fit.rounds))
      if fit.missing_cells:
        cells = "; ".join(", ".join(f"{f.name}={lv}" for f, lv in zip(factors, c)) for c in fit.missing_cells[:4])
        more = f" and {len(fit.missing_cells) - 4} more" if len(fit.missing_cells) > 4 else ""
        notes.append(f"effects of {metric.tag}: {len(fit.missing_cells)} cell(s) of the grid not measured ({cells}"
                     f"{more}); each term is averaged over the combinations whose cells were all measured")  # fmt: skip
  return SweepEffects(tuple(effects), tuple(interactions), tuple(dict.fromkeys(notes)))


def _levels(runs: Sequence[RunRecord]) -> dict[str, dict[str, Any]]:
  """Each run's level of every candidate factor, by its key: its swept options, its mesh and its checkpoint
  config, the last two named as every table names them (`level_labels`: `spec: 16 arrays`)."""
  first = {r.key: r for r in runs}
  meshes = dict(zip(first, level_labels([r.mesh for r in first.values()])))
  checkpoints = dict(zip(first, level_labels([r.checkpoint_config for r in first.values()])))
  return {r.key: {**r.varying, MESH_FACTOR: meshes[r.key], CHECKPOINT_FACTOR: checkpoints[r.key]} for r in runs}


def _factors(levels: Mapping[str, Mapping[str, Any]], reference: Mapping[str, Any]) -> list[Factor]:
  """The candidate factors with two or more levels among the group's runs, levels in first-seen order."""
  factors = []
  for name in reference:
    seen = list(dict.fromkeys(str(cell.get(name)) for cell in levels.values()))
    if len(seen) > 1:
      factors.append(Factor(name, tuple(seen), str(reference[name])))
  return factors


def _fit(
    metric: JudgedMetric, runs: Sequence[RunRecord], levels: Mapping[str, Mapping[str, Any]],
    factors: Sequence[Factor], design: Design, threshold: float, paired: bool,
):  # fmt: skip
  """The metric's factorial fit; None when a value is not positive (no log)."""
  direction = metric_direction(metric.tag, metric.unit)
  by_cell_host: dict[tuple[str, int], dict[int, float]] = {}
  for record in runs:
    value = record.value(metric.tag)
    if value is not None and math.isfinite(value):
      by_cell_host.setdefault((record.key, record.repeat), {})[record.host] = value
  observations = []
  for (key, repeat), by_host in by_cell_host.items():
    value = per_repeat_across_hosts({h: {repeat: v} for h, v in by_host.items()}, direction)[0]
    if value <= 0:
      return None
    cell = tuple(str(levels[key].get(f.name)) for f in factors)
    observations.append(Observation(cell, repeat, value))
  return factor_effects(factors, observations, direction, threshold=threshold, design=design, blocks=paired)


def _effect(metric: JudgedMetric, term, originals, threshold: float, rounds: int) -> EffectRecord:
  (name,), (level,), (reference,) = term.factors, term.levels, term.reference_levels
  return EffectRecord(
      metric=metric.tag, factor=name, level=originals[(name, level)], reference_level=originals[(name, reference)],
      ratio=term.ratio, low=term.low, high=term.high, verdict=term.verdict, threshold=threshold,
      confidence=term.confidence, repeats_needed=term.repeats_needed, rounds=rounds,
      combinations=term.combinations, possible=term.possible,
  )  # fmt: skip


def _interaction(metric: JudgedMetric, term, originals, threshold: float, rounds: int) -> InteractionRecord:
  conditional = tuple(
      ConditionalRecord(c.factor, originals[(c.factor, c.level)], originals[(c.factor, c.reference_level)],
                        c.given_factor, originals[(c.given_factor, c.given_level)], c.ratio, c.low, c.high)
      for c in term.conditionals
  )  # fmt: skip
  return InteractionRecord(
      metric=metric.tag, factors=term.factors,
      levels={n: originals[(n, lv)] for n, lv in zip(term.factors, term.levels)},
      reference_levels={n: originals[(n, lv)] for n, lv in zip(term.factors, term.reference_levels)},
      ratio=term.ratio, low=term.low, high=term.high, verdict=term.verdict, threshold=threshold,
      confidence=term.confidence, repeats_needed=term.repeats_needed, rounds=rounds,
      combinations=term.combinations, possible=term.possible, conditional=conditional,
  )  # fmt: skip


def decided_interactions(interactions: Sequence[InteractionRecord]) -> list[InteractionRecord]:
  """The interactions whose conditional table is worth showing: decided worse or better."""
  return [i for i in interactions if i.verdict in (Verdict.WORSE, Verdict.BETTER)]
