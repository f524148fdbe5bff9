"""The catalogue of built-ins is read from the built-ins' own declarations, and everything that lists
built-ins derives from it: a new built-in is its module, its example and its test.

What a new built-in needs, and what checks it here:
  - `src/ckptbench/benchmarks/<name>.py`: its generator class declares
    `builtin = ckptbench.Builtin(name=..., measures=..., example=..., saves_with=..., cold_load=...)`
    (test_every_generator_in_a_public_module_is_declared_and_read_back_alike);
  - `examples/<example>.yaml`, sweeping it (tests/test_builtin_examples.py);
  - a test that runs it by name (test_every_builtin_is_run_by_a_test);
  - then `python -m ckptbench.config._catalogue_table --docs` regenerates docs/builtins.md's table
    (test_the_table_of_builtins_is_generated_from_the_catalogue).
Its short names, Orbax's in-tree import path, the storage check and the cold-load test come from
the declaration: nothing else is edited.
"""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
import tomllib
import types

import pytest

import ckptbench
from ckptbench.config import _catalogue, _catalogue_table, catalogue, resolve_generator
from ckptbench.errors import CkptbenchError
from ckptbench.engine.output._locations import check_store_targets
from conftest import REPO

MODULES = sorted(p.stem for p in _catalogue.MODULES.glob("[a-z]*.py"))


def _generators(module_name: str) -> dict[str, type]:
  module = importlib.import_module(f"{_catalogue.PACKAGE}.{module_name}")
  return {
      f"{module.__name__}.{name}": cls for name, cls in vars(module).items()
      if inspect.isclass(cls) and cls.__module__ == module.__name__
      and issubclass(cls, ckptbench.BenchmarksGenerator) and not inspect.isabstract(cls)
  }  # fmt: skip


@pytest.mark.parametrize("module_name", MODULES)
def test_every_generator_in_a_public_module_is_declared_and_read_back_alike(module_name):
  generators = _generators(module_name)
  assert generators, f"benchmarks/{module_name}.py defines no generator: make it private (_{module_name}.py)"
  declared = {path: b for path, b in catalogue().items() if path.rpartition(".")[0].endswith(f".{module_name}")}
  assert set(declared) == set(generators)
  for path, cls in generators.items():
    # Declared on the class itself (a subclass inheriting its base's entry would share its name),
    # and what the catalogue read from the source is what the class holds.
    assert "builtin" in vars(cls), f"{path} declares no `builtin = ckptbench.Builtin(...)`"
    assert cls.builtin == declared[path]


def test_short_names_and_orbax_paths_resolve_to_the_declaring_class():
  for path, builtin in catalogue().items():
    for name in [*builtin.names, *([_catalogue.ORBAX_PREFIX + builtin.orbax_alias] if builtin.orbax_alias else [])]:
      assert resolve_generator(name)[0] == path, name
  assert len(_catalogue.builtin_paths()) == sum(len(b.names) for b in catalogue().values())


def test_every_builtin_is_run_by_a_test():
  """A test file names it as `generator:` (by a short name, or by Orbax's import path)."""
  texts = [p.read_text() for p in (REPO / "tests").rglob("test_*.py")]
  for builtin in catalogue().values():
    by_name = re.compile(r"generator:\s*\{?\s*(" + "|".join(builtin.names) + r")\b")
    named = [t for t in texts if by_name.search(t) or (builtin.orbax_alias and builtin.orbax_alias in t)]
    assert named, f"no test runs the built-in {builtin.name}"


def test_extras_are_the_package_extras():
  extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
  for builtin in catalogue().values():
    assert set(builtin.extras) <= set(extras), builtin.name


def test_the_table_of_builtins_is_generated_from_the_catalogue():
  page = (REPO / _catalogue_table.PAGE).read_text()
  assert page == _catalogue_table.with_builtins_table(page), (
      f"{_catalogue_table.PAGE}'s table of built-ins is out of date; regenerate it with"
      " `python -m ckptbench.config._catalogue_table --docs`"
  )
  assert len(_catalogue_table.builtins_table()) == 2 + len(catalogue())


@pytest.mark.parametrize(
    "path", [p for p, b in catalogue().items() if b.saves_only_with_orbax], ids=lambda p: p.rsplit(".", 1)[-1]
)
def test_a_builtin_saving_only_through_orbax_is_refused_on_a_store_orbax_cannot_write(path):
  suite = types.SimpleNamespace(entries=[types.SimpleNamespace(generator_path=path)], checkpoints=())
  with pytest.raises(CkptbenchError, match=r"orbax-checkpoint cannot write s3://.*another library \(libraries, pytorch, "):
    check_store_targets(suite, "s3://bucket/prefix")


def test_a_declaration_that_cannot_be_read_is_an_error_naming_its_line(tmp_path):
  (tmp_path / "mine.py").write_text(
      "class Mine:\n  builtin = Builtin(name='mine', measures='m (x)', example='e.yaml')  # one line\n"
  )
  assert _catalogue._declared_in(tmp_path / "mine.py") == {
      f"{_catalogue.PACKAGE}.mine.Mine": ckptbench.Builtin(name="mine", measures="m (x)", example="e.yaml")
  }
  (tmp_path / "mine.py").write_text(
      "import ckptbench\n\n\nclass Mine(ckptbench.BenchmarksGenerator):\n"
      "  builtin = ckptbench.Builtin(\n      name=NAME,\n  )\n"
  )
  with pytest.raises(_catalogue.CatalogueError, match=r"^mine\.py:5: the declaration must be Builtin\(\.\.\.\) of literal"):
    _catalogue._declared_in(tmp_path / "mine.py")
  (tmp_path / "mine.py").write_text(
      "class Mine:\n  builtin = Builtin(\n      name='mine', measures='m', example='e.yaml', saves_with=('disk',),\n  )\n"
  )
  with pytest.raises(_catalogue.CatalogueError, match=r"mine\.py:2: .*saves_with names \['disk'\]"):
    _catalogue._declared_in(tmp_path / "mine.py")


@pytest.mark.slow
def test_resolving_a_short_name_imports_only_that_builtin():
  code = (
      "import sys; from ckptbench.config import resolve_generator; resolve_generator('deleter');"
      "print(sorted(m for m in sys.modules if m.startswith('ckptbench.benchmarks.')))"
  )
  done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
  assert done.stdout.split() == ["['ckptbench.benchmarks.deleter']"]
