"""The console the commands print to, apart from the tables (`plan` and `probe` print without the analysis)."""

from __future__ import annotations

import os
import sys

from rich.console import Console

# Logs and CI output are read in wide windows; rich would otherwise fold tables at 80 columns.
_WIDTH_WHEN_NOT_A_TERMINAL = 160


def make_console() -> Console:
  """A stdout console: the terminal's width, or a wide fixed width when piped (unless COLUMNS is set)."""
  if sys.stdout.isatty() or "COLUMNS" in os.environ:
    return Console()
  return Console(width=_WIDTH_WHEN_NOT_A_TERMINAL)
