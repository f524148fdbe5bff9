"""`Metrics`: the object a test_fn measures with."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
from typing import Iterator, Mapping, Sequence

from ckptbench.api import _collector
from ckptbench.api._derived import derived_tags
from ckptbench.api._collector import MetricValue, Reduce
from ckptbench.api._values import MetricEntry

# Every Metrics created while a run is active registers here, so the runner
# keeps what a test_fn measured even when the test_fn raises before returning.
_active_run: contextvars.ContextVar[list["Metrics"] | None] = contextvars.ContextVar(
    "ckptbench_active_run", default=None
)


@contextlib.contextmanager
def collect_created_metrics() -> Iterator[list["Metrics"]]:
  """Yields a list that fills with every `Metrics` created inside the block."""
  created: list[Metrics] = []
  token = _active_run.set(created)
  try:
    yield created
  finally:
    _active_run.reset(token)


@dataclasses.dataclass
class _Accumulator:
  unit: str
  reduce: Reduce
  count: int = 0
  total: float = 0.0
  maximum: float = -math.inf
  minimum: float = math.inf
  last: float = math.nan

  def add(self, value: float) -> None:
    self.count += 1
    self.total += value
    self.maximum = max(self.maximum, value)
    self.minimum = min(self.minimum, value)
    self.last = value

  def value(self) -> float:
    return {
        "sum": self.total,
        "max": self.maximum,
        "min": self.minimum,
        "last": self.last,
    }[self.reduce]


class Metrics:
  """Collects metrics from `measure()` blocks; blocks nest.

  Example:
    >>> metrics = Metrics()
    >>> with metrics.measure("save"):
    ...   ocp.save(path, pytree)
    >>> metrics.to_dict()["save_0_basics/time_s"].unit
    's'

  Entering the same block name several times in one run accumulates: the tag
  holds the total (or the peak, for peak metrics), and `<op>_0_basics/count`
  and `<tag>_mean` are added.
  """

  def __init__(self):
    self._values: dict[str, _Accumulator] = {}
    self._entries: dict[str, int] = {}
    created = _active_run.get()
    if created is not None:
      created.append(self)

  @contextlib.contextmanager
  def measure(self, name: str, metric_keys: Sequence[str] | None = None) -> Iterator[None]:
    """Measures the block with the given collectors (default: the default set).

    Args:
      name: the operation name, the prefix of every tag the block records.
      metric_keys: collector keys such as ["time", "rss"]; None for the defaults.

    Raises:
      ValueError: for an unknown collector key (the message lists the known ones).
    """
    keys = list(_collector.default_collectors() if metric_keys is None else metric_keys)
    # Time starts last and stops first, so it excludes the other collectors' work.
    keys.sort(key=lambda k: k == "time")
    held = _collector.held_collectors()  # known keys: an unknown one still raises below
    collectors = [(k, _collector.make_collector(k)) for k in keys if k not in held]
    started = []
    try:
      for _, collector in collectors:
        collector.start()
        started.append(collector)
      yield
    finally:
      measured: dict[str, MetricValue] = {}
      for collector in reversed(started):
        measured.update(collector.stop())
      self._entries[name] = self._entries.get(name, 0) + 1
      for key, metric in measured.items():
        self.add(f"{name}_{key}", metric)

  def add(self, tag: str, metric: MetricValue) -> None:
    """Records a value under a full tag `<op>_<namespace>/<metric>`."""
    acc = self._values.get(tag)
    if acc is None:
      acc = self._values[tag] = _Accumulator(metric.unit, metric.reduce)
    acc.add(float(metric.value))

  def set(self, tag: str, value: float, unit: str) -> None:
    """Makes `tag` hold `value` alone, dropping what earlier entries accumulated (an assignment)."""
    self._values[tag] = _Accumulator(unit, "last")
    self._values[tag].add(float(value))

  def discard(self, tag: str) -> None:
    """Forgets `tag` (nothing happens when it holds nothing)."""
    self._values.pop(tag, None)

  def record(self, op: str, key: str, value: float, unit: str, reduce: Reduce = "last") -> None:
    """Records a value computed by the test_fn itself, e.g. `record("load", "9_other/bytes_verified", n, "bytes")`."""
    self.add(f"{op}_{key}", MetricValue(value, unit, reduce))

  def merge(self, other: "Metrics") -> None:
    for tag, acc in other._values.items():
      mine = self._values.get(tag)
      if mine is None:
        self._values[tag] = dataclasses.replace(acc)
      else:
        mine.count += acc.count
        mine.total += acc.total
        mine.maximum = max(mine.maximum, acc.maximum)
        mine.minimum = min(mine.minimum, acc.minimum)
        mine.last = acc.last
    for name, n in other._entries.items():
      self._entries[name] = self._entries.get(name, 0) + n

  def to_dict(self) -> dict[str, MetricEntry]:
    """`{tag: MetricEntry(value, unit)}`, what a run's record holds.

    Bandwidths and ratios (`4_throughput/*`, hit rates, compression ratios) are
    derived here from the accumulated bytes and seconds, so a block entered
    several times reports total bytes over total time.
    """
    out: dict[str, MetricEntry] = {}
    for tag, acc in self._values.items():
      out[tag] = MetricEntry(acc.value(), acc.unit)
      if acc.count > 1 and acc.reduce == "sum":
        out[f"{tag}_mean"] = MetricEntry(acc.total / acc.count, acc.unit)
    for name, n in self._entries.items():
      if n > 1:
        out[f"{name}_0_basics/count"] = MetricEntry(float(n), "count")
    out.update(derived_tags(out))
    return out

  def __repr__(self) -> str:
    return f"Metrics({len(self._values)} tags)"


def merged(all_metrics: Sequence[Metrics]) -> Mapping[str, MetricEntry]:
  """One mapping of tags from several Metrics objects of the same run."""
  total = Metrics.__new__(Metrics)
  total._values, total._entries = {}, {}
  for m in all_metrics:
    total.merge(m)
  return total.to_dict()
