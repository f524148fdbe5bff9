"""What a run writes into OUT and how OUT is read back: results.jsonl, summary.json,
manifest.json, comparison.json's record, exports
(tables, pyperf, github-action-benchmark).

Names load lazily: the report's libraries (plotly, tensorboard, pandas) cost only when used.
"""

from typing import TYPE_CHECKING

from ckptbench._lazy import lazy_face

if TYPE_CHECKING:  # the face, each name once: lazy_face reads it, type checkers and IDEs resolve it
  from ckptbench.results._comparison_record import Comparison
  from ckptbench.results._formats import BENCHMARK_FORMATS, FORMATS
  from ckptbench.results._lock import LOCK_FILE, output_lock
  from ckptbench.results._writers import MANIFEST_FILE, RunWriter, SUMMARY_FILE, run_writers
  from ckptbench.results._files import decode_document, read_document
  from ckptbench.results._results import RESULTS_FILE, read_records, write_json_atomic
  from ckptbench.results._read import RunOutputs, check_output_dir, read_outputs
  from ckptbench.results._manifest import build_manifest, git_state, now_iso, run_backend, run_environment
  from ckptbench.results._export import export_benchmarks, export_results, load_results
  from ckptbench.results._metric_series import BenchmarkExport, LeftOut, MetricSeries, unique_names
  from ckptbench.results._pyperf import pyperf_metadata, write_pyperf
  from ckptbench.results._github_action import GITHUB_ACTION_TOOLS, write_github_action_benchmark

__getattr__, __dir__ = lazy_face(globals())
