"""Benchmark options: a frozen dataclass whose list-valued YAML fields are swept."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar


@dataclasses.dataclass(frozen=True, kw_only=True)
class BenchmarkOptions:
  """Base class for the knobs of a benchmark.

  Subclass it as a frozen dataclass. In a suite, any option given as a YAML list
  becomes a sweep axis; annotate such fields as `bool | list[bool]` to say so.

  Attributes:
    enable_trace: capture a `jax.profiler` trace of each measured operation.
    trace_every_repeat: trace every repeat, not only the first.
    timeout_s: a run that takes longer than this is recorded as a failure.
  """

  enable_trace: bool = False
  trace_every_repeat: bool = False
  timeout_s: float | None = None

  def is_valid(self) -> bool:
    """Returns False for combinations that make no sense; they are skipped."""
    return True

  def invalid_reason(self) -> str | None:
    """Why `is_valid()` is False, for `ckptbench plan`. Override to explain."""
    return None if self.is_valid() else "is_valid() returned False"


_G = TypeVar("_G")


def benchmark_options(options_cls: type[BenchmarkOptions]):
  """Class decorator binding an options dataclass to a `BenchmarksGenerator`.

  Example:
    >>> @benchmark_options(MyOptions)
    ... class MyBenchmark(BenchmarksGenerator):
    ...   def test_fn(self, context): ...

  Raises:
    TypeError: when `options_cls` is not a dataclass subclass of
      `BenchmarkOptions`, or the decorated object is not a generator class.
  """
  if not (isinstance(options_cls, type) and issubclass(options_cls, BenchmarkOptions)):
    raise TypeError(
        "@benchmark_options expects a subclass of ckptbench.BenchmarkOptions, got"
        f" {options_cls!r}; did you forget to pass the options class, as in"
        " @benchmark_options(MyOptions)?"
    )
  if not dataclasses.is_dataclass(options_cls):
    raise TypeError(
        f"@benchmark_options: {options_cls.__name__} must be a dataclass; decorate"
        " it with @dataclasses.dataclass(frozen=True)."
    )

  def bind(generator_cls: _G) -> _G:
    from ckptbench.core._generator import BenchmarksGenerator  # cycle: generator imports options

    if not (isinstance(generator_cls, type) and issubclass(generator_cls, BenchmarksGenerator)):
      raise TypeError(
          "@benchmark_options must decorate a subclass of"
          f" ckptbench.BenchmarksGenerator, got {generator_cls!r}"
      )
    generator_cls.options_class = options_cls
    return generator_cls

  return bind


def option_fields(options_cls: type[BenchmarkOptions]) -> dict[str, dataclasses.Field]:
  """The init fields of an options class, by name."""
  return {f.name: f for f in dataclasses.fields(options_cls) if f.init}


def options_to_dict(options: BenchmarkOptions) -> dict[str, Any]:
  """JSON-friendly dict of an options instance."""
  return {name: getattr(options, name) for name in option_fields(type(options))}
