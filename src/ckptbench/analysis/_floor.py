"""Each variant's share of the floor as data: how close it came to what the storage itself costs.

A suite's `floor:` names the variant that does the least any variant can (the `libraries` built-in's
`plain`: each shard's bytes written and fsync'd, nothing else). For every other variant of the floor's
generator and every judged time, the share is the floor's time over the variant's, paired by repeat
(a round when rounds interleave), with the distribution-free interval of its median
(`stats.ratio_interval`). Computed once when the run ends, into summary.json's `floor_shares`;
the console and the report read them from there.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Mapping, Sequence

from ckptbench.api import FloorShareRecord, RunRecord, Tag, judged_metrics, timed_runs
from ckptbench.analysis._verdict import Variant, variants_of
from ckptbench.stats import Direction, per_repeat_across_hosts, ratio_interval

TIME_KEY = "0_basics/time_s"


def floor_shares(records: Sequence[RunRecord], floor: Mapping[str, Any] | None, *, paired: bool) -> list[FloorShareRecord]:
  """One `FloorShareRecord` per variant (but the floor) of the floor's generator and judged time.

  Args:
    records: results.jsonl records (the timed runs that succeeded are read).
    floor: swept option values that pick the floor variant (the suite's `floor:`); None: no shares.
    paired: the rounds interleaved the variants (recorded with each share).
  """
  if not floor:
    return []
  measured = [r for r in timed_runs(records) if not r.failed]
  variants = [v for v in variants_of(records) if any(r.key == v.key for r in measured)]
  floor_variant = next((v for v in variants if _picks(floor, v)), None)
  if floor_variant is None:
    return []
  group = [v for v in variants if v.generator == floor_variant.generator and v.key != floor_variant.key]
  units = {tag: e.unit for r in measured for tag, e in r.metrics.items()}
  times = [m for m in judged_metrics(units) if Tag.parse(m.tag).key == TIME_KEY]
  out = []
  for metric in times:
    floor_times = _by_repeat(measured, floor_variant, metric.tag)
    for variant in group:
      mine = _by_repeat(measured, variant, metric.tag)
      repeats = sorted(set(floor_times) & set(mine))
      a, b = [floor_times[r] for r in repeats], [mine[r] for r in repeats]
      interval = ratio_interval(a, b)
      if interval is None:
        continue
      out.append(FloorShareRecord(
          metric=metric.tag, benchmark=variant.key, variant=dict(variant.varying), floor=dict(floor_variant.varying),
          share=interval.median, low=interval.low, high=interval.high, coverage=interval.coverage, n=interval.n,
          paired=paired, median_s=statistics.median(b), floor_median_s=statistics.median(a),
      ))  # fmt: skip
  return out


def _picks(floor: Mapping[str, Any], variant: Variant) -> bool:
  return all(k in variant.varying and str(variant.varying[k]).lower() == str(v).lower() for k, v in floor.items())


def _by_repeat(records: Sequence[RunRecord], variant: Variant, tag: str) -> dict[int, float]:
  """{repeat: the slowest host's time}."""
  by_host: dict[int, dict[int, float]] = {}
  for record in records:
    value = record.value(tag) if record.key == variant.key else None
    if value is not None and math.isfinite(value):
      by_host.setdefault(record.host, {})[record.repeat] = value
  repeats = sorted({r for values in by_host.values() for r in values})
  return dict(zip(repeats, per_repeat_across_hosts(by_host, Direction.LOWER)))
