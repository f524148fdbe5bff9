"""Tags computed from other tags: bandwidths, compression ratios, hit rates.

Rates are never accumulated directly: a block entered three times, or a block
holding three saves, reports total bytes over total seconds. So the collectors
record bytes and seconds (both summed) and the rates are derived here, last,
from the accumulated values. Pure functions over `{tag: MetricEntry}`.
"""

from __future__ import annotations

from typing import Mapping

from ckptbench.api import _tag_table
from ckptbench.api._tags import Tag
from ckptbench.api._values import MetricEntry


def derived_tags(tags: Mapping[str, MetricEntry]) -> dict[str, MetricEntry]:
  """The derived tags (`_tag_table.DERIVED`) that `tags` allows, skipping ones already present.

  Args:
    tags: `{"<op>_<namespace>/<metric>": MetricEntry(value, unit)}`.

  Returns:
    New tags in the same form; a tag the test_fn recorded itself is never replaced.

  Example:
    >>> derived_tags({"save_5_inventory/save_total_gb": MetricEntry(1.0, "GiB"),
    ...               "save_0_basics/time_s": MetricEntry(2.0, "s")})
    {'save_4_throughput/save_total_gbps': MetricEntry(value=0.5, unit='GiB/s')}
  """
  by_op: dict[str, dict[str, float]] = {}
  for tag, entry in tags.items():
    parts = Tag.parse(tag)
    if parts.namespace:
      by_op.setdefault(parts.op, {})[parts.key] = entry.value
  out: dict[str, MetricEntry] = {}
  for op, values in by_op.items():
    for key, spec in _tag_table.DERIVED.items():
      full = f"{op}_{key}"
      if full in tags or spec.numerator not in values:
        continue
      present = [values[d] for d in spec.denominators if d in values]
      if present:
        divisor = sum(present)
      elif spec.time_fallback and "0_basics/time_s" in values:
        divisor = values["0_basics/time_s"]
      else:
        continue
      if divisor > 0:
        out[full] = MetricEntry(values[spec.numerator] / divisor, _tag_table.TAGS[key].unit)
  return out
