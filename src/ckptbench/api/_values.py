"""A metric's values as the records hold them: one run's `MetricEntry`, one benchmark's `MetricStatistics`.

Frozen and typed from `Metrics` to results.jsonl and summary.json and back:
`to_json()` writes the on-disk form (docs/ARCHITECTURE.md), `from_json()`
reads it, numbers or not, so a reader never digs in a dict for `"mean"`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections import abc
from collections.abc import Mapping
from typing import Any


class SchemaError(ValueError):
  """A record written by an incompatible ckptbench (another schema_version), or not a record."""


def as_number(value: Any) -> float | None:
  """`value` as a float; None when it is not a number (a bool, a string, null)."""
  if isinstance(value, bool) or not isinstance(value, (int, float)):
    return None
  return float(value)


def finite_number(value: Any, what: str) -> float:
  """`value` as a finite float, for what a statistic or a gate will read.

  Raises:
    SchemaError: naming `what`, for a bool, a string, null, a list, NaN or an infinity.
  """
  number = as_number(value)
  if number is None or not math.isfinite(number):
    raise SchemaError(f"{what} is {_shown(value)}, not a finite number")
  return number


def _shown(value: Any) -> str:
  shown = repr(value)
  return shown if len(shown) <= 40 else shown[:37] + "..."


@dataclasses.dataclass(frozen=True)
class MetricEntry:
  """One run's value of one tag, with its unit (`{"value": v, "unit": u}` in results.jsonl)."""

  value: float
  unit: str = ""

  def to_json(self) -> dict[str, Any]:
    return {"value": self.value, "unit": self.unit}

  @classmethod
  def from_json(cls, data: Any, tag: str = "metric") -> MetricEntry:
    """Reads `{"value": v, "unit": u}`; a value that is not a number reads as NaN.

    Raises:
      SchemaError: not a mapping with a value.
    """
    if not isinstance(data, Mapping) or "value" not in data:
      raise SchemaError(f"{tag} is not a {{'value', 'unit'}} object")
    value = as_number(data["value"])
    return cls(math.nan if value is None else value, str(data.get("unit") or ""))


@dataclasses.dataclass(frozen=True)
class HostStatistics:
  """One metric across hosts: each host's mean over its repeats, and which host was slowest."""

  n: int  # hosts with a sample
  min: float
  mean: float
  max: float
  p50: float
  p99: float
  std: float  # sample standard deviation over hosts; 0 for one host
  slowest_host: int
  slowest_value: float
  per_host: dict[int, float]  # host index -> that host's mean

  def to_json(self) -> dict[str, Any]:
    data = dataclasses.asdict(self)
    data["per_host"] = {str(h): v for h, v in self.per_host.items()}  # JSON keys are strings
    return data

  @classmethod
  def from_json(cls, data: Any) -> HostStatistics:
    fields = json_fields(cls, data, "cross-host statistics")
    per_host = fields.get("per_host") or {}
    if not isinstance(per_host, Mapping):
      raise SchemaError("cross-host statistics per_host is not a JSON object")
    try:
      fields["per_host"] = {int(h): float(v) for h, v in per_host.items()}
    except (TypeError, ValueError) as e:
      raise SchemaError(f"cross-host statistics per_host: {e}") from None
    return cls(**fields)


@dataclasses.dataclass(frozen=True)
class MetricStatistics:
  """One benchmark's statistics of one tag over its measured runs (an entry of summary.json).

  `mean` to `median` are None when no run gave a finite value (`n` is 0).
  `hosts` is the cross-host block, for a run of several hosts with samples.
  """

  unit: str
  n: int
  mean: float | None = None
  std: float | None = None
  min: float | None = None
  max: float | None = None
  median: float | None = None
  hosts: HostStatistics | None = None

  def to_json(self) -> dict[str, Any]:
    """`{"unit", "n", "mean", "std", "min", "max", "median"[, "hosts"]}`; statistics absent with n 0."""
    data: dict[str, Any] = {"unit": self.unit, "n": self.n}
    if self.n:
      data.update(mean=self.mean, std=self.std, min=self.min, max=self.max, median=self.median)
    if self.hosts is not None:
      data["hosts"] = self.hosts.to_json()
    return data

  @classmethod
  def from_json(cls, data: Any, tag: str = "metric") -> MetricStatistics:
    """Reads a summary.json metric entry (`"hosts": null`, as older files have it, reads as None)."""
    fields = json_fields(cls, data, f"statistics of {tag}")
    for name in ("mean", "std", "min", "max", "median"):
      fields[name] = as_number(fields.get(name))
    hosts = fields.get("hosts")
    fields["hosts"] = HostStatistics.from_json(hosts) if hosts else None
    return cls(**fields)


def json_fields(cls: type, data: Any, what: str) -> dict[str, Any]:
  """The values of `cls`'s fields found in `data`, once every required one is there and each
  plain one (a string, number, flag, object or list, or null where the field allows it) has its type.

  Raises:
    SchemaError: naming `what` and the field.
  """
  if not isinstance(data, Mapping):
    raise SchemaError(f"{what} is not a JSON object")
  fields = dataclasses.fields(cls)
  required = (f for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
  missing = sorted(f.name for f in required if f.name not in data)
  if missing:
    raise SchemaError(f"{what} lacks {', '.join(missing)}")
  found = {f.name: data[f.name] for f in fields if f.name in data}
  for name, value in found.items():
    kinds = _plain_kinds(cls).get(name)
    if kinds is not None and not _is_kind(value, kinds):
      raise SchemaError(f"{what} {name} is {_shown(value)}, not {' or '.join(_KIND_NAMES[k] for k in kinds)}")
  return found


_PLAIN = (str, bool, int, float, dict, list)
_KIND_NAMES = {str: "a string", bool: "true or false", int: "an integer", float: "a number", dict: "an object",
               list: "a list", type(None): "null"}  # fmt: skip


@functools.cache
def _plain_kinds(cls: type) -> dict[str, tuple[type, ...]]:
  """Per field of `cls` whose type is plain JSON (`str`, `int | None`, `dict[str, Any]`...), the kinds it takes."""
  kinds = {}
  for name, hint in typing.get_type_hints(cls).items():
    union = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
    options = typing.get_args(hint) if union else (hint,)
    plain = []
    for option in options:
      origin = typing.get_origin(option) or option
      origin = {Mapping: dict, abc.Sequence: list, tuple: list}.get(origin, origin)
      if origin is type(None) or origin in _PLAIN:
        plain.append(origin)
    if len(plain) == len(options):
      kinds[name] = tuple(plain)
  return kinds


def _is_kind(value: Any, kinds: tuple[type, ...]) -> bool:
  if isinstance(value, bool):
    return bool in kinds
  if isinstance(value, int) and float in kinds:
    return True
  return isinstance(value, tuple(k for k in kinds if k is not bool))
