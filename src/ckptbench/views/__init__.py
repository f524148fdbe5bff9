"""Renderings of OUT: console tables, the HTML report and its plots, TensorBoard, the matrix
page, goodput page, scale page; the view registry and the detached writer that runs it.

Names load lazily: the report's libraries (plotly, tensorboard, pandas) cost only when used.
"""

from ckptbench._lazy import lazy_getattr

_EXPORTS = {
    "RunProgress": "ckptbench.views._progress",
    "VIEWS_DONE": "ckptbench.views._background",
    "add_missing_probe": "ckptbench.views._background",
    "default_views": "ckptbench.views._views",
    "import_view_sources": "ckptbench.views._views",
    "make_console": "ckptbench.views._terminal",
    "plans_as_text": "ckptbench.views._goodput_page",
    "print_comparison": "ckptbench.views._comparison_text",
    "print_suite_tables": "ckptbench.views._console",
    "register_view": "ckptbench.views._views",
    "roofline_limits": "ckptbench.views._report_roofline",
    "scale_as_text": "ckptbench.views._scale_view",
    "start_views": "ckptbench.views._background",
    "tensorboard_run_name": "ckptbench.views._tensorboard",
    "wait_for_parent": "ckptbench.views._background",
    "write_goodput": "ckptbench.views._goodput_page",
    "write_history_page": "ckptbench.views._history_page",
    "write_matrix_report": "ckptbench.views._matrix_report",
    "write_report": "ckptbench.views._report",
    "write_scale_page": "ckptbench.views._scale_view",
    "write_tensorboard": "ckptbench.views._tensorboard",
    "view_sources": "ckptbench.views._views",
    "write_views": "ckptbench.views._views",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
