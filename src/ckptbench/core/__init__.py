"""The benchmark API: options, generators, context and result."""

from ckptbench.core._generator import (
    BenchmarksGenerator,
    TestContext,
    TestResult,
    safe_path_component,
)
from ckptbench.core._options import BenchmarkOptions, benchmark_options

__all__ = [
    "BenchmarkOptions",
    "BenchmarksGenerator",
    "TestContext",
    "TestResult",
    "benchmark_options",
    "safe_path_component",
]
