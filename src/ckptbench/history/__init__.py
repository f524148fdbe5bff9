"""A history of runs: entries in a directory or bucket (one object each), read back typed,
cut into series per suite, machine, benchmark variant and headline metric, with their change
points and what changed with them; exports (JSON, Markdown, Bencher Metric Format).

Names load on first use: `ckptbench run --history` pays for none of it until the run is over.
"""

from ckptbench._lazy import lazy_getattr

_EXPORTS = {
    "Change": "ckptbench.history._analysis",
    "Environment": "ckptbench.history._entry",
    "HistoryEntry": "ckptbench.history._entry",
    "HistoryStore": "ckptbench.history._store",
    "Point": "ckptbench.history._entry",
    "Series": "ckptbench.history._analysis",
    "analyse": "ckptbench.history._analysis",
    "bencher_metric_format": "ckptbench.history._exports",
    "change_text": "ckptbench.history._exports",
    "entry_from_outputs": "ckptbench.history._entry",
    "gate": "ckptbench.history._analysis",
    "history_document": "ckptbench.history._exports",
    "summary_markdown": "ckptbench.history._exports",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
