"""Views of a finished run (TensorBoard, the HTML report, ...) behind one small protocol.

A view is a function `write(out_dir)` that reads what a run left in OUT and
writes its own files there; it never changes results.jsonl or summary.json.
`register_view` adds one (as `register_collector` adds a metric collector).
Every path that writes views goes through `write_views`: the run in process,
the detached writer `ckptbench run` starts, and `ckptbench report OUT`. A view
registered by user code (a generator's module, a script) reaches the detached
writer through `view_sources()`: the files that registered views, which the
writer imports before it writes, so their `register_view` calls run there too.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import logging
import pathlib
import sys
from typing import Callable, Iterable, Protocol

_log = logging.getLogger(__name__)


class View(Protocol):
  def __call__(self, out_dir: pathlib.Path) -> object: ...


@dataclasses.dataclass(frozen=True)
class _Registered:
  write: View
  default: bool


_VIEWS: dict[str, _Registered] = {}


def register_view(name: str, write: View, *, default: bool = True) -> None:
  """Adds (or replaces) the view `name`; `default` views are written by every run."""
  _VIEWS[name] = _Registered(write, default)


def default_views() -> tuple[str, ...]:
  return tuple(name for name, view in _VIEWS.items() if view.default)


def view_sources() -> tuple[str, ...]:
  """The source files of views registered outside ckptbench (to import in another process)."""
  files = []
  for view in _VIEWS.values():
    module = sys.modules.get(getattr(view.write, "__module__", "") or "")
    name = getattr(module, "__name__", "")
    if name == "__main__":  # importing a script again would run it again; its views stay in its process
      continue
    source = getattr(module, "__file__", None) or _source_of(view.write)
    if source and not name.startswith("ckptbench.") and source not in files:
      files.append(source)
  return tuple(files)


def _source_of(write: View) -> str | None:
  try:
    return inspect.getsourcefile(write)  # type: ignore[arg-type]
  except TypeError:  # a builtin or C callable: nothing to import
    return None


def import_view_sources(files: Iterable[str]) -> None:
  """Imports each file (as the detached writer does) so the views it registers exist here."""
  for n, file in enumerate(files):
    spec = importlib.util.spec_from_file_location(f"_ckptbench_view_source_{n}", file)
    if spec is None or spec.loader is None:
      _log.warning("could not import views from %s", file)
      continue
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)


def write_views(out_dir: str | pathlib.Path, names: Iterable[str] | None = None) -> dict[str, str]:
  """Writes the named views (default ones when None); returns {name: error} for those that failed.

  A view that fails is logged and skipped: the results it would show are
  already safe on disk.
  """
  failures: dict[str, str] = {}
  for name in default_views() if names is None else names:
    if name not in _VIEWS:
      failures[name] = f"no view named {name!r} (registered: {', '.join(_VIEWS)})"
      _log.warning("could not write the %s view: %s", name, failures[name])
      continue
    try:
      _VIEWS[name].write(pathlib.Path(out_dir))
    except Exception as e:  # noqa: BLE001  (a view never costs the results)
      failures[name] = f"{type(e).__name__}: {e}"
      _log.warning("could not write the %s view: %s", name, failures[name])
  return failures


def _tensorboard(out_dir: pathlib.Path) -> None:
  from ckptbench.views._tensorboard import write_tensorboard  # noqa: PLC0415  (tensorboard loads on use)

  write_tensorboard(out_dir)


def _report(out_dir: pathlib.Path) -> None:
  from ckptbench.views._report import write_report  # noqa: PLC0415  (matplotlib loads on use)

  write_report(out_dir)


register_view("tensorboard", _tensorboard)
register_view("report", _report)
