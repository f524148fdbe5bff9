"""The public API is what ckptbench.__all__ lists, and every name exists."""

import ckptbench


def test_every_public_name_exists_and_is_sorted():
  assert ckptbench.__all__ == sorted(ckptbench.__all__)
  for name in ckptbench.__all__:
    assert hasattr(ckptbench, name), name


def test_benchmark_options_decorator_misuse_is_a_clear_type_error():
  import dataclasses

  import pytest

  with pytest.raises(TypeError, match="expects a subclass of ckptbench.BenchmarkOptions"):
    ckptbench.benchmark_options(int)

  @dataclasses.dataclass(frozen=True)
  class Opts(ckptbench.BenchmarkOptions):
    x: int = 1

  with pytest.raises(TypeError, match="must decorate a subclass of ckptbench.BenchmarksGenerator"):
    ckptbench.benchmark_options(Opts)(object)

  class NotDataclass(ckptbench.BenchmarkOptions):
    pass

  # A subclass without its own @dataclass still is a dataclass through its base: accepted.
  assert ckptbench.benchmark_options(NotDataclass)


FACES = ["ckptbench", "ckptbench.analysis", "ckptbench.api", "ckptbench.distributed", "ckptbench.engine",
         "ckptbench.history", "ckptbench.results", "ckptbench.stats", "ckptbench.views"]  # fmt: skip


def test_each_face_writes_its_names_once_and_every_one_resolves():
  import ast
  import importlib
  import pathlib

  for name in FACES:
    face = importlib.import_module(name)
    tree = ast.parse(pathlib.Path(face.__file__).read_text())
    assigned = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Name)}  # fmt: skip
    assert "__all__" not in assigned, f"{name}: __all__ is derived from the TYPE_CHECKING block, never written"
    listed = [alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
              for alias in node.names if node.module not in ("typing", "ckptbench._lazy")]  # fmt: skip
    assert len(listed) == len(set(listed)), f"{name} names one twice"
    assert face.__all__ == sorted(set(listed)) == sorted(dir(face)), name
    for public in face.__all__:
      assert getattr(face, public) is not None, f"{name}.{public}"


def test_the_public_face_offers_other_faces_names_only():
  import ast
  import pathlib

  tree = ast.parse(pathlib.Path(ckptbench.__file__).read_text())
  modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} - {"typing"}
  assert all(not part.startswith("_") for m in modules - {"ckptbench._lazy", "ckptbench._version"}
             for part in m.split(".")), sorted(modules)  # fmt: skip


def test_ckptbench_run_is_the_function_and_the_engine_a_package_of_its_own():
  import inspect

  import ckptbench.engine

  assert inspect.isfunction(ckptbench.run) and ckptbench.run is ckptbench.engine.run
  assert "engine" not in ckptbench.__all__
