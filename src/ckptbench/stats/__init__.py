"""Statistics and aggregation: pure functions over numbers and records (no I/O, no JAX)."""

from ckptbench.stats._compare import (
    CONFIDENCE_LEVEL,
    DEFAULT_ALPHA,
    DEFAULT_THRESHOLD,
    MetricComparison,
    Verdict,
    compare_samples,
    min_p_value,
    per_repeat_across_hosts,
)
from ckptbench.stats._direction import (
    Direction,
    absolute_floor,
    metric_direction,
)
from ckptbench.stats._hosts import host_statistics
from ckptbench.stats._summary import describe, metric_samples, summarize_benchmarks

__all__ = [
    "CONFIDENCE_LEVEL",
    "DEFAULT_ALPHA",
    "DEFAULT_THRESHOLD",
    "Direction",
    "MetricComparison",
    "Verdict",
    "absolute_floor",
    "compare_samples",
    "describe",
    "host_statistics",
    "metric_direction",
    "metric_samples",
    "min_p_value",
    "per_repeat_across_hosts",
    "summarize_benchmarks",
]
