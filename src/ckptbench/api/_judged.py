"""What a suite is judged on: the one rule, as data beside the tag table.

Every part that judges or shows "the headline metrics" reads this table: the
verdicts in summary.json (and the console and report tables that show them),
the baseline gate (comparison.json's `headline` rows, `--fail_on_regression`),
TensorBoard's HParams, `compare`, `matrix` and `bisect`. A tag is judged when
its part after the operation (`<namespace>/<metric>`) is a row of `JUDGED` and
its operation is a whole one: not a part another operation already covers.

Why these and no others: an operation's wall-clock time is what a user waits
for; its own total bandwidth is what the storage delivered (Orbax's bytes over
its own window, which the block time does not give); the peak memory it added,
on the host and on the devices, is what it costs a training job. Everything
else (stage breakdowns, per-host and raw bandwidths, `save_blocking_gbps`:
bytes over the time the caller was blocked is no bandwidth, Python allocation
peaks, counters, inventory) explains those figures and is shown, never judged.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

from ckptbench.api._tags import Tag


@dataclasses.dataclass(frozen=True)
class Judged:
  """One kind of judged metric.

  Attributes:
    key: `<namespace>/<metric>`, a key of the tag table (`api._tag_table.TAGS`).
    label: the verdict row's words after the operation's ("time" -> "save time").
    of_blocking_half: judged on an async save's blocking half (`save_blocking`) too:
      the time the caller was blocked is an answer of its own; its bandwidth and memory are not.
  """

  key: str
  label: str
  of_blocking_half: bool = False


JUDGED: tuple[Judged, ...] = (
    Judged("0_basics/time_s", "time", of_blocking_half=True),
    Judged("4_throughput/save_total_gbps", "throughput"),
    Judged("4_throughput/load_total_gbps", "throughput"),
    Judged("7_memory/host_rss_peak_diff_mib", "peak host memory added"),
    Judged("7_memory/device_peak_diff_gb", "peak device memory added"),
)

# Operations that are parts of another, judged whole: an async save's background half (its
# bandwidth repeats the save's) and the check after a load.
PART_OPERATIONS: tuple[str, ...] = ("_background", "verify")
BLOCKING_HALF = "_blocking"

_BY_KEY = {j.key: j for j in JUDGED}


@dataclasses.dataclass(frozen=True)
class JudgedMetric:
  """A tag a suite is judged on, found in a run's metrics.

  Attributes:
    tag: the full tag, e.g. `save_0_basics/time_s`.
    label: readable, e.g. "save time".
    unit: as recorded.
  """

  tag: str
  label: str
  unit: str


def judged_as(tag: str) -> Judged | None:
  """The row of `JUDGED` that judges `tag`, or None: not judged (shown only).

  Example:
    >>> judged_as("load_0_basics/time_s").label
    'time'
    >>> judged_as("save_background_0_basics/time_s") is None  # part of the save
    True
    >>> judged_as("save_4_throughput/save_blocking_gbps") is None
    True
  """
  parts = Tag.parse(tag)
  row = _BY_KEY.get(parts.key)
  if row is None or not parts.op or parts.op.endswith(PART_OPERATIONS):
    return None
  if parts.op.endswith(BLOCKING_HALF) and not row.of_blocking_half:
    return None
  return row


def is_judged(tag: str) -> bool:
  """Whether a suite is judged on `tag` (see the module docstring)."""
  return judged_as(tag) is not None


def judged_metrics(units: Mapping[str, str]) -> list[JudgedMetric]:
  """The judged tags among `units` (tag -> unit, in the order they were recorded), in the verdict's order:
  every operation's time, then their bandwidths, then their memory, operations in recorded order."""
  ops = list(dict.fromkeys(Tag.parse(t).op for t in units))
  found = [(t, judged_as(t)) for t in units]
  rows = [(t, row) for t, row in found if row is not None]
  rows.sort(key=lambda item: (Tag.parse(item[0]).namespace, ops.index(Tag.parse(item[0]).op), JUDGED.index(item[1])))
  return [JudgedMetric(t, f"{Tag.parse(t).op.replace('_', ' ')} {row.label}", units[t]) for t, row in rows]


def judged_text() -> str:
  """What a suite is judged on, in words, from the rule (`JUDGED`)."""
  labels = list(dict.fromkeys(j.label for j in JUDGED))
  return "each operation's " + ", ".join(labels[:-1]) + " and " + labels[-1]
