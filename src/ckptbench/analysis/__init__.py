"""What the results mean: verdicts, baselines, comparisons with a baseline, goodput plans.

Names load lazily: the report's libraries (plotly, tensorboard, pandas) cost only when used.
"""

from ckptbench._lazy import lazy_getattr

_EXPORTS = {
    "Baseline": "ckptbench.analysis._baseline_document",
    "GoodputPlan": "ckptbench.analysis._goodput",
    "VerdictTable": "ckptbench.analysis._verdict",
    "backend_refusal": "ckptbench.analysis._comparison",
    "build_baseline": "ckptbench.analysis._baseline",
    "build_verdict": "ckptbench.analysis._verdict",
    "likely_causes": "ckptbench.analysis._stability",
    "stability_warnings": "ckptbench.analysis._stability",
    "sweep_verdicts": "ckptbench.analysis._decisions",
    "undecided": "ckptbench.analysis._decisions",
    "verdict_text": "ckptbench.analysis._verdict",
    "run_design": "ckptbench.analysis._comparison",
    "rules": "ckptbench.analysis._legend",
    "capture_baseline": "ckptbench.analysis._baseline",
    "compare_documents": "ckptbench.analysis._comparison",
    "compare_to_baseline": "ckptbench.analysis._comparison",
    "interval_note": "ckptbench.analysis._legend",
    "judgement": "ckptbench.analysis._verdict",
    "judged_text": "ckptbench.analysis._legend",
    "outlier_summary": "ckptbench.analysis._legend",
    "table_legend": "ckptbench.analysis._legend",
    "threshold_text": "ckptbench.api",
    "verdict_clauses": "ckptbench.analysis._legend",
    "load_baseline": "ckptbench.analysis._baseline",
    "median_text": "ckptbench.analysis._verdict",
    "outlier_lines": "ckptbench.analysis._legend",
    "plan_goodput": "ckptbench.analysis._goodput",
    "ratio_text": "ckptbench.analysis._verdict",
    "read_run": "ckptbench.analysis._baseline",
    "resolve_label": "ckptbench.analysis._baseline",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
