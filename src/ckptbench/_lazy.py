"""Lazy re-exports: heavy modules (scipy, plotly, pandas, tensorboard) load on first use.

`import ckptbench` and `ckptbench run` then start fast, and a run pays for the
report's libraries only when it writes the report.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def lazy_getattr(namespace: dict[str, Any], exports: Mapping[str, str]) -> Callable[[str], Any]:
  """A module `__getattr__` that imports `exports[name]` (a module path) on first access."""

  def __getattr__(name: str) -> Any:
    module = exports.get(name)
    if module is None:
      raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    namespace[name] = value  # later lookups skip this function
    return value

  return __getattr__
