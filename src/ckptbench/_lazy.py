"""Lazy re-exports: heavy modules (scipy, plotly, pandas, tensorboard) load on first use.

`import ckptbench` and `ckptbench run` then start fast, and a run pays for the
report's libraries only when it writes the report.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def lazy_getattr(namespace: dict[str, Any], exports: Mapping[str, str]) -> Callable[[str], Any]:
  """A module `__getattr__` that imports `exports[name]` on first access.

  `exports[name]` is a module path (the name is the module's attribute of the
  same name) or `module:attribute` for a name offered under another one.
  """

  def __getattr__(name: str) -> Any:
    where = exports.get(name)
    if where is None:
      raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
    module, _, attribute = where.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    namespace[name] = value  # later lookups skip this function
    return value

  return __getattr__
