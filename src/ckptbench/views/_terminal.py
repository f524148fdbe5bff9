"""The console the commands print to, apart from the tables (`plan` and `probe` print without the analysis)."""

from __future__ import annotations

import os
import sys

from rich.console import Console

# Logs and CI output are read in wide windows; rich would otherwise fold tables at 80 columns.
_WIDTH_WHEN_NOT_A_TERMINAL = 160


def make_console() -> Console:
  """A stdout console: the terminal's width, or a wide fixed width when piped (unless COLUMNS is set).

  Text is printed as written: no `:name:` emoji codes (suite and benchmark names are the
  user's), and no highlighting where there are no colours to show it (compiling rich's
  highlighter patterns and loading its emoji table cost `plan` about 8 ms).
  """
  width = None if sys.stdout.isatty() or "COLUMNS" in os.environ else _WIDTH_WHEN_NOT_A_TERMINAL
  console = Console(width=width, emoji=False)
  return console if console.color_system else Console(width=width, emoji=False, highlight=False)
