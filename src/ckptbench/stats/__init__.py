"""Statistics and aggregation: pure functions over numbers and records (no I/O, no JAX).

Names load on first use: the command line reads the default thresholds without numpy.
"""

from ckptbench._lazy import lazy_getattr

_EXPORTS = {
    "CONFIDENCE_LEVEL": "ckptbench.stats._defaults",
    "CheckpointCost": "ckptbench.stats._goodput",
    "DEFAULT_ALPHA": "ckptbench.stats._defaults",
    "DEFAULT_THRESHOLD": "ckptbench.stats._defaults",
    "Direction": "ckptbench.stats._direction",
    "MedianInterval": "ckptbench.stats._interval",
    "MetricComparison": "ckptbench.stats._compare",
    "Slope": "ckptbench.stats._trend",
    "Verdict": "ckptbench.stats._compare",
    "absolute_floor": "ckptbench.stats._direction",
    "compare_samples": "ckptbench.stats._compare",
    "describe": "ckptbench.stats._summary",
    "expected_goodput": "ckptbench.stats._goodput",
    "host_statistics": "ckptbench.stats._hosts",
    "median_interval": "ckptbench.stats._interval",
    "median_ratio": "ckptbench.stats._compare",
    "metric_direction": "ckptbench.stats._direction",
    "metric_samples": "ckptbench.stats._summary",
    "min_p_value": "ckptbench.stats._compare",
    "modified_z_scores": "ckptbench.stats._outliers",
    "optimal_interval": "ckptbench.stats._goodput",
    "outlier_indices": "ckptbench.stats._outliers",
    "per_repeat_across_hosts": "ckptbench.stats._compare",
    "simulate_goodput": "ckptbench.stats._goodput",
    "summarize_benchmarks": "ckptbench.stats._summary",
    "theil_sen_slope": "ckptbench.stats._trend",
    "young_interval": "ckptbench.stats._goodput",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)

__all__ = [
    "MedianInterval",
    "median_interval",
    "modified_z_scores",
    "outlier_indices",
    "CONFIDENCE_LEVEL",
    "CheckpointCost",
    "DEFAULT_ALPHA",
    "DEFAULT_THRESHOLD",
    "Direction",
    "MetricComparison",
    "Slope",
    "Verdict",
    "absolute_floor",
    "compare_samples",
    "describe",
    "expected_goodput",
    "host_statistics",
    "median_ratio",
    "metric_direction",
    "metric_samples",
    "min_p_value",
    "optimal_interval",
    "per_repeat_across_hosts",
    "simulate_goodput",
    "summarize_benchmarks",
    "theil_sen_slope",
    "young_interval",
]
