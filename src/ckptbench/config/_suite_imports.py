"""Modules beside a suite (or in the current directory) import by name, and never shadow an installed one.

A suite names its generators by import path (`generator: my_benchmarks.SaveBenchmark`), and the
module may sit beside the suite file. Putting that folder on sys.path, even at its end, would let
an `orbax.py` or `yaml.py` there replace the library a run measures: a plain module anywhere on
the path beats a namespace package (PEP 420), and `orbax` is one. So the folders are searched by a
finder placed after every other (`sys.meta_path`'s end): it answers only for top-level names that
nothing installed provides.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import pathlib
import sys


class _SuiteFolders(importlib.abc.MetaPathFinder):
  """Finds top-level modules in the folders of the suites loaded, after every installed one."""

  def __init__(self) -> None:
    self.folders: list[str] = []

  def find_spec(self, fullname, path, target=None):
    if path is not None:  # a submodule: its package's own __path__ finds it
      return None
    return importlib.machinery.PathFinder.find_spec(fullname, self.folders)


_FINDER = _SuiteFolders()


def importable_beside(*folders: pathlib.Path) -> None:
  """Lets `generator:` import paths name modules in `folders` (the suite's, the current directory)."""
  for folder in map(str, folders):
    if folder not in _FINDER.folders:
      _FINDER.folders.append(folder)
  if _FINDER not in sys.meta_path:
    sys.meta_path.append(_FINDER)
