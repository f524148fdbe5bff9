"""Compare a finished run with a baseline: OUT/comparison.json (views/_comparison_text.py prints it)."""

from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import Any, Mapping

from ckptbench.analysis._baseline import build_baseline, load_baseline, read_run
from ckptbench.analysis._baseline_document import Baseline, BaselineBenchmark
from ckptbench.results import Comparison, ComparisonRow
from ckptbench.results import write_json_atomic
from ckptbench.analysis._unmatched import unmatched_reasons
from ckptbench.stats import (
    DEFAULT_ALPHA,
    DEFAULT_THRESHOLD,
    Verdict,
    absolute_floor,
    compare_samples,
)

# Manifest fields that identify the machine; a difference makes timings incomparable.
_MACHINE_FIELDS = ("hostname", "platform", "cpu_count", "backend", "device_kind", "device_count", "process_count")
_VERDICT_ORDER = {
    Verdict.REGRESSED: 0,
    Verdict.IMPROVED: 1,
    Verdict.NOT_ENOUGH_SAMPLES: 2,
    Verdict.UNCHANGED: 3,
    Verdict.NOT_JUDGED: 4,
}


def compare_documents(
    baseline: Baseline,
    current: Baseline,
    threshold: float = DEFAULT_THRESHOLD,
    alpha: float = DEFAULT_ALPHA,
) -> Comparison:
  """Compares two baseline documents (see `build_baseline`), metric by metric."""
  base_benchmarks, cur_benchmarks = baseline.benchmarks, current.benchmarks
  rows: list[ComparisonRow] = []
  only_base: dict[str, list[str]] = {"benchmarks": [], "metrics": []}
  only_cur: dict[str, list[str]] = {"benchmarks": [], "metrics": []}
  for key in sorted(set(base_benchmarks) | set(cur_benchmarks)):
    if key not in cur_benchmarks:
      only_base["benchmarks"].append(f"{base_benchmarks[key].name} [{key}]")
      continue
    if key not in base_benchmarks:
      only_cur["benchmarks"].append(f"{cur_benchmarks[key].name} [{key}]")
      continue
    name = cur_benchmarks[key].name
    base_metrics, cur_metrics = base_benchmarks[key].samples, cur_benchmarks[key].samples
    only_base["metrics"] += [f"{name}: {t}" for t in sorted(set(base_metrics) - set(cur_metrics))]
    only_cur["metrics"] += [f"{name}: {t}" for t in sorted(set(cur_metrics) - set(base_metrics))]
    for tag in sorted(set(base_metrics) & set(cur_metrics)):
      rows.append(_row(base_benchmarks[key], cur_benchmarks[key], tag, threshold, alpha))
  rows.sort(key=lambda r: (_VERDICT_ORDER[r.verdict], not r.headline, r.benchmark, r.metric))
  return Comparison(
      baseline_label=baseline.label,
      threshold=threshold,
      alpha=alpha,
      rows=tuple(rows),
      only_in_baseline=only_base,
      only_in_current=only_cur,
      warnings=tuple(_machine_warnings(baseline.manifest, current.manifest)),
      unmatched=tuple(unmatched_reasons(
          {k: b.summary for k, b in base_benchmarks.items()}, {k: b.summary for k, b in cur_benchmarks.items()}
      )),
  )


def _row(base: BaselineBenchmark, cur: BaselineBenchmark, tag: str, threshold: float, alpha: float) -> ComparisonRow:
  unit, samples = cur.summary.metrics[tag].unit, cur.samples[tag]
  result = compare_samples(
      base.samples[tag].across_hosts.values,
      samples.across_hosts.values,
      samples.direction,
      threshold=threshold,
      alpha=alpha,
      min_abs_change=absolute_floor(unit),
  )
  return ComparisonRow(
      benchmark=cur.name, key=cur.summary.key, metric=tag, unit=unit, headline=samples.headline,
      **{f.name: getattr(result, f.name) for f in dataclasses.fields(result)},
  )


def _machine_warnings(base: Mapping[str, Any], cur: Mapping[str, Any]) -> list[str]:
  differing = [f for f in _MACHINE_FIELDS if f in base and f in cur and base[f] != cur[f]]
  if not differing:
    return []
  details = "; ".join(f"{f}: {base[f]!r} -> {cur[f]!r}" for f in differing)
  return [f"the baseline ran on a different machine ({details}); timings may not be comparable"]


def compare_to_baseline(
    baseline_file: str | os.PathLike,
    out_dir: str | os.PathLike,
    threshold: float = DEFAULT_THRESHOLD,
    alpha: float = DEFAULT_ALPHA,
) -> Comparison:
  """Compares the finished run in `out_dir` with a baseline; writes OUT/comparison.json.

  Args:
    baseline_file: a file written by `capture_baseline`.
    out_dir: the run's output directory (its results.jsonl; warmup runs ignored).
    threshold: the relative change that counts as a regression (0.1 = 10%).
    alpha: significance level of the Mann-Whitney U test.

  Returns:
    The `Comparison`; `comparison.exit_code(fail_on_regression=True)` gives 3
    when a headline metric regressed.

  Raises:
    CkptbenchError: when either side cannot be read.

  Example:
    >>> c = compare_to_baseline("baselines/3f9a.json", "out")  # doctest: +SKIP
    >>> [r.metric for r in c.headline_regressions]  # doctest: +SKIP
    ['save_0_basics/time_s']
  """
  baseline = load_baseline(baseline_file)
  current = build_baseline(*read_run(out_dir), label="current")
  comparison = compare_documents(baseline, current, threshold=threshold, alpha=alpha)
  write_json_atomic(pathlib.Path(out_dir) / "comparison.json", comparison.to_json())
  return comparison
