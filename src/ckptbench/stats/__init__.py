"""Statistics and aggregation: pure functions over numbers and records (no I/O, no JAX)."""

from ckptbench.stats._hosts import higher_is_better, host_statistics
from ckptbench.stats._summary import describe, metric_samples, summarize_benchmarks

__all__ = [
    "describe",
    "higher_is_better",
    "host_statistics",
    "metric_samples",
    "summarize_benchmarks",
]
