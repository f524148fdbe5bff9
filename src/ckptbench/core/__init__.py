"""The benchmark API (options, generators, context, result) and the suite runner."""

from ckptbench.core._generator import (
    BenchmarksGenerator,
    TestContext,
    TestResult,
    safe_path_component,
)
from ckptbench.core._options import BenchmarkOptions, benchmark_options, options_to_dict

__all__ = [
    "BenchmarkOptions",
    "BenchmarksGenerator",
    "TestContext",
    "TestResult",
    "benchmark_options",
    "options_to_dict",
    "safe_path_component",
]
