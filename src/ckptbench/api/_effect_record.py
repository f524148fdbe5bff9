"""A sweep's effects as data: summary.json's `effects` (one factor) and `interactions` (two factors)."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ckptbench.api._values import SchemaError, json_fields
from ckptbench.api._verdict_record import Verdict


def _verdict_of(fields: dict[str, Any]) -> dict[str, Any]:
  try:
    fields["verdict"] = Verdict(fields["verdict"])
  except ValueError:
    raise SchemaError(f"verdict {fields['verdict']!r} is none of {[v.value for v in Verdict]}") from None
  return fields


@dataclasses.dataclass(frozen=True)
class EffectRecord:
  """The main effect of one factor's level against its reference level, on one metric.

  Attributes:
    metric: the tag.
    factor: the option name (or `mesh`, `checkpoint_config`).
    level: its value here; `reference_level` the reference's.
    ratio: the metric at `level` over the metric at the reference level, averaged over the other
      factors' combinations on the log scale.
    low: the interval's lower end (None: unbounded); `high` the upper end.
    verdict: better, worse, equivalent or inconclusive, by the rule of every comparison.
    threshold: the relative change that counted.
    confidence: the level of `low`-`high` (its Holm step's; stats._effects).
    repeats_needed: for inconclusive, about how many rounds a decision needs.
    rounds: the rounds fitted.
    combinations: the other factors' combinations averaged over; `possible` those of a full grid.
  """

  metric: str
  factor: str
  level: Any
  reference_level: Any
  ratio: float
  low: float | None
  high: float | None
  verdict: Verdict
  threshold: float
  confidence: float
  repeats_needed: int | None = None
  rounds: int = 0
  combinations: int = 0
  possible: int = 0

  def to_json(self) -> dict[str, Any]:
    return {**dataclasses.asdict(self), "verdict": self.verdict.value}

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> EffectRecord:
    """Raises SchemaError for a missing field or a verdict other than the four words."""
    return cls(**_verdict_of(json_fields(cls, data, "effect")))


@dataclasses.dataclass(frozen=True)
class ConditionalRecord:
  """One factor's effect at one level of another: a row of a decided interaction's conditional table."""

  factor: str
  level: Any
  reference_level: Any
  given_factor: str
  given_level: Any
  ratio: float
  low: float | None
  high: float | None


@dataclasses.dataclass(frozen=True)
class InteractionRecord:
  """Two factors together on one metric: the ratio of ratios (A's effect where B is at `levels[B]`,
  over A's effect where B is at its reference level).

  Attributes:
    metric: the tag.
    factors: the two factor names.
    levels: each factor's level; `reference_levels` each one's reference.
    ratio, low, high, verdict, threshold, confidence, repeats_needed, rounds, combinations, possible:
      as in `EffectRecord`.
    conditional: for an interaction decided worse or better, each factor's effect at each level of the other.
  """

  metric: str
  factors: tuple[str, ...]
  levels: Mapping[str, Any]
  reference_levels: Mapping[str, Any]
  ratio: float
  low: float | None
  high: float | None
  verdict: Verdict
  threshold: float
  confidence: float
  repeats_needed: int | None = None
  rounds: int = 0
  combinations: int = 0
  possible: int = 0
  conditional: tuple[ConditionalRecord, ...] = ()

  def to_json(self) -> dict[str, Any]:
    row = dataclasses.asdict(self)
    row.update(factors=list(self.factors), levels=dict(self.levels), reference_levels=dict(self.reference_levels),
               verdict=self.verdict.value, conditional=[dataclasses.asdict(c) for c in self.conditional])  # fmt: skip
    return row

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> InteractionRecord:
    """Raises SchemaError for a missing field or a verdict other than the four words."""
    fields = _verdict_of(json_fields(cls, data, "interaction"))
    fields["factors"] = tuple(fields["factors"])
    fields["conditional"] = tuple(ConditionalRecord(**json_fields(ConditionalRecord, c, "conditional row"))
                                  for c in fields.get("conditional", ()))  # fmt: skip
    return cls(**fields)
