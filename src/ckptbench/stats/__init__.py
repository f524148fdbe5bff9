"""Statistics and aggregation: pure functions over numbers and records (no I/O, no JAX)."""

from ckptbench.stats._compare import (
    CONFIDENCE_LEVEL,
    DEFAULT_ALPHA,
    DEFAULT_THRESHOLD,
    MetricComparison,
    Verdict,
    compare_samples,
    median_ratio,
    min_p_value,
    per_repeat_across_hosts,
)
from ckptbench.stats._direction import (
    Direction,
    absolute_floor,
    metric_direction,
)
from ckptbench.stats._goodput import (
    CheckpointCost,
    expected_goodput,
    optimal_interval,
    simulate_goodput,
    young_interval,
)
from ckptbench.stats._hosts import host_statistics
from ckptbench.stats._summary import describe, metric_samples, metric_statistics, summarize_benchmarks
from ckptbench.stats._trend import Slope, theil_sen_slope

from ckptbench.stats._interval import MedianInterval, median_interval
from ckptbench.stats._outliers import modified_z_scores, outlier_indices

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
    "metric_statistics",
    "min_p_value",
    "optimal_interval",
    "per_repeat_across_hosts",
    "simulate_goodput",
    "summarize_benchmarks",
    "theil_sen_slope",
    "young_interval",
]
