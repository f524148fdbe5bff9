"""Porting a generator module from Orbax's framework: its imports point at `ckptbench.compat.orbax`.

Only import statements are rewritten. Everything the rewritten module would
still need by hand is listed with its line: a framework module or name this
package does not provide, a plain `import` of a framework module (code naming
it in full would break), and mentions of Orbax's framework outside imports.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import importlib
import pathlib
import re

from ckptbench import CkptbenchError

ORBAX_PREFIX = "orbax.checkpoint._src.testing.benchmarks"
COMPAT_PREFIX = "ckptbench.compat.orbax"
_PREFIX_RE = re.compile(re.escape(ORBAX_PREFIX) + r"\b")


@dataclasses.dataclass(frozen=True)
class PortResult:
  """One module's port.

  Attributes:
    path: the module's file.
    original: its text before.
    ported: its text with the framework imports rewritten.
    rewritten: the line numbers (1-based) of the rewritten import statements.
    needs_hand: what the port could not do, one "line N: ..." per item.
  """

  path: pathlib.Path
  original: str
  ported: str
  rewritten: tuple[int, ...]
  needs_hand: tuple[str, ...]

  @property
  def changed(self) -> bool:
    return self.ported != self.original

  def diff(self) -> str:
    """The change as a unified diff."""
    name = str(self.path)
    return "".join(
        difflib.unified_diff(
            self.original.splitlines(keepends=True), self.ported.splitlines(keepends=True), name, name
        )
    )


def _compat_module(name: str) -> object | None:
  try:
    return importlib.import_module(name)
  except ModuleNotFoundError:
    return None


def _framework_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
  found: list[ast.Import | ast.ImportFrom] = []
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.level == 0 and _PREFIX_RE.match(node.module or ""):
      found.append(node)
    elif isinstance(node, ast.Import) and any(_PREFIX_RE.match(a.name) for a in node.names):
      found.append(node)
  return sorted(found, key=lambda n: n.lineno)


def _check_import(node: ast.Import | ast.ImportFrom, bound: dict[str, object]) -> list[str]:
  """Problems of one framework import once rewritten; fills `bound` (local name -> compat module)."""
  problems = []
  if isinstance(node, ast.ImportFrom):
    target = _PREFIX_RE.sub(COMPAT_PREFIX, node.module or "", count=1)
    module = _compat_module(target)
    if module is None:
      return [f"line {node.lineno}: {target} does not exist: {ORBAX_PREFIX}{node.module[len(ORBAX_PREFIX):]} has no equivalent"]
    for alias in node.names:
      sub = _compat_module(f"{target}.{alias.name}") if not hasattr(module, alias.name) else None
      value = sub if sub is not None else getattr(module, alias.name, None)
      if value is None:
        problems.append(f"line {node.lineno}: {target} has no {alias.name!r}")
      elif isinstance(value, type(module)):
        bound[alias.asname or alias.name] = value
    return problems
  for alias in node.names:
    if not _PREFIX_RE.match(alias.name):
      continue
    target = _PREFIX_RE.sub(COMPAT_PREFIX, alias.name, count=1)
    module = _compat_module(target)
    if module is None:
      problems.append(f"line {node.lineno}: {target} does not exist")
    elif alias.asname:
      bound[alias.asname] = module
    else:
      problems.append(f"line {node.lineno}: 'import {alias.name}' without 'as': code naming it in full needs the new name")
  return problems


def _missing_attributes(tree: ast.Module, bound: dict[str, object]) -> list[str]:
  """`alias.name` uses where the compat module bound to `alias` has no `name`."""
  problems = []
  for node in ast.walk(tree):
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
      module = bound[node.value.id]
      if not hasattr(module, node.attr):
        problems.append(f"line {node.lineno}: {module.__name__} has no {node.attr!r} (used as {node.value.id}.{node.attr})")
  return problems


def port_source(text: str, path: pathlib.Path | str = "<module>") -> PortResult:
  """Ports a module's source text (see `port_file`).

  Raises:
    CkptbenchError: when the text is not valid Python.
  """
  try:
    tree = ast.parse(text, filename=str(path))
  except SyntaxError as e:
    raise CkptbenchError(f"{path}:{e.lineno}: not valid Python: {e.msg}") from None
  lines = text.splitlines(keepends=True)
  rewritten: list[int] = []
  bound: dict[str, object] = {}
  problems: list[str] = []
  for node in _framework_imports(tree):
    problems += _check_import(node, bound)
    for i in range(node.lineno - 1, node.end_lineno or node.lineno):
      new = _PREFIX_RE.sub(COMPAT_PREFIX, lines[i])
      if new != lines[i]:
        lines[i] = new
        rewritten.append(i + 1)
  problems += _missing_attributes(tree, bound)
  for number, line in enumerate(lines, start=1):
    if _PREFIX_RE.search(line):
      problems.append(f"line {number}: names {ORBAX_PREFIX} outside an import statement: {line.strip()[:100]}")
  problems.sort(key=lambda p: int(p.split(":")[0].removeprefix("line ")))
  return PortResult(pathlib.Path(path), text, "".join(lines), tuple(rewritten), tuple(problems))


def port_file(path: str | pathlib.Path, *, write: bool = False) -> PortResult:
  """Rewrites a generator module's imports of Orbax's framework to `ckptbench.compat.orbax`.

  Args:
    path: the module's file.
    write: write the ported text back (otherwise a dry run).

  Returns:
    The port: the change (`diff()`) and what still needs a hand (`needs_hand`).

  Raises:
    CkptbenchError: when the file cannot be read or is not valid Python.

  Example:
    >>> result = port_file("my_benchmark.py", write=True)
    >>> result.rewritten, result.needs_hand
    ((20, 21), ())
  """
  path = pathlib.Path(path)
  try:
    text = path.read_text(encoding="utf-8")
  except (OSError, UnicodeDecodeError) as e:
    raise CkptbenchError(f"cannot read {path}: {e}") from None
  result = port_source(text, path)
  if write and result.changed:
    path.write_text(result.ported, encoding="utf-8")
  return result
