"""The collector protocol and the open registry of collectors.

A collector measures one aspect of a `measure()` block. `start()` is called on
entry and `stop()` on exit; `stop()` returns metrics keyed
`"<namespace>/<metric>"` (for example `"0_basics/time_s"`), which `Metrics`
prefixes with the operation name.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Callable, Collection, Iterator, Literal, Mapping, Protocol

Reduce = Literal["sum", "max", "min", "last"]


@dataclasses.dataclass(frozen=True)
class MetricValue:
  """One measured value.

  Attributes:
    value: the number.
    unit: its unit ("s", "MiB", "GiB", "GiB/s", "count", "bytes", "ratio", ...).
    reduce: how entries of the same block combine when it is entered several
      times in one run: "sum" for additive quantities (time, bytes), "max" /
      "min" for extremes (peaks), "last" for gauges.
  """

  value: float
  unit: str
  reduce: Reduce = "sum"


class Collector(Protocol):
  """Measures one aspect of a block. Instances are single-use."""

  def start(self) -> None:
    ...

  def stop(self) -> Mapping[str, MetricValue]:
    ...


@dataclasses.dataclass(frozen=True)
class _Registration:
  factory: Callable[[], Collector]
  default: bool


_REGISTRY: dict[str, _Registration] = {}
# Collectors another pass measures (the timed runs leave `rss` to the memory pass): `measure()` skips them.
_HELD: frozenset[str] = frozenset()


def register_collector(
    key: str, factory: Callable[[], Collector], *, default: bool = True
) -> None:
  """Adds a collector under `key`; `default` ones run when `measure()` gets no keys.

  Registering an existing key replaces it, so a user can swap in their own.
  """
  _REGISTRY[key] = _Registration(factory, default)


def collector_registrations() -> list[tuple[str, Callable[[], Collector], bool]]:
  """Every registered collector as (key, factory, default), in registration order."""
  return [(key, reg.factory, reg.default) for key, reg in _REGISTRY.items()]


def default_collectors() -> list[str]:
  return [k for k, r in _REGISTRY.items() if r.default]


def make_collector(key: str) -> Collector:
  try:
    return _REGISTRY[key].factory()
  except KeyError:
    raise ValueError(
        f"unknown metric key {key!r}; known keys: {', '.join(sorted(_REGISTRY))}"
    ) from None


@contextlib.contextmanager
def collectors_held(keys: Collection[str]) -> Iterator[None]:
  """While open, `measure()` blocks skip these collectors (asked for by name or by default): the engine's
  timed runs hold `rss`, whose figures come from a memory pass of their own (engine/memory/_pass.py)."""
  global _HELD
  unknown = sorted(set(keys) - set(_REGISTRY))
  if unknown:
    raise ValueError(f"unknown metric key(s) {unknown}; known keys: {', '.join(sorted(_REGISTRY))}")
  before, _HELD = _HELD, _HELD | frozenset(keys)
  try:
    yield
  finally:
    _HELD = before


def held_collectors() -> frozenset[str]:
  """The collectors `measure()` skips now (`collectors_held`)."""
  return _HELD
