"""The benchmark API every other part builds on: options, the generator base,
the test context and result, and `Metrics` with its collector registry.

It imports no other part of ckptbench, so config, data, metrics, outputs, the
built-ins and the runner can all depend on it.
"""

from ckptbench.api._collector import (
    Collector,
    MetricValue,
    default_collectors,
    register_collector,
)
from ckptbench.api._generator import BenchmarksGenerator, TestContext, TestResult, safe_path_component
from ckptbench.api._metrics import Metrics, collect_created_metrics, merged
from ckptbench.api._generator import benchmark_options
from ckptbench.api._options import BenchmarkOptions, options_to_dict
from ckptbench.api._values import HostStatistics, MetricEntry, MetricStatistics
from ckptbench.api._orbax_probe import OrbaxCapabilities, orbax_capabilities, orbax_v1_context, orbax_v1_io

__all__ = [
    "BenchmarkOptions",
    "BenchmarksGenerator",
    "Collector",
    "HostStatistics",
    "MetricEntry",
    "MetricStatistics",
    "MetricValue",
    "Metrics",
    "OrbaxCapabilities",
    "TestContext",
    "TestResult",
    "benchmark_options",
    "collect_created_metrics",
    "default_collectors",
    "merged",
    "options_to_dict",
    "orbax_capabilities",
    "orbax_v1_context",
    "orbax_v1_io",
    "register_collector",
    "safe_path_component",
]
