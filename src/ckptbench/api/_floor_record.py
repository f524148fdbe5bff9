"""A variant's share of the floor as data: one of summary.json's `floor_shares`."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ckptbench.api._values import json_fields
from ckptbench.api._tags import current_tag


@dataclasses.dataclass(frozen=True)
class FloorShareRecord:
  """How close one variant came to the floor on one timed operation (docs/verdicts.md, "The floor").

  The share is the floor's time over the variant's, per round (the same bytes, so also the variant's
  throughput over the floor's): 1 is the floor itself, 0.5 took twice as long, so 1 / share - 1 is
  what the variant adds over what the storage costs.

  Attributes:
    metric: the timed tag, e.g. `save_0_basics/time_s`.
    benchmark: the variant's key.
    variant: its swept option values.
    floor: the floor variant's swept option values (the suite's `floor:`).
    share: the median of the per-round shares.
    low: lower end of its distribution-free interval.
    high: upper end.
    coverage: the probability that the interval holds the true median (3 rounds: 0.75).
    n: the rounds both ran (or the smaller side's samples, unpaired).
    paired: whether the shares are per round (interleaved rounds) or of every pair of samples.
    median_s: the variant's median time.
    floor_median_s: the floor's median time.
  """

  metric: str
  benchmark: str
  variant: Mapping[str, Any]
  floor: Mapping[str, Any]
  share: float
  low: float
  high: float
  coverage: float
  n: int
  paired: bool
  median_s: float
  floor_median_s: float

  def to_json(self) -> dict[str, Any]:
    row = dataclasses.asdict(self)
    row["variant"], row["floor"] = dict(self.variant), dict(self.floor)
    return row

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> FloorShareRecord:
    """Raises SchemaError for a missing field."""
    fields = json_fields(cls, data, "floor share")
    fields["metric"] = current_tag(fields["metric"])
    return cls(**fields)
