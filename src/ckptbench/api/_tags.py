"""A metric tag's parts and kind: `Tag` (splitting, the headline rule) and unit kinds.

Which tags exist, with their units and meanings, is the table in `_tag_table`.
"""

from __future__ import annotations

import dataclasses
import re


BYTES_PER_UNIT = {
    "b": 1, "byte": 1, "bytes": 1, "kb": 1e3, "kib": 2**10, "mb": 1e6, "mib": 2**20,
    "gb": 1e9, "gib": 2**30, "tb": 1e12, "tib": 2**40,
}  # fmt: skip


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
  knows how tags split and which ones are headline metrics."""

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

  def is_headline(self, unit: str) -> bool:
    """True for what a suite is judged on: an operation's time, throughput and own peak memory.

    Baseline gates, console tables and TensorBoard's HParams all use this rule.
    A `<tag>_mean` (per entry of a block entered several times) is not a
    headline: its total is.

    Example:
      >>> Tag.parse("load_0_basics/time_s").is_headline("s")
      True
      >>> Tag.parse("load_6_tensorstore/bytes_read").is_headline("bytes")
      False
    """
    if self.metric.endswith("_mean"):
      return False
    if self.namespace == "0_basics":
      return self.metric == "time_s"
    if self.namespace == "4_throughput":
      return is_rate_unit(unit)
    if self.namespace == "7_memory":  # the operation's own peak (over its start), not the process's
      if self.metric.endswith(PEAK_OVER_CHECKPOINT_SUFFIX):  # the same peak over the checkpoint's bytes
        return True
      return "peak" in self.metric and "diff" in self.metric and is_memory_unit(unit)
    return False
