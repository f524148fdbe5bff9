"""Compare a finished run with a baseline: OUT/comparison.json (views/_comparison_text.py prints it)."""

from __future__ import annotations

import math
import os
import pathlib
from typing import Any, Mapping

from ckptbench.api import VerdictRecord, is_host_memory_tag, is_judged
from ckptbench.analysis._baseline import build_baseline, load_baseline, read_run
from ckptbench.analysis._baseline_document import Baseline, BaselineBenchmark
from ckptbench.results import Comparison, read_outputs
from ckptbench.results import write_json_atomic
from ckptbench.analysis._unmatched import unmatched_reasons
from ckptbench.stats import DEFAULT_THRESHOLD, Design, Verdict, absolute_floor, compare_samples

# Manifest fields that identify the machine; a difference makes timings incomparable.
# (A different backend refuses the comparison instead: `backend_refusal`.)
_MACHINE_FIELDS = ("hostname", "platform", "cpu_count", "device_kind", "device_count", "process_count")
_VERDICT_ORDER = {
    Verdict.WORSE: 0,
    Verdict.INCONCLUSIVE: 1,
    Verdict.BETTER: 2,
    Verdict.EQUIVALENT: 3,
    Verdict.NOT_JUDGED: 4,
}


def compare_documents(
    baseline: Baseline,
    current: Baseline,
    threshold: float = DEFAULT_THRESHOLD,
    design: Design = Design(),
) -> Comparison:
  """Compares two baseline documents (see `build_baseline`), metric by metric, unpaired.

  `design` says how many looks at the data the run took (adaptive repeats
  compare with the baseline after several rounds), so the intervals keep
  their level over all of them.
  """
  refusal = backend_refusal(baseline.backend, current.backend)
  if refusal is not None:
    return Comparison(
        baseline_label=baseline.label, threshold=threshold, alpha=design.alpha,
        rule=design.rule(threshold, paired=False), rows=(), only_in_baseline={"benchmarks": [], "metrics": []},
        only_in_current={"benchmarks": [], "metrics": []}, warnings=(), refused=refusal,
    )  # fmt: skip
  base_benchmarks, cur_benchmarks = baseline.benchmarks, current.benchmarks
  memory_refusal = host_memory_refusal(baseline.manifest, current.manifest)
  rows: list[VerdictRecord] = []
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
      if memory_refusal and is_host_memory_tag(tag):
        continue
      rows.append(_row(base_benchmarks[key], cur_benchmarks[key], tag, threshold, design, baseline.label))
  rows.sort(key=lambda r: (_VERDICT_ORDER[r.verdict], not r.judged, r.name, r.metric))
  return Comparison(
      baseline_label=baseline.label,
      threshold=threshold,
      alpha=design.alpha,
      rule=design.rule(threshold, paired=False),
      rows=tuple(rows),
      only_in_baseline=only_base,
      only_in_current=only_cur,
      warnings=tuple(_machine_warnings(baseline.manifest, current.manifest) + [memory_refusal] * bool(memory_refusal)),
      unmatched=tuple(unmatched_reasons(
          {k: b.summary for k, b in base_benchmarks.items()}, {k: b.summary for k, b in cur_benchmarks.items()}
      )),
  )


def backend_refusal(baseline_backend: str | None, current_backend: str | None) -> str | None:
  """Why a run on `current_backend` is not compared with a baseline from `baseline_backend`, or None.

  A TPU's save time says nothing about a CPU's, nor a real TPU's about one emulated on CPU
  devices. A side that records no backend (captured before backends were) is compared.

  Example:
    >>> backend_refusal("tpu", "cpu")
    'not compared: the baseline ran on tpu, this run on cpu; timings from different backends are not comparable'
  """
  if baseline_backend is None or current_backend is None or baseline_backend == current_backend:
    return None
  return (f"not compared: the baseline ran on {baseline_backend}, this run on {current_backend};"
          " timings from different backends are not comparable")


def _row(
    base: BaselineBenchmark, cur: BaselineBenchmark, tag: str, threshold: float, design: Design, label: str
) -> VerdictRecord:  # fmt: skip
  unit, samples = cur.summary.metrics[tag].unit, cur.samples[tag]
  result = compare_samples(
      base.samples[tag].across_hosts.values,
      samples.across_hosts.values,
      samples.direction,
      threshold=threshold,
      design=design,
      min_abs_change=absolute_floor(unit),
  )
  return VerdictRecord(
      metric=tag, benchmark=cur.summary.key, variant={"benchmark": cur.name}, reference={"baseline": label},
      ratio=result.ratio, low=result.ci_low, high=result.ci_high, n=min(result.n_baseline, result.n_current),
      verdict=result.verdict, rule=design.rule(threshold, paired=False), repeats_needed=result.repeats_needed,
      threshold=threshold,
      # The rule as it is now, not the flag a baseline file stored when it was captured.
      judged=is_judged(tag), name=cur.name, unit=unit, direction=result.direction.value,
      reference_median=_finite(result.baseline), current_median=_finite(result.current),
      n_reference=result.n_baseline, n_current=result.n_current, level=result.level,
  )  # fmt: skip


def _finite(value: float) -> float | None:
  """A median as the record holds it: None where there is none (NaN)."""
  return None if math.isnan(value) else value


def run_design(out_dir: str | os.PathLike) -> Design:
  """The design a run's verdicts used, as its summary.json's `repeats` records (default: one look)."""
  summary = read_outputs(out_dir).summary
  repeats = summary.repeats if summary is not None and summary.repeats else {}
  return Design(
      alpha=repeats.get("alpha", Design().alpha), early_looks=repeats.get("looks", 1) - 1,
      last=repeats.get("last_look", True))


def host_memory_mode(manifest: Mapping[str, Any]) -> str:
  """How a run measured host memory (engine/memory/_pass.py): "pass", "inline" or "off"; a manifest from
  before memory passes (no `host_memory`) measured it inline."""
  return (manifest.get("host_memory") or {}).get("mode", "inline")


def host_memory_refusal(base: Mapping[str, Any], cur: Mapping[str, Any]) -> str | None:
  """Why host memory is not compared between two runs' manifests, or None.

  A memory pass and the timed runs read different figures for the same operation (against a fresh
  process: docs/performance.md, *Host memory: how true*), so a difference between them would be the
  method's, not the code's.

  Example:
    >>> host_memory_refusal({}, {"host_memory": {"mode": "pass"}})[:60]
    'host memory not compared: the baseline measured it inside t'
  """
  modes = host_memory_mode(base), host_memory_mode(cur)
  if modes[0] == modes[1] or "off" in modes:  # off: one side has no host memory to compare
    return None
  how = {"pass": "in a memory pass", "inline": "inside the timed runs", "off": "not at all"}
  return (f"host memory not compared: the baseline measured it {how[modes[0]]}, this run {how[modes[1]]}"
          f" (docs/metrics.md, *Host memory*); recapture the baseline, or run with --host_memory {modes[0]}")


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
    design: Design | None = None,
) -> Comparison:
  """Compares the finished run in `out_dir` with a baseline; writes OUT/comparison.json.

  Args:
    baseline_file: a file written by `capture_baseline`.
    out_dir: the run's output directory (its results.jsonl; warmup runs ignored).
    threshold: the relative change that counts as a regression (0.1 = 10%).
    design: the error rate and how many looks at the data share it; None: as
      the run's summary.json records (`repeats`: auto repeats looked several times).

  Returns:
    The `Comparison`; `comparison.exit_code(fail_on_regression=True)` gives 3
    when a headline metric (one a suite is judged on: `ckptbench.api.JUDGED`) is worse, 5 when one is
    inconclusive.

  Raises:
    CkptbenchError: when either side cannot be read.

  Example:
    >>> c = compare_to_baseline("baselines/3f9a.json", "out")  # doctest: +SKIP
    >>> [r.metric for r in c.headline_regressions]  # doctest: +SKIP
    ['save_0_basics/time_s']
  """
  baseline = load_baseline(baseline_file)
  current = build_baseline(*read_run(out_dir), label="current")
  if design is None:
    design = run_design(out_dir)
  comparison = compare_documents(baseline, current, threshold=threshold, design=design)
  write_json_atomic(pathlib.Path(out_dir) / "comparison.json", comparison.to_json())
  return comparison
