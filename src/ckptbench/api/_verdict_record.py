"""A verdict as data: one compared metric, as summary.json and comparison.json carry it."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Mapping

from ckptbench.api._records import SchemaError, json_fields
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


@dataclasses.dataclass(frozen=True)
class VerdictRecord:
  """One compared metric.

  Attributes:
    metric: the tag, e.g. `save_0_basics/time_s`.
    benchmark: the compared benchmark's key.
    variant: its swept option values (a baseline comparison: its name as well).
    reference: what it was compared with: the reference variant's swept
      options, or `{"baseline": label}`.
    ratio: estimate of current / reference; None when a ratio has no meaning.
    low: lower end of the ratio's interval; None when unbounded (too few repeats).
    high: upper end.
    n: rounds paired, or the smaller sample when unpaired.
    verdict: better, worse, equivalent or inconclusive.
    rule: the rule and confidence level that gave the verdict, in words.
    repeats_needed: for inconclusive, about how many repeats a decision needs.
    threshold: the relative change that counted (0.25 = 25%: `--regression_threshold`); None in
      files written before verdicts carried it (their `rule` states it).
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

  def to_json(self) -> dict[str, Any]:
    row = dataclasses.asdict(self)
    row["verdict"] = self.verdict.value
    row["variant"], row["reference"] = dict(self.variant), dict(self.reference)
    return row

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
