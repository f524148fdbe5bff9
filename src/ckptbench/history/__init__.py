"""A history of runs: entries in a directory or bucket (one object each), read back typed,
cut into series per suite, machine, benchmark variant and headline metric, with their change
points and what changed with them; exports (JSON, Markdown, Bencher Metric Format).

Names load on first use: `ckptbench run --history` pays for none of it until the run is over.
"""

from typing import TYPE_CHECKING

from ckptbench._lazy import lazy_face

if TYPE_CHECKING:  # the face, each name once: lazy_face reads it, type checkers and IDEs resolve it
  from ckptbench.history._analysis import Change, Series, analyse, gate, unjudged
  from ckptbench.history._entry import Environment, HistoryEntry, Point, entry_from_outputs
  from ckptbench.history._store import History, HistoryStore
  from ckptbench.history._exports import bencher_metric_format, change_text, history_document, summary_markdown

__getattr__, __dir__ = lazy_face(globals())
