"""Summary statistics of repeated samples, and per-benchmark aggregation of run records. Pure: no I/O."""

from __future__ import annotations

import math
import statistics
from typing import Any, Iterable, Mapping, Sequence

from ckptbench.api import BenchmarkSummary, MetricStatistics, RunFailure, RunRecord, measured_records, timed_runs
from ckptbench.api import is_rate_unit
from ckptbench.stats._hosts import host_statistics


def describe(samples: Sequence[float]) -> dict[str, float | int]:
  """mean, std (sample, 0 for one value), min, max, median and n of finite samples."""
  values = [float(v) for v in samples if v is not None and math.isfinite(float(v))]
  n = len(values)
  if n == 0:
    return {"n": 0}
  return {
      "n": n,
      "mean": statistics.fmean(values),
      "std": statistics.stdev(values) if n > 1 else 0.0,
      "min": min(values),
      "max": max(values),
      "median": statistics.median(values),
  }


def metric_samples(records: Iterable[RunRecord]) -> dict[str, dict[str, Any]]:
  """`{tag: {"unit": u, "values": [...], "hosts": {host: [...]}}}` over successful records."""
  out: dict[str, dict[str, Any]] = {}
  for record in records:
    if record.failed:
      continue
    for tag, metric in record.metrics.items():
      entry = out.setdefault(tag, {"unit": metric.unit, "values": [], "hosts": {}})
      entry["values"].append(metric.value)
      entry["hosts"].setdefault(record.host, []).append(metric.value)
  return out


def metric_statistics(unit: str, samples: Sequence[float], by_host: Mapping[int, Sequence[float]] | None = None) -> MetricStatistics:
  """The statistics of one tag's samples; with `by_host`, the cross-host block too.

  Example:
    >>> metric_statistics("s", [1.0, 3.0]).mean
    2.0
  """
  hosts = None if by_host is None else host_statistics(by_host, higher_is_better=is_rate_unit(unit))
  return MetricStatistics(unit=unit, **describe(samples), hosts=hosts)


def summarize_benchmarks(records: Sequence[RunRecord]) -> list[BenchmarkSummary]:
  """One summary per benchmark key, in first-seen order; warm-up runs are left out.

  `runs` counts the distinct repeats of the timed runs (a memory pass's records are samples, not runs);
  a repeat failed when any host's run of it failed, or the memory pass's run of it did.
  """
  by_key: dict[str, list[RunRecord]] = {}
  for record in measured_records(records):
    by_key.setdefault(record.key, []).append(record)
  summaries = []
  for key, group in by_key.items():
    first = group[0]
    failures = [r for r in group if r.error is not None]
    errors = [RunFailure(r.repeat, r.host, r.error.type, r.error.message) for r in failures]
    multi_host = first.num_hosts > 1  # then a cross-host block: which host was slowest
    metrics = {
        tag: metric_statistics(s["unit"], s["values"], s["hosts"] if multi_host else None)
        for tag, s in metric_samples(group).items()
    }
    summaries.append(BenchmarkSummary(
        name=first.benchmark,
        key=key,
        generator=first.generator,
        options=first.options,
        varying=first.varying,
        mesh=first.mesh,
        checkpoint_config=first.checkpoint_config,
        runs=len({r.repeat for r in timed_runs(group)}),
        failed=len({r.repeat for r in failures}),
        errors=errors,
        metrics=metrics,
    ))
  return summaries
