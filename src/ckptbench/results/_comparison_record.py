"""comparison.json, typed: a `Comparison` of a run with a baseline, one `ComparisonRow` per metric."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

from ckptbench.api import Verdict, VerdictRecord, check_version, json_fields
from ckptbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION
from ckptbench.stats import Direction

SCHEMA_VERSION = 2  # 2: four-word verdicts with Hodges-Lehmann intervals, `verdicts` and `rule` added


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
  verdict: Verdict
  headline: bool
  n_baseline: int
  n_current: int
  level: float
  repeats_needed: int | None = None

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
    alpha: the chance of any wrong verdict in the comparison (its two-sided intervals at 1 - alpha, the
      equivalence ones at 1 - 2 alpha, each spent over the run's looks; `rule` states the levels).
    rule: how the verdicts were decided, in words.
    rows: one per benchmark and metric present on both sides, regressions first.
    only_in_baseline: `{"benchmarks": [...], "metrics": [...]}` missing from the run.
    only_in_current: the same for what the baseline lacks.
    warnings: e.g. the manifests name different machines.
    unmatched: why each run benchmark without a baseline partner has none.
    refused: why nothing was compared although both sides have results (the baseline ran on
      another backend: its timings say nothing about this one's), one line; None when compared.
  """

  baseline_label: str
  threshold: float
  alpha: float
  rule: str
  rows: tuple[ComparisonRow, ...]
  only_in_baseline: Mapping[str, list[str]]
  only_in_current: Mapping[str, list[str]]
  warnings: tuple[str, ...]
  unmatched: tuple[str, ...] = ()
  refused: str | None = None

  @property
  def matched_nothing(self) -> bool:
    """No benchmark of the run is in the baseline (or the comparison was refused): nothing was
    judged, so nothing can pass."""
    return not self.rows

  @property
  def regressions(self) -> list[ComparisonRow]:
    return [r for r in self.rows if r.verdict == Verdict.WORSE]

  @property
  def headline_regressions(self) -> list[ComparisonRow]:
    """Headline metrics (time, throughput, peak memory) judged worse: what fails CI."""
    return [r for r in self.regressions if r.headline]

  @property
  def headline_inconclusive(self) -> list[ComparisonRow]:
    """Headline metrics neither shown different nor shown equivalent."""
    return [r for r in self.rows if r.headline and r.verdict == Verdict.INCONCLUSIVE]

  @property
  def no_regression(self) -> bool:
    """Every headline metric equivalent or better: the only case that may be called "no regression"."""
    return not self.matched_nothing and all(r.verdict.passes for r in self.rows if r.headline)

  def repeats_needed(self) -> int | None:
    """The most repeats any inconclusive headline metric needs to be decided."""
    needed = [r.repeats_needed for r in self.headline_inconclusive if r.repeats_needed]
    return max(needed) if needed else None

  def exit_code(self, fail_on_regression: bool, allow_inconclusive: bool = False) -> int:
    """With `fail_on_regression`: 3 (`EXIT_REGRESSION`) when a headline metric is worse, nothing
    matched or the comparison was refused; 5 (`EXIT_INCONCLUSIVE`) when one is inconclusive, unless allowed; else 0."""
    if not fail_on_regression:
      return EXIT_OK
    if self.headline_regressions or self.matched_nothing:
      return EXIT_REGRESSION
    if self.headline_inconclusive and not allow_inconclusive:
      return EXIT_INCONCLUSIVE
    return EXIT_OK

  def verdicts(self) -> list[VerdictRecord]:
    """comparison.json's `verdicts`: the headline rows (the metrics a suite is judged on, `api.JUDGED`, the
    same summary.json's verdicts judge and the gate fails on) in the form summary.json uses."""
    return [
        VerdictRecord(
            metric=r.metric, benchmark=r.key, variant={"benchmark": r.benchmark},
            reference={"baseline": self.baseline_label}, ratio=r.ratio, low=r.ci_low, high=r.ci_high,
            n=min(r.n_baseline, r.n_current), verdict=r.verdict, rule=self.rule, repeats_needed=r.repeats_needed,
            threshold=self.threshold,
        )  # fmt: skip
        for r in self.rows if r.headline and r.verdict != Verdict.NOT_JUDGED
    ]

  def to_json(self) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "baseline_label": self.baseline_label,
        "threshold": self.threshold,
        "alpha": self.alpha,
        "rule": self.rule,
        "verdicts": [v.to_json() for v in self.verdicts()],
        "rows": [r.to_json() for r in self.rows],
        "only_in_baseline": dict(self.only_in_baseline),
        "only_in_current": dict(self.only_in_current),
        "warnings": list(self.warnings),
        "unmatched": list(self.unmatched),
        "refused": self.refused,
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
