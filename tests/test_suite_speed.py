"""The test suite stays fast to run in part: a test that starts a Python process or a server is marked
`slow`, so `pytest -m 'not slow'` runs in-process tests only (`make test` and CI run everything).

A short system tool (git, bash -n, fincore) is not a process in this sense; `ckptbench` on the
command line, `sys.executable`, a detached views writer and the object-store emulators are (each
imports JAX or starts a server: seconds).
"""

from __future__ import annotations

import ast
import pathlib

TESTS = pathlib.Path(__file__).resolve().parent
# What starts a Python process or a server, in a test, a helper of its module, or a fixture it takes:
# calls of these, `sys.executable`, and these fixtures.
PROCESS_CALLS = {"run_cli", "run_cli_in_terminal", "run_cli_forked", "cli", "wait_for_views"}
SERVER_FIXTURES = {"gcs_store", "s3_store"}
_HELPER_DEPTH = 3


def _starts_a_process(node: ast.FunctionDef) -> bool:
  for n in ast.walk(node):
    if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) in PROCESS_CALLS:
      return True
    if isinstance(n, ast.Attribute) and n.attr == "executable" and getattr(n.value, "id", "") == "sys":
      return True
    if isinstance(n, ast.Constant) and n.value in SERVER_FIXTURES:  # request.getfixturevalue("s3_store")
      return True
  return bool({a.arg for a in node.args.args} & SERVER_FIXTURES)


def _is_slow(decorators: list[ast.expr], source: str) -> bool:
  return any("mark.slow" in ast.get_source_segment(source, d) for d in decorators)


def unmarked_process_tests(root: pathlib.Path = TESTS) -> list[str]:
  """`file::test` of every test that starts a Python process or a server and is not marked slow."""
  found = []
  for path in sorted(root.rglob("test_*.py")):
    source = path.read_text()
    tree = ast.parse(source)
    module_slow = any(
        isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
        and "mark.slow" in ast.get_source_segment(source, n.value)
        for n in tree.body
    )  # fmt: skip
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}

    def reaches(node: ast.FunctionDef, depth: int, seen: set[str]) -> bool:
      """Whether the node, or a function of the module it uses or takes as a fixture, starts a process."""
      if _starts_a_process(node):
        return True
      used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {a.arg for a in node.args.args}
      for name in sorted(used & set(functions) - seen):
        seen.add(name)
        if depth < _HELPER_DEPTH and reaches(functions[name], depth + 1, seen):
          return True
      return False

    for name, node in functions.items():
      if not name.startswith("test_") or module_slow or _is_slow(node.decorator_list, source):
        continue
      if reaches(node, 0, {name}):
        found.append(f"{path.relative_to(root)}::{name}")
  return found


def test_every_test_that_starts_a_process_is_marked_slow():
  found = unmarked_process_tests()
  assert not found, "mark these @pytest.mark.slow (they start a Python process or a server): " + ", ".join(found)


def test_the_check_sees_a_process_started_by_a_helper_or_a_fixture(tmp_path):
  (tmp_path / "test_m.py").write_text(
      "import subprocess, sys\nimport pytest\n\n"
      "def _helper():\n  return subprocess.run([sys.executable, '-c', 'pass'])\n\n"
      "def test_via_helper():\n  _helper()\n\n"
      "def test_via_fixture(s3_store):\n  pass\n\n"
      "def test_in_process():\n  subprocess.run(['git', 'init'])\n\n"
      "@pytest.mark.slow\ndef test_marked(cli):\n  cli('--version')\n"
  )
  assert unmarked_process_tests(tmp_path) == ["test_m.py::test_via_helper", "test_m.py::test_via_fixture"]
