"""A verdict as data: one compared metric, as summary.json and comparison.json carry it."""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any, Mapping

from ckptbench.api._values import SchemaError, json_fields
from ckptbench.api._tags import current_tag


class Verdict(str, enum.Enum):
  """The outcome of comparing one metric with its reference (the rule: stats._decide)."""

  BETTER = "better"
  WORSE = "worse"
  EQUIVALENT = "equivalent"
  INCONCLUSIVE = "inconclusive"
  NOT_JUDGED = "not judged"  # neutral metrics: counts, sizes, inventory

  @property
  def decided(self) -> bool:
    return self in (Verdict.BETTER, Verdict.WORSE, Verdict.EQUIVALENT)

  @property
  def passes(self) -> bool:
    """Whether "no regression" may be said of it: equivalent or better (or a metric never judged)."""
    return self in (Verdict.BETTER, Verdict.EQUIVALENT, Verdict.NOT_JUDGED)


def threshold_text(threshold: float | None) -> str:
  """The threshold as every rule and legend states it: `25%` (0.25), `7.5%` (0.075); "the threshold" for a
  file written before verdicts carried it."""
  return "the threshold" if threshold is None else f"{100 * threshold:.4g}%"


@dataclasses.dataclass(frozen=True)
class VerdictRecord:
  """One compared metric: each of summary.json's `verdicts` and each of comparison.json's `rows` (its
  `verdicts` are the judged rows).

  Attributes:
    metric: the tag, e.g. `save_0_basics/time_s`.
    benchmark: the compared benchmark's key.
    variant: its swept option values (a baseline comparison: `{"benchmark": name}`).
    reference: what it was compared with: the reference variant's swept
      options, or `{"baseline": label}`.
    ratio: estimate of current / reference; None when a ratio has no meaning.
    low: lower end of the ratio's interval; None when unbounded (too few repeats).
    high: upper end.
    n: rounds paired, or the smaller sample when unpaired.
    verdict: better, worse, equivalent, inconclusive, or not judged (a comparison's neutral rows).
    rule: the rule and confidence level that gave the verdict, in words.
    repeats_needed: for inconclusive, about how many repeats a decision needs.
    threshold: the relative change that counted (0.25 = 25%: `--threshold`); None in
      files written before verdicts carried it (their `rule` states it).
    judged: whether the metric is one a suite is judged on (`api.JUDGED`: what the gate fails on);
      a comparison also carries the rows it does not judge.
    name: the benchmark's name as the console shows it (comparisons; None in summary.json).
    unit: the metric's unit (comparisons).
    direction: which way is better, `lower`, `higher` or `neutral` (comparisons).
    reference_median: the median of the reference's samples (comparisons; None: no finite median).
    current_median: the median of the current samples.
    n_reference: the reference's samples (comparisons).
    n_current: the current samples.
    level: the confidence level of `low`-`high` (comparisons).
  """

  metric: str
  benchmark: str
  variant: Mapping[str, Any]
  reference: Mapping[str, Any]
  ratio: float | None
  low: float | None
  high: float | None
  n: int
  verdict: Verdict
  rule: str
  repeats_needed: int | None = None
  threshold: float | None = None
  judged: bool = True
  name: str | None = None
  unit: str | None = None
  direction: str | None = None
  reference_median: float | None = None
  current_median: float | None = None
  n_reference: int | None = None
  n_current: int | None = None
  level: float | None = None

  def to_json(self) -> dict[str, Any]:
    row = dataclasses.asdict(self)
    row["verdict"] = self.verdict.value
    row["variant"], row["reference"] = dict(self.variant), dict(self.reference)
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> VerdictRecord:
    """Raises SchemaError for a missing field or a verdict other than the four words."""
    fields = json_fields(cls, data, "verdict")
    fields["metric"] = current_tag(fields["metric"])
    try:
      fields["verdict"] = Verdict(fields["verdict"])
    except ValueError:
      raise SchemaError(f"verdict {fields['verdict']!r} is none of {[v.value for v in Verdict]}") from None
    return cls(**fields)
