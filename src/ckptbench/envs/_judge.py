"""Environments judged as `run` judges a sweep: each benchmark in each environment is a variant,
compared with the same benchmark in the first environment, paired by round.

`matrix` runs its environments in interleaved rounds (engine/loop/_rounds.py), so round r
of every environment shares what the machine did then; `analysis.sweep_verdicts`
(the same function, metrics and rule as a sweep's summary.json) decides each
pair, and comparison.json's rows carry those verdicts: the gate judges what the
verdicts show.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Mapping, Sequence

from ckptbench.analysis import sweep_verdicts
from ckptbench.api import RunRecord, Verdict, VerdictRecord
from ckptbench.results import Comparison, read_records
from ckptbench.stats import Design

ENVIRONMENT = "environment"  # the swept axis environments differ in, in each verdict's `variant`


def environment_verdicts(
    out: pathlib.Path, labels: Sequence[str], design: Design, threshold: float, metric: str | None = None
) -> dict[str, list[VerdictRecord]]:
  """Each environment's verdicts against the first (label -> verdicts; `benchmark` is the suite's key).

  Args:
    out: the matrix's OUT, holding OUT/<label>/results.jsonl.
    labels: the environments, the reference first.
    design: the look the rounds stopped at.
    threshold: the relative change that matters.
    metric: only this metric (`bisect`'s); None: every judged one.
  """
  if len(labels) < 2:
    return {}
  runs = {label: read_records(out / label) for label in labels}
  in_reference = {r.key for r in runs[labels[0]]}  # a benchmark the reference lacks has nothing to pair with
  records = [_as_variant(r, label) for label, recs in runs.items() for r in recs if r.key in in_reference]
  verdicts = sweep_verdicts(records, {ENVIRONMENT: labels[0]}, paired=True, design=design, threshold=threshold)
  out_: dict[str, list[VerdictRecord]] = {label: [] for label in labels[1:]}
  for v in verdicts:
    if metric is None or v.metric == metric:
      label = v.variant[ENVIRONMENT]
      out_[label].append(dataclasses.replace(v, benchmark=v.benchmark.removeprefix(f"{label}/")))
  return out_


def _as_variant(record: RunRecord, label: str) -> RunRecord:
  """The record as a variant of an environment sweep: its own group per benchmark (so it meets the same
  benchmark of the reference environment, never another), the environment among its swept values."""
  return dataclasses.replace(
      record, key=f"{label}/{record.key}", generator=f"{record.generator} {record.key}",
      varying={ENVIRONMENT: label, **record.varying},
  )  # fmt: skip


def judged_comparison(
    comparison: Comparison, verdicts: Sequence[VerdictRecord], design: Design, threshold: float
) -> Comparison:
  """`comparison` (every metric, side by side) with the paired verdicts on the judged metrics, which alone
  are headline (what the gate judges); the rule states the looks."""
  judged: Mapping[tuple[str, str], VerdictRecord] = {(v.metric, v.benchmark): v for v in verdicts}
  rows = []
  for row in comparison.rows:
    v = judged.get((row.metric, row.benchmark))
    if v is None:
      rows.append(dataclasses.replace(row, judged=False))
      continue
    level = design.equivalence_level if v.verdict == Verdict.EQUIVALENT else design.level
    rows.append(dataclasses.replace(
        row, ratio=v.ratio, low=v.low, high=v.high, n=v.n, verdict=v.verdict, judged=True, level=level,
        n_reference=v.n, n_current=v.n, repeats_needed=v.repeats_needed, rule=v.rule, threshold=v.threshold,
    ))  # fmt: skip
  order = (Verdict.WORSE, Verdict.INCONCLUSIVE, Verdict.BETTER, Verdict.EQUIVALENT, Verdict.NOT_JUDGED)
  rows.sort(key=lambda r: (not r.judged, order.index(r.verdict), r.name or r.benchmark, r.metric))
  return dataclasses.replace(comparison, rows=tuple(rows), rule=design.rule(threshold, paired=True))
