"""comparison.json, typed: a `Comparison` of a run with a baseline, one `ComparisonRow` per metric."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

from ckptbench.api import check_version, json_fields
from ckptbench.errors import EXIT_OK, EXIT_REGRESSION
from ckptbench.stats import Direction, Verdict

SCHEMA_VERSION = 1


@dataclasses.dataclass(frozen=True)
class ComparisonRow:
  """One metric of one benchmark, baseline against current (see `MetricComparison`)."""

  benchmark: str
  key: str
  metric: str
  unit: str
  direction: Direction
  baseline: float
  current: float
  ratio: float | None
  ci_low: float | None
  ci_high: float | None
  p_value: float | None
  verdict: Verdict
  headline: bool
  n_baseline: int
  n_current: int

  def to_json(self) -> dict[str, Any]:
    row = dataclasses.asdict(self)
    row["direction"], row["verdict"] = self.direction.value, self.verdict.value
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> ComparisonRow:
    fields = json_fields(cls, data, "comparison row")
    fields["direction"], fields["verdict"] = Direction(fields["direction"]), Verdict(fields["verdict"])
    for name in ("baseline", "current"):  # NaN is written as null
      fields[name] = math.nan if fields[name] is None else fields[name]
    return cls(**fields)


@dataclasses.dataclass(frozen=True)
class Comparison:
  """The comparison of a run with a baseline.

  Attributes:
    baseline_label: the label of the baseline file.
    threshold: the relative change that counts (0.1 = 10%).
    alpha: significance level of the Mann-Whitney U test.
    rows: one per benchmark and metric present on both sides, regressions first.
    only_in_baseline: `{"benchmarks": [...], "metrics": [...]}` missing from the run.
    only_in_current: the same for what the baseline lacks.
    warnings: e.g. the manifests name different machines.
    unmatched: why each run benchmark without a baseline partner has none.
  """

  baseline_label: str
  threshold: float
  alpha: float
  rows: tuple[ComparisonRow, ...]
  only_in_baseline: Mapping[str, list[str]]
  only_in_current: Mapping[str, list[str]]
  warnings: tuple[str, ...]
  unmatched: tuple[str, ...] = ()

  @property
  def matched_nothing(self) -> bool:
    """No benchmark of the run is in the baseline: nothing was judged, so nothing can pass."""
    return not self.rows

  @property
  def regressions(self) -> list[ComparisonRow]:
    return [r for r in self.rows if r.verdict == Verdict.REGRESSED]

  @property
  def headline_regressions(self) -> list[ComparisonRow]:
    """Regressions of time, throughput or peak memory: what fails CI."""
    return [r for r in self.regressions if r.headline]

  def exit_code(self, fail_on_regression: bool) -> int:
    """`EXIT_REGRESSION` (3) when asked to fail and a headline metric regressed or nothing matched, else 0."""
    if fail_on_regression and (self.headline_regressions or self.matched_nothing):
      return EXIT_REGRESSION
    return EXIT_OK

  def to_json(self) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "baseline_label": self.baseline_label,
        "threshold": self.threshold,
        "alpha": self.alpha,
        "rows": [r.to_json() for r in self.rows],
        "only_in_baseline": dict(self.only_in_baseline),
        "only_in_current": dict(self.only_in_current),
        "warnings": list(self.warnings),
        "unmatched": list(self.unmatched),
    }

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> Comparison:
    """Reads comparison.json.

    Raises:
      SchemaError: another schema_version, a field missing, or an unknown verdict or direction.
    """
    check_version(data, "comparison", SCHEMA_VERSION)
    fields = json_fields(cls, data, "comparison")
    fields["rows"] = tuple(ComparisonRow.from_json(r) for r in fields["rows"])
    fields["warnings"], fields["unmatched"] = tuple(fields["warnings"]), tuple(fields.get("unmatched", ()))
    return cls(**fields)
