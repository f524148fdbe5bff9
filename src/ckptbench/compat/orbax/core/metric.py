"""Orbax's `core.metric` on ckptbench: `Metrics` with Orbax's `results`, the metric classes and their registry.

`Metrics` is `ckptbench.Metrics`: ckptbench's collectors measure, and the record
holds ckptbench's tags (`<op>_<namespace>/<metric>`, docs/metrics.md).
`results` is a live, assignable view of them in Orbax's keys
(`<op>::<namespace>/<metric>` -> `(value, unit)`); a value that is not a number
stays in `results` only. `METRIC_REGISTRY` maps Orbax's metric keys to classes
with Orbax's interface (`start()`, `stop() -> {key: (value, unit)}`): the
built-in keys are ckptbench's collectors; a class of your own runs beside them,
its results recorded as `<op>::<registry key>_<key>` (or `<op>::<key>` with
`OMIT_REGISTRY_KEY_PREFIX`).
"""

from __future__ import annotations

import contextlib
import numbers
import re
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any, ClassVar

from absl import logging

import ckptbench
from ckptbench.compat.orbax.core import multihost

# A tag's part before its first "/": the operation, then a namespace such as "0_basics" (the longest
# operation that leaves one: "save_0_0_basics" is operation "save_0").
_OPERATION_AND_NAMESPACE = re.compile(r"(.+)_(\d+_[a-z0-9]+(?:_[a-z0-9]+)*)")


class BaseMetric:
  """Orbax's metric interface: `start()`, then `stop()` returns `{key: (value, unit)}` of operation `name`."""

  OMIT_REGISTRY_KEY_PREFIX: ClassVar[bool] = False  # record stop()'s keys without the registry key in front

  def __init__(self, name: str):
    self.name = name

  def start(self) -> None:
    pass

  def stop(self) -> dict[str, tuple[Any, str]]:
    return {}


class CollectorMetric(BaseMetric):
  """A ckptbench collector (`collector_key`) behind Orbax's metric interface; its keys are its tags."""

  OMIT_REGISTRY_KEY_PREFIX = True
  collector_key: ClassVar[str] = ""

  def start(self) -> None:
    self._metrics = ckptbench.Metrics()
    self._block = self._metrics.measure(self.name, [self.collector_key])
    self._block.__enter__()

  def stop(self) -> dict[str, tuple[Any, str]]:
    self._block.__exit__(None, None, None)
    prefix = f"{self.name}_"
    return {tag.removeprefix(prefix): (e.value, e.unit) for tag, e in self._metrics.to_dict().items()}


def _collector_metric(key: str, doc: str) -> type[CollectorMetric]:
  name = "".join(part.title() for part in key.split("_")) + "Metric"
  return type(name, (CollectorMetric,), {"collector_key": key, "__doc__": doc, "__module__": __name__})


TimeMetric = _collector_metric("time", "Wall-clock time of the block (ckptbench's `time` collector).")
RssMetric = _collector_metric("rss", "Host RSS growth and peak, in MiB (ckptbench's `rss` collector).")
TracemallocMetric = _collector_metric("tracemalloc", "Python allocations, in MiB (ckptbench's `tracemalloc`).")
TensorstoreMetric = _collector_metric("tensorstore", "TensorStore counter deltas (ckptbench's `tensorstore`).")
JaxMonitoringMetric = _collector_metric("jax_monitoring", "Orbax's jax.monitoring events (ckptbench's `jax_monitoring`).")
DeviceMemoryMetric = _collector_metric("device_memory", "Device memory and live arrays (ckptbench's `device_memory`).")

METRIC_REGISTRY: dict[str, type[BaseMetric]] = {
    m.collector_key: m for m in (TimeMetric, RssMetric, TracemallocMetric, TensorstoreMetric, JaxMonitoringMetric,
                                 DeviceMemoryMetric)
}  # fmt: skip


def default_metrics() -> list[str]:
  """The metric keys measured when `measure()` is given none: ckptbench's default collectors (a new list)."""
  return list(ckptbench.default_collectors())


def _is_collector(key: str) -> bool:
  """Whether `key` runs as ckptbench's collector of that name: not in the registry (ckptbench
  refuses an unknown key), or registered as that collector."""
  cls = METRIC_REGISTRY.get(key)
  return cls is None or (issubclass(cls, CollectorMetric) and cls.collector_key == key)


class _Results(MutableMapping):
  """`Metrics.results`: the measured values in Orbax's keys, `'<op>::<namespace>/<metric>' -> (value, unit)`."""

  def __init__(self, metrics: "Metrics"):
    self._metrics = metrics

  def _entries(self) -> dict[str, tuple[Any, str]]:
    entries = {self._metrics.orbax_key(tag): (e.value, e.unit) for tag, e in self._metrics.to_dict().items()}
    return {**entries, **self._metrics.non_numeric}

  def __getitem__(self, key: str) -> tuple[Any, str]:
    return self._entries()[key]

  def __setitem__(self, key: str, value: tuple[Any, str]) -> None:
    number, unit = value
    self.pop(key, None)
    if isinstance(number, numbers.Real) and not isinstance(number, bool):
      self._metrics.set(self._metrics.tag_of(key), number, unit)
    else:  # Orbax's results take any value; a record holds numbers only
      self._metrics.non_numeric[key] = (number, unit)

  def __delitem__(self, key: str) -> None:
    if key not in self:
      raise KeyError(key)
    if self._metrics.non_numeric.pop(key, None) is None:
      self._metrics.discard(self._metrics.tag_of(key))

  def __iter__(self) -> Iterator[str]:
    return iter(self._entries())

  def __len__(self) -> int:
    return len(self._entries())

  def __repr__(self) -> str:
    return repr(self._entries())


class Metrics(ckptbench.Metrics):
  """`ckptbench.Metrics` with Orbax's `name`, `results` and `report()`: after `with metrics.measure("save",
  ["time"]): ...`, `list(metrics.results)` is `['save::0_basics/time_s']`."""

  def __init__(self, results: Mapping[str, tuple[Any, str]] | None = None, name: str = ""):
    super().__init__()
    self.name = name
    self._keys: dict[str, str] = {}  # tag -> the key it was written under through `results`
    self.non_numeric: dict[str, tuple[Any, str]] = {}  # values written to `results` that are not numbers
    if results:
      self.results = results

  @property
  def results(self) -> _Results:
    """The values measured so far in Orbax's keys; assignable, item by item or whole."""
    return _Results(self)

  @results.setter
  def results(self, values: Mapping[str, tuple[Any, str]]) -> None:
    view = _Results(self)
    view.clear()
    view.update(values)

  def tag_of(self, key: str) -> str:
    """ckptbench's tag for Orbax's key: `'save::0_basics/time_s'` -> `'save_0_basics/time_s'`."""
    operation, sep, rest = key.partition("::")
    tag = f"{operation}_{rest}" if sep else key
    self._keys[tag] = key
    return tag

  def orbax_key(self, tag: str) -> str:
    """Orbax's key for ckptbench's tag: `'save_0_basics/time_s'` -> `'save::0_basics/time_s'`."""
    if tag in self._keys:
      return self._keys[tag]
    head, sep, rest = tag.partition("/")
    found = _OPERATION_AND_NAMESPACE.fullmatch(head) if sep else None
    return f"{found[1]}::{found[2]}/{rest}" if found else tag

  @contextlib.contextmanager
  def measure(self, operation_name: str, metric_keys: Sequence[str] | None = None) -> Iterator[None]:
    """Measures the block with ckptbench's collectors and the registry's other classes (ValueError for a
    key that is neither)."""
    keys = default_metrics() if metric_keys is None else list(metric_keys)
    own = [(k, METRIC_REGISTRY[k](operation_name)) for k in keys if not _is_collector(k)]
    started = []
    try:
      for key, metric in own:
        metric.start()
        started.append((key, metric))
      with super().measure(operation_name, [k for k in keys if _is_collector(k)]):
        yield
    finally:
      for key, metric in reversed(started):
        for name, value in metric.stop().items():
          tag = name if metric.OMIT_REGISTRY_KEY_PREFIX else f"{key}_{name}"
          self.results[f"{operation_name}::{tag}"] = value

  def report(self) -> None:
    """Logs every value recorded so far, one per line, as Orbax's report does."""
    process = multihost.get_process_index()
    lines = [f"---[process_id={process}] {self.name} Metrics Report ---"]
    entries = sorted(self.results.items())
    if not entries:
      lines.append(f"[process_id={process}] No metrics recorded.")
    for key, (value, unit) in entries:
      lines.append(f"{key}: {value:.4f} {unit}" if isinstance(value, float) else f"{key}: {value} {unit}")
    lines.append("----------------------")
    logging.info("\n".join(lines))
