"""Output files and views of results: TensorBoard, HTML report, exports, console tables.

Each writer reads what a run left in OUT (results.jsonl, summary.json,
manifest.json, comparison.json), so each also works after the fact.
"""

from ckptbench.outputs._console import print_suite_tables
from ckptbench.outputs._export import FORMATS, export_results, load_results
from ckptbench.outputs._read import RunOutputs, read_outputs, split_tag
from ckptbench.outputs._report import roofline_limits, write_report
from ckptbench.outputs._tensorboard import tensorboard_run_name, write_tensorboard

__all__ = [
    "FORMATS",
    "RunOutputs",
    "export_results",
    "load_results",
    "print_suite_tables",
    "read_outputs",
    "roofline_limits",
    "split_tag",
    "tensorboard_run_name",
    "write_report",
    "write_tensorboard",
]
