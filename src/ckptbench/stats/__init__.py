"""Statistics and aggregation: pure functions over numbers and records (no I/O, no JAX)."""

from ckptbench.stats._hosts import host_statistics, is_rate_unit
from ckptbench.stats._summary import describe, metric_samples, summarize_benchmarks

__all__ = [
    "describe",
    "host_statistics",
    "is_rate_unit",
    "metric_samples",
    "summarize_benchmarks",
]
