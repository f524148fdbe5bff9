"""Which way is better for a metric: the one place that decides it.

A tag is `<op>_<namespace>/<metric>` (e.g. `save_0_basics/time_s`). The
direction follows from the namespace and the unit:

| namespace           | unit                 | direction | why                              |
|---------------------|----------------------|-----------|----------------------------------|
| 5_inventory         | any                  | neutral   | describes the checkpoint         |
| any                 | count                | neutral   | counts are shown, never judged   |
| 4_throughput        | rate (`.../s`), ratio| higher    | bandwidth and its share of limit |
| any other           | rate (`.../s`)       | higher    | throughput wherever it appears   |
| any                 | time (s, ms, us, ns) | lower     | time spent                       |
| 0_basics, 7_memory  | memory (B ... TiB)   | lower     | memory used                      |
| 7_memory            | `*_over_checkpoint`  | lower     | memory used per checkpoint byte  |
| other namespaces    | memory (B ... TiB)   | neutral   | sizes of I/O, not memory held    |
| anything else       |                      | neutral   |                                  |

Names override the table where the unit misleads: `..._saved_s` (time saved,
e.g. `8_jax/compile_time_saved_s`) and `..._hit_rate` are higher-better;
`since_...` and `between_...` (intervals between events, e.g.
`2_save_breakdown/since_last_save_s`) are neutral.

Headline metrics (the ones `--fail_on_regression` watches) are, per
operation: `0_basics/time_s`, every `4_throughput` rate, and every
`7_memory` peak increase (`*peak*diff*`, in memory units): what the operation
itself adds at its peak, and that peak over the checkpoint's bytes
(`host_peak_over_checkpoint`, a ratio comparable across models). Absolute peaks (`host_rss_peak_mib`) include whatever
the process held before and are shown, not gated.
"""

from __future__ import annotations

import enum
import re

from ckptbench.api import BYTES_PER_UNIT, PEAK_OVER_CHECKPOINT_SUFFIX, SECONDS_PER_UNIT, Tag, is_memory_unit, is_rate_unit

# Memory changes smaller than this are below what RSS and allocator
# statistics resolve in a Python process: allocators keep freed arenas, the
# garbage collector runs when it likes. A/A runs here swing by up to ~6 MiB.
_MEMORY_FLOOR_BYTES = 8 * 2**20
# Time between events (`since_last_save_s`, `between_saves_s`) is no cost.
_INTERVAL = re.compile(r"(^|_)(since|between)_")
_COUNT_UNITS = frozenset({"count", "counts", "n", "items", "files"})
_MEMORY_NAMESPACES = frozenset({"0_basics", "7_memory"})


class Direction(str, enum.Enum):
  """Which change of a metric is an improvement."""

  LOWER = "lower"  # times, memory
  HIGHER = "higher"  # throughput
  NEUTRAL = "neutral"  # counts, sizes, inventory: shown, never judged


def _base_metric(metric: str) -> str:
  # `Metrics` adds `<tag>_mean` for blocks entered several times.
  return metric[: -len("_mean")] if metric.endswith("_mean") else metric


def absolute_floor(unit: str) -> float:
  """The smallest change in `unit` worth a verdict: 8 MiB for memory, else 0.

  Example:
    >>> absolute_floor("GiB")
    0.0078125
  """
  bytes_per_unit = BYTES_PER_UNIT.get(unit.strip().lower())
  return _MEMORY_FLOOR_BYTES / bytes_per_unit if bytes_per_unit else 0.0


def metric_direction(tag: str, unit: str) -> Direction:
  """The direction of the metric `tag` measured in `unit` (see the module table).

  Example:
    >>> metric_direction("save_0_basics/time_s", "s")
    <Direction.LOWER: 'lower'>
    >>> metric_direction("save_4_throughput/save_total_gbps", "GiB/s")
    <Direction.HIGHER: 'higher'>
  """
  parsed = Tag.parse(tag)  # a tag off the convention is judged by its unit alone
  namespace, metric = parsed.namespace, parsed.metric
  metric = _base_metric(metric)
  unit_key = unit.strip().lower()
  if namespace == "5_inventory" or unit_key in _COUNT_UNITS or metric == "count":
    return Direction.NEUTRAL
  if _INTERVAL.search(metric):
    return Direction.NEUTRAL
  if metric.endswith("_saved_s") or metric.endswith("hit_rate"):
    return Direction.HIGHER
  if is_rate_unit(unit):
    return Direction.HIGHER
  if namespace == "4_throughput" and unit_key in {"ratio", "%", "fraction", ""}:
    return Direction.HIGHER
  if unit_key in SECONDS_PER_UNIT:
    return Direction.LOWER
  if is_memory_unit(unit) and namespace in _MEMORY_NAMESPACES:
    return Direction.LOWER
  if namespace == "7_memory" and metric.endswith(PEAK_OVER_CHECKPOINT_SUFFIX):
    return Direction.LOWER
  return Direction.NEUTRAL
