"""A metric tag's parts and kind: `Tag` (splitting) and unit kinds.

Which tags exist, with their units and meanings, is the table in `_tag_table`; which of them a
suite is judged on, the table in `_judged`.
"""

from __future__ import annotations

import dataclasses
import re


BYTES_PER_UNIT = {
    "b": 1, "byte": 1, "bytes": 1, "kb": 1e3, "kib": 2**10, "mb": 1e6, "mib": 2**20,
    "gb": 1e9, "gib": 2**30, "tb": 1e12, "tib": 2**40,
}  # fmt: skip
# Time units as metrics spell them (lowercased), in seconds.
SECONDS_PER_UNIT = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def is_rate_unit(unit: str) -> bool:
  """True for rates (units ending in "/s", such as "GiB/s"), where higher is better.

  Example:
    >>> is_rate_unit("GiB/s"), is_rate_unit("s")
    (True, False)
  """
  return unit.endswith("/s")


def is_memory_unit(unit: str) -> bool:
  """True for byte-based units (`B`, `bytes`, `KiB` ... `TiB`, `MB` ...)."""
  return unit.strip().lower() in BYTES_PER_UNIT


# `7_memory/host_peak_over_checkpoint`: memory ratios comparable across models (lower is better).
PEAK_OVER_CHECKPOINT_SUFFIX = "_over_checkpoint"

# A namespace is a digit and lowercase words, so an operation may itself end in
# digits ("step_1_0_basics/time_s" is operation "step_1"). Namespaces a user
# invents ("1_custom") split the same way.
_TAG = re.compile(r"^(?P<op>.+?)_(?P<namespace>\d_[a-z]+(?:_[a-z]+)*)/(?P<metric>.+)$")


@dataclasses.dataclass(frozen=True)
class Tag:
  """A metric tag `<op>_<namespace>/<metric>` split into its parts; the one place that
  knows how tags split."""

  op: str
  namespace: str
  metric: str

  @classmethod
  def parse(cls, tag: str) -> Tag:
    """`save_0_basics/time_s` -> Tag("save", "0_basics", "time_s").

    A tag that does not follow the convention keeps its whole text as `metric`
    with an empty operation and namespace.
    """
    match = _TAG.match(tag)
    if match is None:
      return cls("", "", tag)
    return cls(match["op"], match["namespace"], match["metric"])

  @property
  def full(self) -> str:
    return f"{self.op}_{self.namespace}/{self.metric}" if self.namespace else self.metric

  @property
  def key(self) -> str:
    """The tag without its operation: `0_basics/time_s`."""
    return f"{self.namespace}/{self.metric}" if self.namespace else self.metric

# Tags renamed to Orbax's names: old name -> current name, both `<namespace>/<metric>`. Results,
# summaries and baselines written with an old name read back with the current one (`current_tag`).
RENAMED: dict[str, str] = {
    "2_save_breakdown/start_sync_s": "2_save_breakdown/checkpoint_start_sync_s",
}


def current_tag(tag: str) -> str:
  """A full tag (`<op>_<namespace>/<metric>`) under its current name: a renamed one's new name.

  Example:
    >>> current_tag("save_2_save_breakdown/start_sync_s")
    'save_2_save_breakdown/checkpoint_start_sync_s'
    >>> current_tag("save_0_basics/time_s")
    'save_0_basics/time_s'
  """
  parsed = Tag.parse(tag)
  renamed = RENAMED.get(parsed.key)
  if renamed is None or not parsed.op:
    return tag
  namespace, metric = renamed.split("/", 1)
  return Tag(parsed.op, namespace, metric).full
