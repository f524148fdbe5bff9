"""Output files and views of results: TensorBoard, HTML report, exports, console tables.

Each writer reads what a run left in OUT (results.jsonl, summary.json,
manifest.json, comparison.json), so each also works after the fact.
"""

from ckptbench._lazy import lazy_getattr
from ckptbench.outputs._views import default_views, known_views, register_view, write_views

_EXPORTS = {
    "Baseline": "ckptbench.outputs._baseline",
    "Comparison": "ckptbench.outputs._comparison_record",
    "ComparisonRow": "ckptbench.outputs._comparison_record",
    "FORMATS": "ckptbench.outputs._export",
    "RunOutputs": "ckptbench.outputs._read",
    "build_baseline": "ckptbench.outputs._baseline",
    "capture_baseline": "ckptbench.outputs._baseline",
    "compare_documents": "ckptbench.outputs._comparison",
    "compare_to_baseline": "ckptbench.outputs._comparison",
    "export_results": "ckptbench.outputs._export",
    "load_baseline": "ckptbench.outputs._baseline",
    "load_results": "ckptbench.outputs._export",
    "print_comparison": "ckptbench.outputs._comparison",
    "print_suite_tables": "ckptbench.outputs._console",
    "read_outputs": "ckptbench.outputs._read",
    "read_run": "ckptbench.outputs._baseline",
    "resolve_label": "ckptbench.outputs._baseline",
    "roofline_limits": "ckptbench.outputs._report_roofline",
    "tensorboard_run_name": "ckptbench.outputs._tensorboard",
    "write_matrix_report": "ckptbench.outputs._matrix_report",
    "write_report": "ckptbench.outputs._report",
    "write_tensorboard": "ckptbench.outputs._tensorboard",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)

__all__ = [
    "Baseline",
    "default_views",
    "known_views",
    "register_view",
    "write_views",
    "FORMATS",
    "Comparison",
    "ComparisonRow",
    "RunOutputs",
    "build_baseline",
    "capture_baseline",
    "compare_documents",
    "compare_to_baseline",
    "export_results",
    "load_baseline",
    "load_results",
    "print_comparison",
    "print_suite_tables",
    "read_outputs",
    "read_run",
    "resolve_label",
    "roofline_limits",
    "tensorboard_run_name",
    "write_matrix_report",
    "write_report",
    "write_tensorboard",
]
