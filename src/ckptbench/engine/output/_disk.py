"""Disk a suite needs for its checkpoints, and refusing one that cannot fit before any data is built.

By default each run's checkpoint is removed once the run is measured and
verified (`free_run_space`, in the background while the runner records the
run, and finished before the next run starts: `Freeing`), so a suite needs room
for its largest single checkpoint; with `keep_checkpoints` every run's checkpoint stays and the suite
needs the sum. The estimate is the synthetic data's bytes per run (one copy:
benchmarks that keep several steps or formats of it in one run need a
multiple, `_sizes.disk_need`); existing checkpoints (`path:`) and object-store roots are not counted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import pathlib
import shutil
import threading
from typing import Any, Sequence

from ckptbench.api import TestResult
from ckptbench.config import Suite
from ckptbench.errors import CkptbenchError
from ckptbench.engine.output._locations import remove_location
from ckptbench.engine._settings import RunSettings
from ckptbench.engine._sizes import DiskNeed, format_bytes
from ckptbench.storage import is_store_url

_log = logging.getLogger(__name__)


def keeps_checkpoints(settings: RunSettings, suite: Suite) -> bool:
  """Whether every run's checkpoint stays in OUT: --keep_checkpoints or the suite's `keep_checkpoints: true`.

  Raises:
    CkptbenchError: when --remove_repeated_dir asks for the opposite.
  """
  keep = settings.keep_checkpoints or suite.config.keep_checkpoints
  if keep and settings.remove_repeated_dir:
    asked = settings.ask("keep_checkpoints") if settings.keep_checkpoints else f"{suite.file}: keep_checkpoints: true"
    raise CkptbenchError(
        f"{settings.ask('remove_repeated_dir')} removes each run's directory but {asked} keeps it; give one"
    )
  return keep


@dataclasses.dataclass(frozen=True)
class RunLeftovers:
  """What one run left on disk, and whether to free it once every host has recorded the run."""

  run_dir: Any  # shared by the processes: process 0 frees it
  local_path: pathlib.Path | None  # this host's --local_directory scratch
  artifacts: tuple[str, ...]  # TestResult.artifacts: kept unless `whole`
  keep: bool
  whole: bool  # --remove_repeated_dir: the run's directory, artifacts included

  @classmethod
  def of(cls, run_dir: Any, local_path: pathlib.Path | None, result: TestResult | None, settings: RunSettings,
         suite: Suite) -> RunLeftovers:  # fmt: skip
    """What a run left, and whether --keep_checkpoints, the suite's key or --remove_repeated_dir keep it."""
    artifacts = result.artifacts if result is not None else ()
    return cls(run_dir, local_path, artifacts, keeps_checkpoints(settings, suite), settings.remove_repeated_dir)

  def free(self, is_writer: bool) -> None:
    """Removes what the run left; a removal that fails (a store refusing deletes) is a warning:
    the run is recorded already, and freeing space never costs the suite its other runs."""
    if self.keep:
      return
    try:
      if is_writer:
        free_run_space(self.run_dir, self.artifacts, self.whole)
      if self.local_path is not None:
        remove_location(self.local_path)
    except Exception as e:  # noqa: BLE001  (any store or filesystem error)
      _log.warning("could not remove the checkpoint of %s: %s: %s", self.run_dir, type(e).__name__, e)


class Freeing:
  """Frees runs' leftovers in a background thread, one run at a time.

  Removing a checkpoint mostly waits for the disk (on ext4 mounted with
  `discard`, about 0.19 s for 128 MiB and no CPU), so it overlaps the runner's
  bookkeeping and, after the last run, the summary and views. `wait` before a
  run starts: no removal overlaps a measured run, and the previous run's
  checkpoint is gone before the next is written. Used as a context manager,
  every removal is done on exit.
  """

  def __init__(self):
    self._thread: threading.Thread | None = None

  def start(self, leftovers: RunLeftovers, is_writer: bool) -> None:
    self.wait()
    if leftovers.keep:
      return
    self._thread = threading.Thread(target=leftovers.free, args=(is_writer,), name="ckptbench-free-run")
    self._thread.start()

  def wait(self) -> None:
    if self._thread is not None:
      self._thread.join()
      self._thread = None

  def __enter__(self) -> Freeing:
    return self

  def __exit__(self, *exc: object) -> None:
    self.wait()


def _existing_parent(path: pathlib.Path) -> pathlib.Path:
  """`path` or its nearest ancestor that exists (OUT may not be created yet)."""
  while not path.exists() and path != path.parent:
    path = path.parent
  return path


def disk_problem(need: DiskNeed, root: str | os.PathLike, settings: RunSettings) -> str | None:
  """Why the checkpoints would not fit on the filesystem of `root`, or None when they fit
  (or `root` is an object store, whose room is not ours to measure)."""
  if is_store_url(str(root)) or need.bytes == 0:
    return None
  where = _existing_parent(pathlib.Path(root).resolve())
  free = shutil.disk_usage(where).free
  if need.bytes <= free:
    return None
  hint = (
      f"drop {settings.ask('keep_checkpoints')} (or the suite's keep_checkpoints: true) to remove each run's"
      " checkpoint after it,"
      if need.keep
      else "use smaller shapes,"
  )
  return (
      f"the checkpoints need {need.describe()} but {where} has {format_bytes(free)} free;"
      f" {hint} choose another output or checkpoint root, or pass {settings.ask('check_disk', False)}"
  )


def free_run_space(run_dir: Any, artifacts: Sequence[str] = (), whole: bool = False) -> None:
  """Removes a run's checkpoint data once it is measured and recorded.

  The files the benchmark listed in `TestResult.artifacts` (names relative to
  the run directory) stay, unless `whole` (--remove_repeated_dir) removes them too.
  """
  if whole or not artifacts or is_store_url(str(run_dir)):
    remove_location(run_dir)
    if not is_store_url(str(run_dir)):
      with contextlib.suppress(OSError):  # the benchmark's directory, once its last run is gone
        pathlib.Path(run_dir).parent.rmdir()
    return
  keep = {pathlib.Path(run_dir, a) for a in artifacts}
  if pathlib.Path(run_dir).is_dir():
    _free_around(pathlib.Path(run_dir), keep)


def _free_around(directory: pathlib.Path, keep: set[pathlib.Path]) -> None:
  """Removes what lies in `directory` except the kept paths (and the directories leading to them)."""
  for entry in directory.iterdir():
    if entry in keep:
      continue
    if any(k.is_relative_to(entry) for k in keep):
      _free_around(entry, keep)
    elif entry.is_dir() and not entry.is_symlink():
      shutil.rmtree(entry, ignore_errors=True)
    else:
      entry.unlink(missing_ok=True)
