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


def _what_first(record: Any, what: tuple[str, ...]) -> dict[str, Any]:
  row = dataclasses.asdict(record)
  row["verdict"] = record.verdict.value
  return {"metric": row.pop("metric"), **{k: row.pop(k) for k in what}, **row}


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Judged:
  """What every term of a sweep's effects carries besides what it is the effect of.

  Attributes:
    metric: the tag.
    ratio: the term's ratio (a main effect's level over its reference level, averaged over the other
      factors' combinations on the log scale; an interaction's ratio of ratios).
    low: the interval's lower end (None: unbounded); `high` the upper end.
    verdict: better, worse, equivalent or inconclusive, by the rule of every comparison.
    threshold: the relative change that counted.
    confidence: the level of `low`-`high` (its Holm step's; stats._effects).
    repeats_needed: for inconclusive, about how many rounds a decision needs.
    rounds: the rounds fitted.
    combinations: the other factors' combinations averaged over; `possible` those of a full grid.
  """

  metric: str
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


@dataclasses.dataclass(frozen=True, kw_only=True)
class EffectRecord(_Judged):
  """The main effect of one factor's level against its reference level, on one metric.

  Attributes:
    factor: the option name (or `mesh`, `checkpoint_config`).
    level: its value here; `reference_level` the reference's.
  """

  factor: str
  level: Any
  reference_level: Any

  def to_json(self) -> dict[str, Any]:
    """summary.json's form: what the term is first (metric, factor, level, reference level), then its figures."""
    return _what_first(self, ("factor", "level", "reference_level"))

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


@dataclasses.dataclass(frozen=True, kw_only=True)
class InteractionRecord(_Judged):
  """Two factors together on one metric: the ratio of ratios (A's effect where B is at `levels[B]`,
  over A's effect where B is at its reference level).

  Attributes:
    factors: the two factor names.
    levels: each factor's level; `reference_levels` each one's reference.
    conditional: for an interaction decided worse or better, each factor's effect at each level of the other.
  """

  factors: tuple[str, ...]
  levels: Mapping[str, Any]
  reference_levels: Mapping[str, Any]
  conditional: tuple[ConditionalRecord, ...] = ()

  def to_json(self) -> dict[str, Any]:
    """summary.json's form: what the term is first (metric, factors, levels, reference levels), then its figures."""
    row = _what_first(self, ("factors", "levels", "reference_levels"))
    row.update(factors=list(self.factors), levels=dict(self.levels), reference_levels=dict(self.reference_levels),
               conditional=list(row["conditional"]))
    return row

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> InteractionRecord:
    """Raises SchemaError for a missing field or a verdict other than the four words."""
    fields = _verdict_of(json_fields(cls, data, "interaction"))
    fields["factors"] = tuple(fields["factors"])
    fields["conditional"] = tuple(ConditionalRecord(**json_fields(ConditionalRecord, c, "conditional row"))
                                  for c in fields.get("conditional", ()))  # fmt: skip
    return cls(**fields)
