"""The part of clu's `metric_writers` Orbax's `metrics_manager` writes through: scalars, text cards and
HParams into the local TensorBoard run `<logdir>/<collection>` by ckptbench's `TensorBoardWriter` (no
TensorFlow), or, `just_logging` (a process other than the first), into the log."""

from __future__ import annotations

import logging
import os
import pathlib
from typing import Any, Mapping

import ckptbench

_log = logging.getLogger(__name__)
# Not ckptbench's own suffix: `ckptbench report OUT` rewrites its runs and leaves these.
_SUFFIX = ".orbax-metrics"


class _EventWriter:
  """clu's writer methods over one `ckptbench.TensorBoardWriter`."""

  def __init__(self, run_dir: pathlib.Path):
    self._run = ckptbench.TensorBoardWriter(run_dir, suffix=_SUFFIX)
    self._trial = run_dir.name

  def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None:
    self._run.scalars([(tag, float(value)) for tag, value in scalars.items()], step)

  def write_texts(self, step: int, texts: Mapping[str, str]) -> None:
    for tag, text in texts.items():
      self._run.text(tag, text, step)

  def write_hparams(self, hparams: Mapping[str, Any]) -> None:
    self._run.hparams({k: v if isinstance(v, (bool, int, float, str)) else str(v) for k, v in hparams.items()}, self._trial)

  def flush(self) -> None:
    self._run.flush()

  def close(self) -> None:
    self._run.close()


class _LoggingWriter:
  """clu's writer methods that log each value (a process that writes no files)."""

  def write_scalars(self, step: int, scalars: Mapping[str, float]) -> None:
    _log.info("[%d] %s", step, ", ".join(f"{k}={v}" for k, v in scalars.items()))

  def write_texts(self, step: int, texts: Mapping[str, str]) -> None:
    _log.info("[%d] %s", step, ", ".join(f"{k}={v}" for k, v in texts.items()))

  def write_hparams(self, hparams: Mapping[str, Any]) -> None:
    _log.info("hparams: %s", dict(hparams))

  def flush(self) -> None:
    pass

  def close(self) -> None:
    pass


def create_default_writer(logdir: str | os.PathLike, *, just_logging: bool = False,
                          collection: str | None = None) -> _EventWriter | _LoggingWriter:  # fmt: skip
  """A writer into the TensorBoard run `<logdir>/<collection>`; one that only logs with `just_logging`."""
  if just_logging:
    return _LoggingWriter()
  if "://" in os.fspath(logdir):
    raise ValueError(f"TensorBoard runs are written to a local directory, not {os.fspath(logdir)}: copy them there after")
  run_dir = pathlib.Path(os.fspath(logdir))
  return _EventWriter(run_dir / collection if collection else run_dir)
