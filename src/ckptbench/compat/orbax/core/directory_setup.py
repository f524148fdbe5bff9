"""Orbax's `core.directory_setup`: a clean directory, for code that builds its own (ckptbench's runner
prepares every run's `context.path`)."""

from __future__ import annotations

import logging

from etils import epath

from ckptbench.compat.orbax.core import multihost

_log = logging.getLogger(__name__)


def setup_test_directory(name: str, base_path: str | None = None, repeat_index: int | None = None) -> epath.Path:
  """`<base_path>/<name>[/repeat_<i>]` (base /tmp/orbax_benchmarks by default), created by process 0,
  emptied first when local."""
  base = "/tmp/orbax_benchmarks" if base_path is None else str(base_path)
  path = epath.Path(base) / name
  if repeat_index is not None:
    path = path / f"repeat_{repeat_index}"
  if multihost.get_process_index() == 0:
    if path.exists() and not base.startswith(("gs://", "s3://")):
      _log.warning("test directory %s exists; deleting it", path)
      path.rmtree()
    path.mkdir(parents=True, exist_ok=True)
  return path
