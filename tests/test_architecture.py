"""The rules docs/ARCHITECTURE.md states that a reading of the code can check.

- Records are selected by kind only through the selectors `api/_records.py` offers (`timed_runs`,
  `sampled_records`, `measured_records`, `warmup_runs`, `memory_pass_records`): no comprehension or
  loop elsewhere, tests included, filters on `.kind` or `.warmup`. Reading a record's kind to show it
  differently (a sort key, a label) is not a filter and is allowed.
- No module imports another module's private (underscore) names.
- The engine's top level stays small: its concepts are subpackages.
"""

from __future__ import annotations

import ast
import importlib
import pathlib

import grimp

from conftest import REPO

SRC = REPO / "src" / "ckptbench"
OWNER = SRC / "api" / "_records.py"


def _python_files(*roots: pathlib.Path) -> list[pathlib.Path]:
  return sorted(p for root in roots for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _reads_kind(node: ast.AST, over_records: bool) -> bool:
  """Whether `node` reads a record's kind: `x.kind` compared with `RecordKind.*`, or, where the loop runs over
  records (`over_records`), `x.warmup` or `x.memory_pass` (a schedule's or progress line's `warmup` is not a record's)."""
  for sub in ast.walk(node):
    if over_records and isinstance(sub, ast.Attribute) and sub.attr in ("warmup", "memory_pass"):
      return True
    if isinstance(sub, ast.Compare):
      sides = [sub.left, *sub.comparators]
      if any(isinstance(s, ast.Attribute) and s.attr == "kind" for s in sides) and "RecordKind" in ast.unparse(sub):
        return True
  return False


def _kind_filters(source: str, where: str) -> list[str]:
  found = []
  for node in ast.walk(ast.parse(source)):
    conditions: list[ast.AST] = []
    if isinstance(node, ast.comprehension):
      conditions = list(node.ifs)
    elif isinstance(node, ast.For):  # `for r in records: if r.kind ...: continue` filters as well
      conditions = [s.test for s in node.body if isinstance(s, ast.If) and isinstance(s.body[0], ast.Continue)]
      conditions += [node.body[0].test] if len(node.body) == 1 and isinstance(node.body[0], ast.If) else []
    if conditions:
      over_records = any(word in ast.unparse(node.iter) for word in ("record", "results", "outcome"))
      found += [f"{where}:{c.lineno}: {ast.unparse(c)}" for c in conditions if _reads_kind(c, over_records)]
  return sorted(found, key=lambda f: int(f.split(":")[1]))


def test_records_are_selected_by_kind_only_through_the_owners_selectors():
  files = [p for p in _python_files(SRC, REPO / "tests", REPO / "measurements") if p != OWNER]
  filters = [f for p in files for f in _kind_filters(p.read_text(), str(p.relative_to(REPO)))]
  assert not filters, "select with ckptbench.timed_runs/sampled_records/...:\n" + "\n".join(filters)


def test_the_kind_filter_check_sees_a_hand_written_filter():
  planted = ("a = [r for r in rs if r.kind is RecordKind.TIMED]\nb = [r for r in records if not r.warmup]\n"
             "for r in outcome.records:\n  if r.kind is not RecordKind.WARMUP:\n    keep(r)\n"
             "d = [run for run in schedule if not run.warmup]\n"
             "c = sorted(rs, key=lambda r: r.kind is RecordKind.TIMED)\n")  # fmt: skip
  found = [f.split(": ", 1)[1] for f in _kind_filters(planted, "planted.py")]
  assert found == ["r.kind is RecordKind.TIMED", "not r.warmup", "r.kind is not RecordKind.WARMUP"]


def test_no_module_imports_another_modules_private_names():
  imports = []
  for path in _python_files(SRC):
    for node in ast.walk(ast.parse(path.read_text())):
      if isinstance(node, ast.ImportFrom) and node.module != "__future__":
        private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
        # A package's own private module (`from ckptbench.views import _plots`) is a module, not a name.
        package = SRC.parent / (node.module or "").replace(".", "/")
        private = [n for n in private if not ((package / f"{n}.py").exists() or (package / n / "__init__.py").exists())]
        imports += [f"{path.relative_to(REPO)}:{node.lineno}: from {node.module} import {', '.join(private)}"] if private else []
  assert not imports, "\n".join(imports)


def test_the_engine_top_level_is_at_most_24_modules():
  top = [p.name for p in (SRC / "engine").iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()]
  assert len(top) <= 24, sorted(top)


def test_no_subpackage_shadows_a_name_of_its_packages_face():
  """Importing `ckptbench.engine.scale` would set the face's `scale` to the subpackage, not the function."""
  for init in [p for p in SRC.rglob("__init__.py") if "__pycache__" not in p.parts]:
    package = importlib.import_module(".".join(init.parent.relative_to(SRC.parent).parts))
    subpackages = {p.name for p in init.parent.iterdir() if (p / "__init__.py").exists()}
    assert not subpackages & set(getattr(package, "__all__", ())), (package.__name__, subpackages)


def test_no_two_modules_import_each_other_through_modules():
  """No circle of imports between modules (a package's face, which only hands names on, aside): a circle
  means two concepts cannot be read, tested or moved apart."""
  graph = grimp.build_graph("ckptbench", exclude_type_checking_imports=True)
  faces = {m for m in graph.modules if graph.find_children(m)}
  circles = set()
  for module in graph.modules - faces:
    for imported in graph.find_modules_directly_imported_by(module) - faces - {module}:
      chain = graph.find_shortest_chain(importer=imported, imported=module)
      if chain and not faces & set(chain):
        circles.add(" -> ".join((module, *chain)))
  assert not circles, "\n".join(sorted(circles))
