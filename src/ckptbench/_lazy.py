"""Package faces written once, loaded lazily: heavy modules (JAX, scipy, plotly, pandas) load on first use.

A face (a package's `__init__`) names each of its names once, as an import under
`if TYPE_CHECKING:`, which is what type checkers and IDEs read. `lazy_face` reads
that block (by AST, on the first name asked for) into the map of where each name
lives, and `__all__` is those names and the ones the face imports eagerly from
ckptbench. So `import ckptbench` and `ckptbench run` start fast, and a run pays
for the report's libraries only when it writes the report.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


class FaceError(Exception):
  """A face's source is not the form `lazy_face` reads (a bug in ckptbench, never in the user's input)."""


def lazy_face(namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
  """The module `__getattr__` and `__dir__` of the face whose globals are `namespace`.

  `__getattr__(name)` imports the module the face's `TYPE_CHECKING` block names for
  `name`, binds the value in `namespace` (later lookups skip this function) and returns
  it; `__getattr__("__all__")` is the sorted public names.

  Example (a face's whole code):
    from typing import TYPE_CHECKING
    from ckptbench._lazy import lazy_face
    if TYPE_CHECKING:
      from ckptbench.stats._trend import theil_sen_slope
    __getattr__, __dir__ = lazy_face(globals())
  """
  table: dict[str, tuple[str, str]] = {}
  public: list[str] = []

  def read() -> None:
    if not public:
      found, eager = _read_face(namespace)
      table.update(found)
      public.extend(sorted({*found, *eager}))

  def __getattr__(name: str) -> Any:
    if name.startswith("__") and name != "__all__":  # import machinery, pickle, inspect: no parse for those
      raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
    read()
    if name == "__all__":
      value: Any = list(public)
    elif name in table:
      module, attribute = table[name]
      value = getattr(importlib.import_module(module), attribute)
    else:
      raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
    namespace[name] = value
    return value

  def __dir__() -> list[str]:
    read()
    return list(public)

  return __getattr__, __dir__


def _read_face(namespace: dict[str, Any]) -> tuple[dict[str, tuple[str, str]], list[str]]:
  import ast  # noqa: PLC0415  (only once a name is first asked for: `--version` never pays for it)

  name = namespace["__name__"]
  source = namespace["__loader__"].get_source(name)
  if source is None:
    raise FaceError(f"{name}: no source to read its names from")
  lazy: dict[str, tuple[str, str]] = {}
  eager: list[str] = []
  for node in ast.parse(source).body:
    if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
      for statement in node.body:
        if not isinstance(statement, ast.ImportFrom):
          raise FaceError(f"{name} line {statement.lineno}: a face's TYPE_CHECKING block holds `from ... import` only")
        module = _absolute(statement, namespace)
        for alias in statement.names:
          lazy[alias.asname or alias.name] = (module, alias.name)
    elif isinstance(node, ast.ImportFrom):
      module = _absolute(node, namespace)
      if module.split(".")[0] == "ckptbench" and module != __name__:
        eager += [alias.asname or alias.name for alias in node.names]
  return lazy, eager


def _absolute(node: Any, namespace: dict[str, Any]) -> str:
  """The module an `ImportFrom` node names, relative imports resolved against the face's package."""
  if not node.level:
    return node.module
  package = namespace["__package__"].rsplit(".", node.level - 1)[0] if node.level > 1 else namespace["__package__"]
  return f"{package}.{node.module}" if node.module else package
