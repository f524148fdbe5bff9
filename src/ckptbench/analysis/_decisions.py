"""The sweep's verdicts as data: each variant against the reference, per judged metric (`api.JUDGED`).

Computed once, when the run ends (and at each look of adaptive repeats), into
summary.json's `verdicts`; the console and the report read them from there.
With interleaved rounds the samples pair by repeat (a round), so the per-round
ratio cancels what the round shared (slow drift, a neighbour's burst).
"""

from __future__ import annotations

import statistics
from typing import Any, Mapping, Sequence

from ckptbench.api import JudgedMetric, RunRecord, Verdict, VerdictRecord, judged_metrics, memory_pass_records, sampled_records
from ckptbench.analysis._verdict import Variant, references_of, variants_of
from ckptbench.stats import Decision, Design, absolute_floor, decide, decide_settled, metric_direction, settled_rule
from ckptbench.stats import per_repeat_across_hosts


def sweep_verdicts(
    records: Sequence[RunRecord],
    reference: Mapping[str, Any] | None,
    *,
    paired: bool,
    design: Design = Design(),
    threshold: float,
) -> list[VerdictRecord]:
  """One `VerdictRecord` per variant (but the references) and judged metric.

  Each variant is compared with the reference of its own generator (see `references_of`).

  Args:
    records: results.jsonl records (`sampled_records` of them are read).
    reference: swept option values that pick the reference variant (default the first).
    paired: the rounds interleaved the variants, so repeat r of each pairs up.
    design: the error rate and the looks sharing it.
    threshold: the relative change that matters (`--threshold`; each verdict records it).
  """
  measured = sampled_records(records)
  variants = [v for v in variants_of(records) if any(r.key == v.key for r in measured)]
  refs = references_of(variants, reference)  # each generator's own
  units: dict[str, str] = {}
  for record in measured:
    for tag, entry in record.metrics.items():
      units.setdefault(tag, entry.unit)
  by_key: dict[str, list[RunRecord]] = {}
  for record in measured:
    by_key.setdefault(record.key, []).append(record)
  out = []
  for metric in judged_metrics(units):
    for variant in variants:
      ref = refs[variant.key]
      if variant.key != ref.key:
        ref_samples, samples = _by_repeat(by_key[ref.key], metric), _by_repeat(by_key[variant.key], metric)
        if _from_memory_pass(by_key[variant.key], metric):
          out.append(_memory_pass_one(metric, variant, ref, ref_samples, samples, threshold))
        else:
          out.append(_one(metric, variant, ref, ref_samples, samples, paired, design, threshold))
  return [v for v in out if v.verdict != Verdict.NOT_JUDGED]


def _one(
    metric: JudgedMetric, variant: Variant, ref: Variant, ref_samples: Mapping[int, float],
    samples: Mapping[int, float], paired: bool, design: Design, threshold: float,
) -> VerdictRecord:  # fmt: skip
  a, b = _sides(ref_samples, samples, paired)
  direction = metric_direction(metric.tag, metric.unit)
  d = decide(a, b, direction, paired=paired, threshold=threshold, design=design, floor=absolute_floor(metric.unit))
  level = design.equivalence_level if d.verdict == Verdict.EQUIVALENT else design.level
  return _record(metric, variant, ref, a, b, d, design.rule(threshold, paired), threshold, level)


def _memory_pass_one(
    metric: JudgedMetric, variant: Variant, ref: Variant, ref_samples: Mapping[int, float],
    samples: Mapping[int, float], threshold: float,
) -> VerdictRecord:  # fmt: skip
  """A memory pass's readings (engine/memory/_pass.py), by the pass's own rule (stats/_settled.py), at one
  look of its own: its readings came in one batch after the timed runs' looks."""
  a, b = list(ref_samples.values()), list(samples.values())  # in the order read
  direction = metric_direction(metric.tag, metric.unit)
  d = decide_settled(a, b, direction, threshold=threshold, floor=absolute_floor(metric.unit))
  return _record(metric, variant, ref, a, b, d, settled_rule(threshold), threshold, d.level)


def _sides(ref_samples: Mapping[int, float], samples: Mapping[int, float], paired: bool) -> tuple[list, list]:
  if paired:  # the rounds both ran, in round order
    rounds = sorted(set(ref_samples) & set(samples))
    return [ref_samples[r] for r in rounds], [samples[r] for r in rounds]
  return list(ref_samples.values()), list(samples.values())


def _record(metric, variant, ref, a, b, d: Decision, rule: str, threshold: float, level: float) -> VerdictRecord:
  return VerdictRecord(
      metric=metric.tag, benchmark=variant.key, variant=dict(variant.varying), reference=dict(ref.varying),
      ratio=d.ratio, low=d.low, high=d.high, n=d.n, verdict=d.verdict, rule=rule,
      repeats_needed=d.repeats_needed, threshold=threshold, judged=True, name=variant.name, unit=metric.unit,
      direction=metric_direction(metric.tag, metric.unit).value, reference_median=statistics.median(a) if a else None,
      current_median=statistics.median(b) if b else None, n_reference=len(a), n_current=len(b), level=level,
  )  # fmt: skip


def _from_memory_pass(records: Sequence[RunRecord], metric: JudgedMetric) -> bool:
  """The metric's samples come from a memory pass (engine/memory/_pass.py), not the timed runs."""
  return any(r.value(metric.tag) is not None for r in memory_pass_records(records))


def _by_repeat(records: Sequence[RunRecord], metric: JudgedMetric) -> dict[int, float]:
  """{repeat: value}, the worst host's value of each repeat."""
  by_host: dict[int, dict[int, float]] = {}
  for record in records:
    value = record.value(metric.tag)
    if value is not None:
      by_host.setdefault(record.host, {})[record.repeat] = value
  repeats = sorted({r for values in by_host.values() for r in values})
  return dict(zip(repeats, per_repeat_across_hosts(by_host, metric_direction(metric.tag, metric.unit))))


def undecided(verdicts: Sequence[VerdictRecord]) -> list[VerdictRecord]:
  """The verdicts adaptive repeats still wait for."""
  return [v for v in verdicts if not v.verdict.decided]
