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
from ckptbench.data import DataMismatchError, abstract_pytree, pytree_checksums, verify_pytree
from ckptbench.errors import CkptbenchError, ConfigError
from ckptbench.metrics import (
    Collector,
    MetricValue,
    Metrics,
    default_collectors,
    known_collectors,
    register_collector,
)

__all__ = [
    "BenchmarkOptions",
    "BenchmarksGenerator",
    "CkptbenchError",
    "Collector",
    "ConfigError",
    "DataMismatchError",
    "MetricValue",
    "Metrics",
    "TestContext",
    "TestResult",
    "__version__",
    "abstract_pytree",
    "benchmark_options",
    "default_collectors",
    "known_collectors",
    "pytree_checksums",
    "register_collector",
    "verify_pytree",
]
