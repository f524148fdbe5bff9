"""Progress over runs: a rich progress bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ckptbench._escape import terminal_text


class RunProgress:
  """Reports each finished run. Silent when `enabled` is False (non-zero processes)."""

  def __init__(self, total: int, *, enabled: bool = True, terminal: bool | None = None):
    self._enabled = enabled
    self._total = total
    self._done = 0
    self._terminal = sys.stdout.isatty() if terminal is None else terminal
    self._bar: Progress | None = None
    if enabled and self._terminal:
      self._bar = Progress(
          TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
          console=Console(), transient=True,
      )  # fmt: skip
      self._task = self._bar.add_task("runs", total=total)
      self._bar.start()

  def started(self, label: str) -> None:
    if self._bar is not None:
      self._bar.update(self._task, description=terminal_text(label)[:60])

  def finished(self, label: str, seconds: float, error: str | None) -> None:
    self._done += 1
    if not self._enabled:
      return
    status = "ok" if error is None else f"FAILED: {error}"
    line = terminal_text(f"[{self._done}/{self._total}] {label}: {status} ({seconds:.2f} s)")
    if self._bar is not None:
      self._bar.advance(self._task)
      if error is not None:
        self._bar.console.print(line, markup=False, highlight=False)
    else:
      print(line, flush=True)

  def note(self, line: str) -> None:
    """A line between runs, e.g. what a look at the data found."""
    if not self._enabled:
      return
    line = terminal_text(line)
    if self._bar is not None:
      self._bar.console.print(line, markup=False, highlight=False)
    else:
      print(line, flush=True)

  def close(self) -> None:
    if self._bar is not None:
      self._bar.stop()
