"""Checking a benchmark's `options:` against its options class; finding sweep axes."""

from __future__ import annotations

import collections.abc
import dataclasses
import difflib
import functools
import itertools
import re
import types
import typing
from typing import Any, Callable

import pydantic

from ckptbench.api import BenchmarkOptions

ErrorAt = Callable[[str, tuple], Exception]


@dataclasses.dataclass(frozen=True)
class OptionAxes:
  """Options of one benchmark entry: fixed values and swept axes (in YAML order)."""

  fixed: dict[str, Any]
  axes: dict[str, list[Any]]

  def product(self) -> list[dict[str, Any]]:
    """Every combination of the swept values, each merged with the fixed options."""
    names = list(self.axes)
    combos = itertools.product(*(self.axes[n] for n in names))
    return [{**self.fixed, **dict(zip(names, values))} for values in combos]


@dataclasses.dataclass(frozen=True)
class OptionPoint:
  """One combination of an entry's options, built into its options class and checked."""

  values: dict[str, Any]
  options: BenchmarkOptions
  invalid_reason: str | None  # why `is_valid()` is False (the point is skipped), else None


def _is_list_type(tp: Any) -> bool:
  return typing.get_origin(tp) in (list, tuple, collections.abc.Sequence)


def _union_members(tp: Any) -> tuple[Any, ...]:
  if typing.get_origin(tp) in (typing.Union, types.UnionType):
    return typing.get_args(tp)
  return (tp,)


@functools.lru_cache(maxsize=None)
def _adapter(tp: Any) -> pydantic.TypeAdapter:
  return pydantic.TypeAdapter(tp, config=pydantic.ConfigDict(strict=True))


def _type_name(tp: Any) -> str:
  return getattr(tp, "__name__", None) or str(tp).replace("typing.", "").replace("collections.abc.", "")


def check_options(
    options_cls: type[BenchmarkOptions], raw: dict[str, Any], error_at: ErrorAt
) -> OptionAxes:
  """Validates names and types; a YAML list is a sweep over its items.

  A field typed only as a list (e.g. `list[int]`) takes a list as one value,
  and a list of lists sweeps it.
  """
  hints = typing.get_type_hints(options_cls)
  fields = {f.name for f in dataclasses.fields(options_cls) if f.init}
  fixed: dict[str, Any] = {}
  axes: dict[str, list[Any]] = {}
  for name, value in raw.items():
    if name not in fields:
      close = difflib.get_close_matches(name, sorted(fields), n=1)
      hint = f"did you mean {close[0]!r}?" if close else f"known options: {', '.join(sorted(fields))}"
      raise error_at(f"{options_cls.__name__} has no option {name!r}; {hint}", (name,))
    field_type = hints[name]
    members = _union_members(field_type)
    scalar_members = tuple(m for m in members if not _is_list_type(m))
    list_only = not scalar_members
    sweep = isinstance(value, list) and (not list_only or (value and all(isinstance(v, list) for v in value)))
    if sweep:
      if not value:
        raise error_at("an empty list sweeps nothing; give at least one value", (name,))
      item_type = field_type if list_only else typing.Union[scalar_members]  # type: ignore[valid-type]
      axes[name] = [_check_value(name, v, item_type, (name, i), error_at) for i, v in enumerate(value)]
    else:
      fixed[name] = _check_value(name, value, field_type, (name,), error_at)
  for timeout in [fixed.get("timeout_s")] + axes.get("timeout_s", []):
    if timeout is not None and timeout <= 0:
      raise error_at(f"timeout_s must be a positive number of seconds, got {timeout!r}", ("timeout_s",))
  return OptionAxes(fixed, axes)


def _check_value(name: str, value: Any, tp: Any, path: tuple, error_at: ErrorAt) -> Any:
  try:
    return _adapter(tp).validate_python(value)
  except pydantic.ValidationError:
    raise error_at(
        f"option {name!r} expects {_type_name(tp)}, got {value!r} ({type(value).__name__})", path
    ) from None
  except pydantic.PydanticSchemaGenerationError:
    return value  # a type pydantic cannot check: let the dataclass decide


def build_points(options_cls: type[BenchmarkOptions], axes: OptionAxes, error_at: ErrorAt) -> tuple[OptionPoint, ...]:
  """Builds every combination of `axes` into `options_cls` and asks it `is_valid()`.

  A combination its class refuses to build (a `__post_init__` that raises) is
  an error at the option the message names, or else at `options:`; one that
  builds but is not valid is kept with its reason, to be skipped.
  """
  points = []
  for values in axes.product():
    try:
      options = options_cls(**values)
    except (TypeError, ValueError) as e:
      text = ", ".join(f"{k}={v!r}" for k, v in values.items())
      raise error_at(f"{options_cls.__name__}({text}) was rejected: {e}", _blamed(str(e), values, axes)) from None
    reason = None if options.is_valid() else options.invalid_reason() or "is_valid() returned False"
    points.append(OptionPoint(values, options, reason))
  return tuple(points)


def _blamed(message: str, values: dict[str, Any], axes: OptionAxes) -> tuple:
  """The path under `options:` of the first option `message` names (its swept item, if swept)."""
  for name, value in values.items():
    if re.search(rf"\b{re.escape(name)}\b", message):
      return (name, axes.axes[name].index(value)) if name in axes.axes else (name,)
  return ()
