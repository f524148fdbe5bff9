"""Statistics and aggregation: pure functions over numbers and records (no I/O, no JAX)."""

from ckptbench.stats._summary import describe, metric_samples, summarize_benchmarks

__all__ = ["describe", "metric_samples", "summarize_benchmarks"]
