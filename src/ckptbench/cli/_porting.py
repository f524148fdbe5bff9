"""Porting a generator module from Orbax's framework: its imports point at `ckptbench.compat.orbax`.

Import statements and the dotted paths inside strings (`mock.patch` targets)
are rewritten: to `ckptbench.compat.orbax`, or, for a generator module the
user's own package holds at Orbax's place for it, to that package. Everything
the rewritten module would still need by hand is listed with its line: a
framework module or name the compat package does not provide, a plain `import`
of a framework module (code naming it in full would break), and mentions of
Orbax's framework elsewhere (comments).
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import importlib
import importlib.util
import pathlib
import re
import sys
import types
from typing import Any

from ckptbench.errors import CkptbenchError

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


@dataclasses.dataclass(frozen=True)
class _UserPackage:
  """The package holding a ported file: its root directory mirrors Orbax's benchmarks directory.

  A generator module of the user's at the place Orbax's tree has it
  (`mypkg/v1/resharding_benchmark.py` for `benchmarks/v1/resharding_benchmark.py`)
  is imported from the user's package, where ckptbench.compat.orbax has no such module.
  """

  root: pathlib.Path
  name: str

  @classmethod
  def holding(cls, path: pathlib.Path) -> "_UserPackage | None":
    """The topmost package (directories with `__init__.py`) holding `path`, or None."""
    root, directory = None, path.resolve().parent
    while (directory / "__init__.py").is_file():
      root, directory = directory, directory.parent
    return None if root is None else cls(root, root.name)

  def has(self, relative: str) -> bool:
    """Whether the package holds module `relative` (dotted, below Orbax's prefix; "" is the root)."""
    place = self.root.joinpath(*relative.split(".")) if relative else self.root
    return place.with_suffix(".py").is_file() or (place / "__init__.py").is_file()

  def holds_names(self, relative: str, names: list[str]) -> bool:
    """Whether `from <module relative> import names` finds them here: its modules, or a module's names."""
    if relative and self.root.joinpath(*relative.split(".")).with_suffix(".py").is_file():
      return True  # names of a module of the user's: not checked (that would run its code)
    return all(self.has(_join(relative, name)) for name in names)


def _relative(dotted: str) -> str:
  """`dotted` below Orbax's prefix ("" for the prefix itself)."""
  return dotted[len(ORBAX_PREFIX) :].lstrip(".")


def _join(*parts: str) -> str:
  return ".".join(p for p in parts if p)


def _framework_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
  found: list[ast.Import | ast.ImportFrom] = []
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.level == 0 and _PREFIX_RE.match(node.module or ""):
      found.append(node)
    elif isinstance(node, ast.Import) and any(_PREFIX_RE.match(a.name) for a in node.names):
      found.append(node)
  return sorted(found, key=lambda n: n.lineno)


def _import_target(node: ast.Import | ast.ImportFrom, user: _UserPackage | None, bound: dict[str, object]) -> tuple[str, list[str]]:
  """The prefix an import statement gets (compat's or the user package's) and its problems; fills `bound`."""
  if isinstance(node, ast.ImportFrom):
    relative = _relative(node.module or "")
    target = _join(COMPAT_PREFIX, relative)
    module = _compat_module(target)
    missing = []
    for alias in node.names:
      value = getattr(module, alias.name, None) if module is not None else None
      if value is None and module is not None:
        value = _compat_module(f"{target}.{alias.name}")
      if value is None:
        missing.append(alias.name)
      elif isinstance(value, types.ModuleType):
        bound[alias.asname or alias.name] = value
    if not missing:
      return COMPAT_PREFIX, []
    if user is not None and len(missing) == len(node.names) and user.holds_names(relative, missing):
      return user.name, []
    if module is None:
      return COMPAT_PREFIX, [f"line {node.lineno}: {target} does not exist: {ORBAX_PREFIX}{node.module[len(ORBAX_PREFIX):]} has no equivalent"]
    return COMPAT_PREFIX, [f"line {node.lineno}: {target} has no {name!r}" for name in missing]
  problems = []
  prefix = COMPAT_PREFIX
  for alias in node.names:
    if not _PREFIX_RE.match(alias.name):
      continue
    target = _PREFIX_RE.sub(COMPAT_PREFIX, alias.name, count=1)
    module = _compat_module(target)
    if module is None and user is not None and user.has(_relative(alias.name)):
      prefix = user.name
    elif module is None:
      problems.append(f"line {node.lineno}: {target} does not exist")
    elif alias.asname:
      bound[alias.asname] = module
    if not alias.asname:
      problems.append(f"line {node.lineno}: 'import {alias.name}' without 'as': code naming it in full needs the new name")
  return prefix, problems


def _is_framework_module(relative: str) -> bool:
  """Whether a module below Orbax's prefix is its framework's (`core.*`, or one this package mirrors),
  not one of Orbax's own generator modules."""
  return relative.startswith("core.") or _compat_module(_join(COMPAT_PREFIX, relative)) is not None


def _imported_modules(node: ast.Import | ast.ImportFrom) -> set[str]:
  """The framework modules (below Orbax's prefix) an import statement may name: its module and each name as one."""
  if isinstance(node, ast.Import):
    return {_relative(a.name) for a in node.names if _PREFIX_RE.match(a.name)}
  relative = _relative(node.module or "")
  return {relative} | {_join(relative, a.name) for a in node.names}


def _missing_attributes(tree: ast.Module, bound: dict[str, object]) -> list[str]:
  """`alias.name` uses where the compat module bound to `alias` has no `name`."""
  problems = []
  for node in ast.walk(tree):
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
      module = bound[node.value.id]
      if not hasattr(module, node.attr):
        problems.append(f"line {node.lineno}: {module.__name__} has no {node.attr!r} (used as {node.value.id}.{node.attr})")
  return problems


def _orbax_framework_dir() -> pathlib.Path | None:
  """Where the installed Orbax keeps its benchmark framework's sources (found without importing Orbax)."""
  try:
    spec = importlib.util.find_spec("orbax")
  except (ImportError, ValueError):
    return None
  for root in (spec.submodule_search_locations or ()) if spec else ():
    found = pathlib.Path(root, *ORBAX_PREFIX.split(".")[1:])
    if found.is_dir():
      return found
  return None


@functools.cache
def _class_surfaces(source_file: pathlib.Path) -> dict[str, frozenset[str]]:
  """Each top-level class of a module's source -> its attribute names: methods, class-level
  fields, and what its methods assign to `self.<name>`."""
  try:
    tree = ast.parse(source_file.read_text(encoding="utf-8"))
  except (OSError, SyntaxError, UnicodeDecodeError):
    return {}
  surfaces = {}
  for node in tree.body:
    if not isinstance(node, ast.ClassDef):
      continue
    names = set()
    for item in node.body:
      if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
        names.add(item.name)
      elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
        names.add(item.target.id)
      elif isinstance(item, ast.Assign):
        names.update(t.id for t in item.targets if isinstance(t, ast.Name))
    for sub in ast.walk(node):
      if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
        names.add(sub.attr)
    surfaces[node.name] = frozenset(n for n in names if not n.startswith("__"))
  return surfaces


def _provides(compat_class: Any, attribute: str) -> bool:
  if hasattr(compat_class, attribute) or attribute in getattr(compat_class, "__dataclass_fields__", {}):
    return True
  source = getattr(sys.modules.get(compat_class.__module__), "__file__", None)
  return source is not None and attribute in _class_surfaces(pathlib.Path(source)).get(compat_class.__name__, ())


def _missing_framework_attributes(tree: ast.Module, framework_modules: set[str]) -> list[str]:
  """`.name` uses where `name` is an attribute of a class of Orbax's framework (of a module the file
  imports) that the compat class of the same name lacks. By name: the object's type is not known."""
  orbax_dir = _orbax_framework_dir()
  if orbax_dir is None:
    return []
  owners: dict[str, list[tuple[str, str]]] = {}
  for relative in sorted(framework_modules):
    for cls, names in _class_surfaces(orbax_dir.joinpath(*relative.split(".")).with_suffix(".py")).items():
      for name in names:
        owners.setdefault(name, []).append((relative, cls))
  problems = []
  for node in ast.walk(tree):
    if not isinstance(node, ast.Attribute) or node.attr not in owners:
      continue
    lacking = []
    for relative, cls in owners[node.attr]:
      compat_class = getattr(_compat_module(_join(COMPAT_PREFIX, relative)), cls, None)
      if compat_class is None or not _provides(compat_class, node.attr):
        lacking.append(f"{_join(COMPAT_PREFIX, relative)}.{cls}")
    if len(lacking) == len(owners[node.attr]):
      problems.append(f"line {node.lineno}: .{node.attr} is Orbax's {owners[node.attr][0][1]}.{node.attr}, which {lacking[0]} lacks")
  return problems


_DOTTED_RE = re.compile(re.escape(ORBAX_PREFIX) + r"((?:\.\w+)*)")


def _string_target(relative: str, user: _UserPackage | None) -> tuple[str, str | None]:
  """The prefix a dotted path inside a string gets, and what is wrong with it (None when it resolves).

  The path may go on past a module into its attributes (a `mock.patch` target).
  """
  parts = relative.split(".") if relative else []
  for cut in range(len(parts), -1, -1):
    module_path, attributes = ".".join(parts[:cut]), parts[cut:]
    module = _compat_module(_join(COMPAT_PREFIX, module_path))
    if module is not None:
      value = module
      for i, attribute in enumerate(attributes):
        if not hasattr(value, attribute):
          where = _join(COMPAT_PREFIX, module_path, *attributes[:i])
          return COMPAT_PREFIX, f"{where} has no {attribute!r}"
        value = getattr(value, attribute)
      return COMPAT_PREFIX, None
    if user is not None and cut and user.has(module_path):
      return user.name, None
  return COMPAT_PREFIX, f"{_join(COMPAT_PREFIX, relative)} does not exist"


def _rewrite_strings(tree: ast.Module, lines: list[str], user: _UserPackage | None) -> tuple[list[int], list[str]]:
  """Rewrites the framework's dotted paths inside string literals (mock.patch targets, generator names)."""
  rewritten, problems = set(), []
  for node in ast.walk(tree):
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and ORBAX_PREFIX in node.value):
      continue
    for number in range(node.lineno, (node.end_lineno or node.lineno) + 1):

      def replace(match: re.Match[str], number: int = number) -> str:
        prefix, problem = _string_target(match.group(1).lstrip("."), user)
        if problem:
          problems.append(f"line {number}: a string names {match.group(0)}: {problem}")
        return prefix + match.group(1)

      new = _DOTTED_RE.sub(replace, lines[number - 1])
      if new != lines[number - 1]:
        lines[number - 1] = new
        rewritten.add(number)
  return sorted(rewritten), problems


def port_source(text: str, path: pathlib.Path | str = "<module>") -> PortResult:
  """Ports a module's source text (see `port_file`).

  Raises:
    CkptbenchError: when the text is not valid Python.
  """
  try:
    tree = ast.parse(text, filename=str(path))
  except SyntaxError as e:
    raise CkptbenchError(f"{path}:{e.lineno}: not valid Python: {e.msg}") from None
  user = _UserPackage.holding(pathlib.Path(path))
  lines = text.splitlines(keepends=True)
  rewritten: list[int] = []
  bound: dict[str, object] = {}
  problems: list[str] = []
  framework_modules: set[str] = set()
  for node in _framework_imports(tree):
    prefix, found = _import_target(node, user, bound)
    problems += found
    if prefix == COMPAT_PREFIX:
      framework_modules.update(m for m in _imported_modules(node) if _is_framework_module(m))
    for i in range(node.lineno - 1, node.end_lineno or node.lineno):
      new = _PREFIX_RE.sub(prefix, lines[i])
      if new != lines[i]:
        lines[i] = new
        rewritten.append(i + 1)
  in_strings, found = _rewrite_strings(tree, lines, user)
  rewritten = sorted(set(rewritten) | set(in_strings))
  problems += found
  problems += _missing_attributes(tree, bound)
  problems += _missing_framework_attributes(tree, framework_modules)
  for number, line in enumerate(lines, start=1):
    if _PREFIX_RE.search(line):
      problems.append(f"line {number}: names {ORBAX_PREFIX} outside an import statement or a string: {line.strip()[:100]}")
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
