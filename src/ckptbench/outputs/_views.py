"""Views of a finished run (TensorBoard, the HTML report, ...) behind one small protocol.

A view is a function `write(out_dir)` that reads what a run left in OUT and
writes its own files there; it never changes results.jsonl or summary.json.
`register_view` adds one (as `register_collector` adds a metric collector);
the run writes the default views after its results and baseline comparison
are on disk, and `ckptbench report OUT` writes them again later.
"""

from __future__ import annotations

import dataclasses
import logging
import pathlib
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


def known_views() -> tuple[str, ...]:
  return tuple(_VIEWS)


def write_views(out_dir: str | pathlib.Path, names: Iterable[str] | None = None) -> dict[str, str]:
  """Writes the named views (default ones when None); returns {name: error} for those that failed.

  A view that fails is logged and skipped: the results it would show are
  already safe on disk.
  """
  failures: dict[str, str] = {}
  for name in default_views() if names is None else names:
    try:
      _VIEWS[name].write(pathlib.Path(out_dir))
    except Exception as e:  # noqa: BLE001  (a view never costs the results)
      failures[name] = f"{type(e).__name__}: {e}"
      _log.warning("could not write the %s view: %s", name, failures[name])
  return failures


def _tensorboard(out_dir: pathlib.Path) -> None:
  from ckptbench.outputs._tensorboard import write_tensorboard  # noqa: PLC0415  (tensorboard loads on use)

  write_tensorboard(out_dir)


def _report(out_dir: pathlib.Path) -> None:
  from ckptbench.outputs._report import write_report  # noqa: PLC0415  (matplotlib loads on use)

  write_report(out_dir)


register_view("tensorboard", _tensorboard)
register_view("report", _report)
