"""Resolving `generator:` to a BenchmarksGenerator class.

Accepts a built-in short name (`save_restore`), an import path
(`my.module.MyBenchmark`), or an import path of Orbax's in-tree framework
(mapped to our equivalent built-in).
"""

from __future__ import annotations

import difflib
import importlib
import inspect

from ckptbench.api import BenchmarksGenerator
from ckptbench.config._catalogue import ORBAX_PREFIX, builtin_paths, orbax_aliases


class GeneratorResolutionError(Exception):
  """Carries a message for the loader to locate in the suite file."""


def _closest(name: str, known) -> str:
  """A short hint: the closest few names, or where the whole list is (it is too long for one line)."""
  close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
  if close:
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?"
  return "; docs/builtins.md lists what is supported"


def resolve_generator(name: str) -> tuple[str, type[BenchmarksGenerator]]:
  """Returns (canonical import path, class) for a `generator:` value."""
  path = builtin_paths().get(name) or orbax_aliases().get(name) or name
  if name.startswith(ORBAX_PREFIX) and name not in orbax_aliases():
    raise GeneratorResolutionError(
        f"{name!r} is a generator of Orbax's in-tree framework that ckptbench has no"
        f" equivalent for{_closest(name, orbax_aliases())}"
    )
  module_name, _, attr = path.rpartition(".")
  if not module_name:
    raise GeneratorResolutionError(
        f"{name!r} is neither a built-in nor an import path like 'package.module.Class'{_closest(name, builtin_paths())}"
    )
  try:
    module = importlib.import_module(module_name)
  except ModuleNotFoundError as e:
    raise GeneratorResolutionError(
        f"cannot import module {module_name!r} ({e}); is it installed or on PYTHONPATH?"
    ) from None
  except Exception as e:  # a user's module that fails while importing
    raise GeneratorResolutionError(
        f"importing module {module_name!r} failed: {type(e).__name__}: {e}"
    ) from None
  try:
    obj = getattr(module, attr)
  except AttributeError:
    candidates = [n for n, v in vars(module).items() if inspect.isclass(v)]
    close = difflib.get_close_matches(attr, candidates, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise GeneratorResolutionError(f"module {module_name!r} has no {attr!r}{hint}") from None
  if not inspect.isclass(obj):
    raise GeneratorResolutionError(f"{path!r} is a {type(obj).__name__}, not a class")
  if not issubclass(obj, BenchmarksGenerator):
    raise GeneratorResolutionError(
        f"{path!r} is not a subclass of ckptbench.BenchmarksGenerator"
    )
  if inspect.isabstract(obj):
    raise GeneratorResolutionError(f"{path!r} does not implement test_fn")
  return f"{obj.__module__}.{obj.__qualname__}", obj
