"""The catalogue of built-in benchmarks, read from their declarations (nothing is imported here).

Every generator class in a public module of `ckptbench/benchmarks/` declares itself with a
class attribute `builtin = ckptbench.Builtin(...)` (api/_builtin.py) whose arguments are
literals. This module reads those declarations from the modules' source text, so resolving a
short name costs no import of JAX or Orbax, and a new built-in is its module (plus its example
and test): the short names, Orbax's in-tree import paths, the storage check, docs/builtins.md's
table (`python -m ckptbench.config._catalogue_table --docs` rewrites it) and the tests of examples
and cold loads all derive from here.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import re
import textwrap

from ckptbench.api import Builtin

PACKAGE = "ckptbench.benchmarks"
MODULES = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
ORBAX_PREFIX = "orbax.checkpoint._src.testing.benchmarks."

_CLASS = re.compile(r"class (\w+)")
_DECLARATION = re.compile(r"^  builtin = (?:ckptbench\.)?Builtin\(", re.M)  # at class-body indent
_MAX_LINES = 40


class CatalogueError(Exception):
  """A built-in module whose declaration cannot be read (a defect of ckptbench itself)."""


@functools.cache
def catalogue() -> dict[str, Builtin]:
  """Every built-in: its class's import path -> its declaration, in module order."""
  found: dict[str, Builtin] = {}
  for module in sorted(MODULES.glob("[a-z]*.py")):
    found.update(_declared_in(module))
  names: dict[str, str] = {}
  for path, builtin in found.items():
    for name in builtin.names:
      if name in names:
        raise CatalogueError(f"built-in name {name!r} is declared by both {names[name]} and {path}")
      names[name] = path
  return found


def _declared_in(module: pathlib.Path) -> dict[str, Builtin]:
  text = module.read_text()
  found = {}
  for declaration in _DECLARATION.finditer(text):
    line = text.count("\n", 0, declaration.start()) + 1
    owner = _CLASS.match(text, text.rfind("\nclass ", 0, declaration.start()) + 1)
    if owner is None:
      raise CatalogueError(f"{module.name}:{line}: a `builtin = Builtin(...)` outside a class")
    where = f"{module.name}:{line}"
    try:
      call = _statement(text[declaration.start():].splitlines()).value
      fields = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
      if call.args or None in fields:
        raise ValueError("only keyword arguments")
      found[f"{PACKAGE}.{module.stem}.{owner.group(1)}"] = Builtin(**fields)
    except (SyntaxError, ValueError, TypeError) as e:
      raise CatalogueError(f"{where}: the declaration must be Builtin(...) of literal keywords: {e}") from None
  return found


def _statement(lines: list[str]) -> ast.Assign:
  """The first statement of `lines`: the shortest head of them that parses (its last line has a `)`)."""
  for end in range(1, min(len(lines), _MAX_LINES) + 1):
    if ")" not in lines[end - 1]:
      continue
    try:
      return ast.parse(textwrap.dedent("\n".join(lines[:end]))).body[0]
    except SyntaxError:
      continue
  raise SyntaxError(f"no complete statement in {_MAX_LINES} lines")


@functools.cache
def builtin_paths() -> dict[str, str]:
  """Every short name a suite may give as `generator:` -> the class's import path."""
  return {name: path for path, builtin in catalogue().items() for name in builtin.names}


@functools.cache
def orbax_aliases() -> dict[str, str]:
  """The import paths of Orbax's in-tree generators -> the built-in standing in for each."""
  return {ORBAX_PREFIX + b.orbax_alias: path for path, b in catalogue().items() if b.orbax_alias}
