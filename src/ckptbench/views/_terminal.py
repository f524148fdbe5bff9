"""The console the commands print to, apart from the tables (`plan` and `probe` print without the analysis)."""

from __future__ import annotations

import os
import re
import sys
import textwrap

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ckptbench._escape import terminal_text

# Logs and CI output are read in wide windows; rich would otherwise fold tables at 80 columns.
_WIDTH_WHEN_NOT_A_TERMINAL = 160


def markup_text(value: object) -> str:
  """User text (names, labels, messages) for rich markup: terminal-safe (`terminal_text`), then markup-escaped."""
  return escape(terminal_text(value))


def make_console() -> Console:
  """A stdout console: the terminal's width, or a wide fixed width when piped (unless COLUMNS is set).

  Text is printed as written: no `:name:` emoji codes (suite and benchmark names are the
  user's), and no highlighting where there are no colours to show it (compiling rich's
  highlighter patterns and loading its emoji table cost `plan` about 8 ms).
  """
  width = None if sys.stdout.isatty() or "COLUMNS" in os.environ else _WIDTH_WHEN_NOT_A_TERMINAL
  console = Console(width=width, emoji=False)
  return console if console.color_system else Console(width=width, emoji=False, highlight=False)


# A sentence ends at a full stop followed by a capital ("...2 CPUs. Remedy: ..."); "1.7 of" is no end.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_NARROWEST = 30


def print_sentences(console: Console, prefix: str, text: str) -> None:
  """Prints `text` after the markup `prefix`, each sentence on a line of its own.

  A line breaks between sentences; a sentence wider than the console breaks between
  words (never inside a flag such as --time_budget), its continuation indented
  under the text (by two columns at least), so no sentence is cut where rich would fold it.
  """
  indent = max(Text.from_markup(prefix).cell_len, 2)
  width = max(console.width - indent, _NARROWEST)
  lead = prefix
  for sentence in _SENTENCE_END.split(text.strip()):
    for line in textwrap.wrap(sentence, width, break_long_words=False, break_on_hyphens=False):
      console.print(lead + markup_text(line), highlight=False, soft_wrap=True)
      lead = " " * indent
