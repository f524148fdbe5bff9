"""ckptbench: measure how fast and how costly ML checkpointing is.

The public API is what `__all__` lists; every other module is private.
"""

from ckptbench._version import __version__
from ckptbench.core import (
    BenchmarkOptions,
    BenchmarksGenerator,
    TestContext,
    TestResult,
    benchmark_options,
)
from ckptbench.errors import CkptbenchError, ConfigError
from ckptbench.metrics import Collector, MetricValue, Metrics, register_collector
from ckptbench.outputs import load_results

__all__ = [
    "BenchmarkOptions",
    "BenchmarksGenerator",
    "CkptbenchError",
    "Collector",
    "ConfigError",
    "MetricValue",
    "Metrics",
    "TestContext",
    "TestResult",
    "__version__",
    "benchmark_options",
    "load_results",
    "register_collector",
]
