"""ckptbench: measure how fast and how costly ML checkpointing is.

The public API is what `__all__` lists; every other module is private.
"""

from ckptbench._lazy import lazy_getattr
from ckptbench._version import __version__
from ckptbench.api import (
    BenchmarkOptions,
    BenchmarksGenerator,
    TestContext,
    TestResult,
    benchmark_options,
)
from ckptbench.config import Suite, load_suite
from ckptbench.run import RunSettings, SuiteOutcome, run_suite
from ckptbench.data import (
    DataMismatchError,
    abstract_from_checkpoint,
    abstract_pytree,
    pytree_checksums,
    read_sharding_config,
    reading_checkpoint,
    verify_pytree,
    write_sharding_config,
)
from ckptbench.errors import CkptbenchError, ConfigError
from ckptbench.storage import kvstore_spec, read_kvstore, write_kvstore
from ckptbench.storage import payload as kvstore_payload
from ckptbench.metrics import (
    Collector,
    MetricValue,
    Metrics,
    default_collectors,
    evict_from_page_cache,
    known_collectors,
    register_collector,
    scan_inventory,
)

# Results and baselines need pandas and scipy: loaded on first use.
_EXPORTS = {
    "Comparison": "ckptbench.outputs._comparison",
    "capture_baseline": "ckptbench.outputs._baseline",
    "compare_to_baseline": "ckptbench.outputs._comparison",
    "load_results": "ckptbench.outputs._export",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)

__all__ = [
    "BenchmarkOptions",
    "BenchmarksGenerator",
    "CkptbenchError",
    "Collector",
    "Comparison",
    "ConfigError",
    "DataMismatchError",
    "MetricValue",
    "Metrics",
    "RunSettings",
    "Suite",
    "SuiteOutcome",
    "TestContext",
    "TestResult",
    "__version__",
    "abstract_from_checkpoint",
    "abstract_pytree",
    "benchmark_options",
    "capture_baseline",
    "compare_to_baseline",
    "default_collectors",
    "evict_from_page_cache",
    "known_collectors",
    "kvstore_payload",
    "kvstore_spec",
    "load_results",
    "load_suite",
    "pytree_checksums",
    "read_kvstore",
    "read_sharding_config",
    "reading_checkpoint",
    "register_collector",
    "run_suite",
    "scan_inventory",
    "verify_pytree",
    "write_kvstore",
    "write_sharding_config",
]
