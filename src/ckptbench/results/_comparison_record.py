"""comparison.json, typed: a `Comparison` of a run with a baseline, one `VerdictRecord` per metric."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ckptbench.api import SchemaError, Verdict, VerdictRecord, current_tag, json_fields
from ckptbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION

# 2: four-word verdicts with Hodges-Lehmann intervals, `verdicts` and `rule` added;
# 3: each row a `VerdictRecord`, the record summary.json's verdicts are (version 2 rows are read as such).
SCHEMA_VERSION = 3
_READS = (2, SCHEMA_VERSION)


def _row_from_version_2(row: Mapping[str, Any], comparison: Mapping[str, Any]) -> VerdictRecord:
  """A version-2 row (`benchmark` its name, `key`, `baseline`, `current`, `ci_low`, `ci_high`, `headline`,
  `n_baseline`, `n_current`) as the record version 3 writes."""
  fields = json_fields(_Version2Row, row, "comparison row")
  try:
    verdict = Verdict(fields["verdict"])
  except ValueError:
    raise SchemaError(f"verdict {fields['verdict']!r} is none of {[v.value for v in Verdict]}") from None
  return VerdictRecord(
      metric=current_tag(fields["metric"]), benchmark=fields["key"], variant={"benchmark": fields["benchmark"]},
      reference={"baseline": comparison["baseline_label"]}, ratio=fields["ratio"], low=fields["ci_low"],
      high=fields["ci_high"], n=min(fields["n_baseline"], fields["n_current"]), verdict=verdict,
      rule=comparison["rule"], repeats_needed=fields.get("repeats_needed"), threshold=comparison["threshold"],
      judged=fields["headline"], name=fields["benchmark"], unit=fields["unit"], direction=fields["direction"],
      reference_median=fields["baseline"], current_median=fields["current"], n_reference=fields["n_baseline"],
      n_current=fields["n_current"], level=fields["level"],
  )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class _Version2Row:
  """The fields a comparison.json of schema version 2 has in each row (read, never written)."""

  benchmark: str
  key: str
  metric: str
  unit: str
  direction: str
  baseline: float | None
  current: float | None
  ratio: float | None
  ci_low: float | None
  ci_high: float | None
  verdict: str
  headline: bool
  n_baseline: int
  n_current: int
  level: float
  repeats_needed: int | None = None


@dataclasses.dataclass(frozen=True)
class Comparison:
  """The comparison of a run with a baseline.

  Attributes:
    baseline_label: the label of the baseline file.
    threshold: the relative change that counts (0.1 = 10%).
    alpha: the chance of any wrong verdict in the comparison (its two-sided intervals at 1 - alpha, the
      equivalence ones at 1 - 2 alpha, each spent over the run's looks; `rule` states the levels).
    rule: how the verdicts were decided, in words.
    rows: one per benchmark and metric present on both sides, regressions first; `judged` marks the
      metrics a suite is judged on (`api.JUDGED`), the only ones the gate reads.
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
  rows: tuple[VerdictRecord, ...]
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
  def regressions(self) -> list[VerdictRecord]:
    return [r for r in self.rows if r.verdict == Verdict.WORSE]

  @property
  def headline_regressions(self) -> list[VerdictRecord]:
    """Headline metrics (time, throughput, peak memory) judged worse: what fails CI."""
    return [r for r in self.regressions if r.judged]

  @property
  def headline_inconclusive(self) -> list[VerdictRecord]:
    """Headline metrics neither shown different nor shown equivalent."""
    return [r for r in self.rows if r.judged and r.verdict == Verdict.INCONCLUSIVE]

  @property
  def no_regression(self) -> bool:
    """Every headline metric equivalent or better: the only case that may be called "no regression"."""
    return not self.matched_nothing and all(r.verdict.passes for r in self.rows if r.judged)

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
    """comparison.json's `verdicts`: the judged rows (the metrics a suite is judged on, `api.JUDGED`, the
    same summary.json's verdicts judge and the gate fails on)."""
    return [r for r in self.rows if r.judged and r.verdict != Verdict.NOT_JUDGED]

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
    version = data.get("schema_version") if isinstance(data, Mapping) else None
    if version not in _READS:
      raise SchemaError(f"comparison schema_version {version!r}; this ckptbench reads {', '.join(map(str, _READS))}")
    fields = json_fields(cls, data, "comparison")
    if version == 2:
      fields["rows"] = tuple(_row_from_version_2(r, data) for r in fields["rows"])
    else:
      fields["rows"] = tuple(VerdictRecord.from_json(r) for r in fields["rows"])
    fields["warnings"], fields["unmatched"] = tuple(fields["warnings"]), tuple(fields.get("unmatched", ()))
    return cls(**fields)
