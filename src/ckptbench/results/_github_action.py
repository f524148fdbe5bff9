"""A run's benchmark x metric series as benchmark-action/github-action-benchmark's custom JSON:
a list of `{name, unit, value, range, extra}`.

The action's tool says which way is better for the whole file (`customSmallerIsBetter` or
`customBiggerIsBetter`), so a file holds one direction: the metrics ckptbench judges smaller-is-better,
or with `bigger_is_better` those it judges bigger-is-better. Neutral ones (counts, sizes of I/O,
inventory) are in neither: the action would alert on them.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any, Sequence

from ckptbench.errors import CkptbenchError
from ckptbench.results._metric_series import BenchmarkExport, LeftOut, MetricSeries
from ckptbench.stats import Direction, median_interval

# The action's `tool:` input for each direction.
GITHUB_ACTION_TOOLS = {False: "customSmallerIsBetter", True: "customBiggerIsBetter"}


def _why_left_out(series: MetricSeries, bigger_is_better: bool) -> str | None:
  wanted = Direction.HIGHER if bigger_is_better else Direction.LOWER
  if series.direction is wanted:
    return None
  if series.direction is Direction.NEUTRAL:
    return "neutral: ckptbench judges it neither way"
  if series.direction is Direction.HIGHER:
    return "bigger is better: in the file written with --bigger_is_better"
  return "smaller is better: in the file written without --bigger_is_better"


def _entry(series: MetricSeries, suite: str) -> dict[str, Any]:
  """`{name, unit, value, range, extra}`: the median of the repeats, its distribution-free interval
  as the range (as ckptbench's tables show it), and in `extra` what the figures are."""
  interval = median_interval(series.values)
  assert interval is not None  # a series has a finite sample
  return {
      "name": series.name,
      "unit": series.unit,
      "value": interval.median,
      "range": f"[{interval.low:.6g}, {interval.high:.6g}]",
      "extra": f"suite {suite}\nmedian of {interval.n} repeats; range: its distribution-free interval,"
               f" coverage {interval.coverage:.0%}",
  }  # fmt: skip


def write_github_action_benchmark(
    series: Sequence[MetricSeries], suite: str, path: pathlib.Path, bigger_is_better: bool = False
) -> BenchmarkExport:
  """Writes the entries of one direction (`GITHUB_ACTION_TOOLS[bigger_is_better]`), leaving out the rest, named.

  Raises:
    CkptbenchError: when no series has that direction (the action refuses an empty list).
  """
  entries, left_out = [], []
  for s in series:
    reason = _why_left_out(s, bigger_is_better)
    if reason is None:
      entries.append(_entry(s, suite))
    else:
      left_out.append(LeftOut(s.benchmark, s.tag, reason))
  if not entries:
    which = "bigger" if bigger_is_better else "smaller"
    raise CkptbenchError(f"{path} not written: none of the {len(series)} benchmark x metric is {which}-is-better"
                         f" (github-action-benchmark refuses an empty list)")  # fmt: skip
  try:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries, indent=1) + "\n", encoding="utf-8")
  except OSError as e:
    raise CkptbenchError(f"cannot write {path}: {e.strerror or e}") from None
  return BenchmarkExport(path, tuple(e["name"] for e in entries), tuple(left_out),
                         tuple(dict.fromkeys(s.benchmark for s in series)))  # fmt: skip
