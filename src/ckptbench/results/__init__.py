"""What a run writes into OUT and how OUT is read back: results.jsonl, summary.json,
manifest.json, comparison.json's record, exports.

Names load lazily: the report's libraries (plotly, tensorboard, pandas) cost only when used.
"""

from ckptbench._lazy import lazy_getattr

_EXPORTS = {
    "Comparison": "ckptbench.results._comparison_record",
    "FORMATS": "ckptbench.results._formats",
    "LOCK_FILE": "ckptbench.results._lock",
    "MANIFEST_FILE": "ckptbench.results._writers",
    "RESULTS_FILE": "ckptbench.results._results",
    "RunOutputs": "ckptbench.results._read",
    "RunWriter": "ckptbench.results._writers",
    "SUMMARY_FILE": "ckptbench.results._writers",
    "check_output_dir": "ckptbench.results._read",
    "build_manifest": "ckptbench.results._manifest",
    "export_results": "ckptbench.results._export",
    "git_state": "ckptbench.results._manifest",
    "load_results": "ckptbench.results._export",
    "now_iso": "ckptbench.results._manifest",
    "output_lock": "ckptbench.results._lock",
    "read_outputs": "ckptbench.results._read",
    "read_records": "ckptbench.results._results",
    "run_backend": "ckptbench.results._manifest",
    "run_writers": "ckptbench.results._writers",
    "write_json_atomic": "ckptbench.results._results",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
