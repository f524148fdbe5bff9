"""Orbax's `core.metric` on ckptbench: `Metrics` and the default metric keys.

The metric keys are ckptbench's collectors, which carry Orbax's names (`time`,
`rss`, `jax_monitoring`, `device_memory`, `tensorstore`, `tracemalloc`); the
tags they record are ckptbench's (`<op>_<namespace>/<metric>`, docs/metrics.md).
"""

from __future__ import annotations

import logging

import ckptbench

_log = logging.getLogger(__name__)


class Metrics(ckptbench.Metrics):
  """`ckptbench.Metrics` that also takes Orbax's `name` and has its `report()`."""

  def __init__(self, name: str = ""):
    super().__init__()
    self.name = name

  def report(self) -> None:
    """Logs every tag recorded so far, one per line."""
    lines = [f"--- {self.name} metrics ---"]
    for tag, entry in sorted(self.to_dict().items()):
      lines.append(f"{tag}: {entry.value:.4f} {entry.unit}")
    _log.info("\n".join(lines))


def default_metrics() -> list[str]:
  """The metric keys measured when `measure()` is given none (a new list each call)."""
  return list(ckptbench.default_collectors())
