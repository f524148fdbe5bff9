"""The code stays readable: no function in src/ckptbench over 60 lines (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import ast
import pathlib

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "ckptbench"
MAX_LINES = 60


def long_functions(root: pathlib.Path = SRC, limit: int = MAX_LINES) -> list[tuple[str, int]]:
  """`(path:line name, lines)` of every function or method longer than `limit` lines, docstring included."""
  found = []
  for path in sorted(root.rglob("*.py")):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        lines = node.end_lineno - node.lineno + 1
        if lines > limit:
          found.append((f"{path.relative_to(root.parent)}:{node.lineno} {node.name}", lines))
  return found


def test_no_function_is_over_60_lines():
  found = long_functions()
  assert not found, "split these: " + ", ".join(f"{where} ({n} lines)" for where, n in found)


def test_the_check_sees_a_long_function(tmp_path):
  body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
  (tmp_path / "m.py").write_text(f"def short():\n  return 1\n\n\nclass C:\n  def long(self):\n{body}")
  assert long_functions(tmp_path) == [(f"{tmp_path.name}/m.py:6 long", MAX_LINES + 1)]
