"""A history of runs: entries in a directory or bucket (one object each), read back typed,
cut into series per suite, machine, benchmark variant and headline metric, with their change
points and what changed with them, each run judged on arrival, the gate, the statistics kept
in the index; exports (JSON, Markdown, Bencher Metric Format, pyperf,
github-action-benchmark).

Names load on first use: `ckptbench run --history` pays for none of it until the run is over.
"""

from typing import TYPE_CHECKING

from ckptbench._lazy import lazy_face

if TYPE_CHECKING:  # the face, each name once: lazy_face reads it, type checkers and IDEs resolve it
  from ckptbench.history._analysis import Arrival, Change, Series, analyse
  from ckptbench.history._gate import gate, unjudged
  from ckptbench.history._cache import AnalysisCache, load_cache, save_cache
  from ckptbench.history._entry import Environment, HistoryEntry, Point, entry_from_outputs
  from ckptbench.history._store import History, HistoryStore
  from ckptbench.history._exports import arrival_text, bencher_metric_format, change_text, failing_text, gate_passed, history_document, summary_markdown
  from ckptbench.history._exports import entry_series, write_entry_github_action_benchmark, write_entry_pyperf

__getattr__, __dir__ = lazy_face(globals())
