"""Benchmark options: a frozen dataclass whose list-valued YAML fields are swept."""

from __future__ import annotations

import dataclasses
from typing import Any


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

  def invalid_reason(self) -> str | None:
    """Why this combination makes no sense (it is skipped, and `ckptbench plan` says why), or None.

    Override this one; `is_valid` follows from it.
    """
    return None

  def is_valid(self) -> bool:
    """False for combinations that make no sense; they are skipped.

    Derived from `invalid_reason`. A class written for Orbax's runner may
    override `is_valid` alone: its combinations are skipped all the same, with
    no reason given.
    """
    return self.invalid_reason() is None

  def unsupported_reason(self) -> str | None:
    """Why the installed libraries cannot run this combination (e.g. an Orbax
    release lacks an option), or None. Such a combination is recorded as
    unsupported with the reason, like a mesh that does not fit, and not run.
    """
    return None


def option_fields(options_cls: type[BenchmarkOptions]) -> dict[str, dataclasses.Field]:
  """The init fields of an options class, by name."""
  return {f.name: f for f in dataclasses.fields(options_cls) if f.init}


def options_to_dict(options: BenchmarkOptions) -> dict[str, Any]:
  """JSON-friendly dict of an options instance."""
  return {name: getattr(options, name) for name in option_fields(type(options))}
