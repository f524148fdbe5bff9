"""Renderings of OUT: console tables, the HTML report and its plots, TensorBoard, the matrix
page, goodput page, scale page; the view registry and the detached writer that runs it.

Names load lazily: the report's libraries (plotly, tensorboard, pandas) cost only when used.
"""

from typing import TYPE_CHECKING

from ckptbench._lazy import lazy_face

if TYPE_CHECKING:  # the face, each name once: lazy_face reads it, type checkers and IDEs resolve it
  from ckptbench._escape import markdown_code, markdown_text
  from ckptbench.views._progress import RunProgress
  from ckptbench.views._background import VIEWS_DONE, add_missing_probe, start_views, wait_for_parent
  from ckptbench.views._views import default_views, import_view_sources, register_view, view_sources, write_views
  from ckptbench.views._terminal import make_console, markup_text
  from ckptbench.views._goodput_page import plans_as_text, write_goodput
  from ckptbench.views._comparison_text import print_comparison
  from ckptbench.views._console import print_suite_tables
  from ckptbench.views._effects_view import effects_tables, print_tune
  from ckptbench.views._report_roofline import roofline_limits
  from ckptbench.views._scale_view import scale_as_text, write_scale_page
  from ckptbench.views._tensorboard import TensorBoardWriter, tensorboard_run_name, write_tensorboard
  from ckptbench.views._history_page import write_history_page
  from ckptbench.views._matrix_report import write_matrix_report
  from ckptbench.views._report import write_report

__getattr__, __dir__ = lazy_face(globals())
