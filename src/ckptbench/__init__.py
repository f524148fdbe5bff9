"""ckptbench: measure how fast and how costly ML checkpointing is.

The public API is what `__all__` lists; every other module is private.
"""

from ckptbench._lazy import lazy_getattr
from ckptbench._version import __version__
from ckptbench.api import (
    BenchmarkOptions,
    BenchmarksGenerator,
    Collector,
    HostStatistics,
    MetricEntry,
    MetricStatistics,
    MetricValue,
    Metrics,
    OrbaxCapabilities,
    TestContext,
    TestResult,
    benchmark_options,
    default_collectors,
    orbax_capabilities,
    orbax_v1_context,
    orbax_v1_io,
    register_collector,
)
from ckptbench.api import BenchmarkSummary, ErrorRecord, RunRecord, SuiteSummary
from ckptbench.config import PRESETS, ModelShape, Suite, load_suite, load_suite_text, preset_shape, preset_spec, preset_summary
from ckptbench.run import RunOutcome, RunSettings, run
from ckptbench.data import (
    DataMismatchError,
    abstract_from_checkpoint,
    abstract_pytree,
    check_loaded_shardings,
    pytree_checksums,
    read_sharding_config,
    reading_checkpoint,
    verify_pytree,
    write_sharding_config,
)
from ckptbench.errors import CkptbenchError, ConfigError
from ckptbench.metrics import evict_for_load, evict_from_page_cache, scan_inventory  # also registers the collectors
from ckptbench.stats import median_ratio, theil_sen_slope
from ckptbench.storage import (
    DirectoryStore,
    ObjectStore,
    kvstore_spec,
    read_kvstore,
    read_location,
    register_store,
    uses_fsspec,
    write_kvstore,
    write_location,
)
from ckptbench.storage import payload as kvstore_payload

# Results and baselines need pandas and scipy: loaded on first use.
_EXPORTS = {
    "Comparison": "ckptbench.results",
    "capture_baseline": "ckptbench.analysis",
    "compare_to_baseline": "ckptbench.analysis",
    "load_results": "ckptbench.results",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)

__all__ = [
    "BenchmarkOptions",
    "BenchmarkSummary",
    "BenchmarksGenerator",
    "CkptbenchError",
    "Collector",
    "Comparison",
    "ConfigError",
    "DataMismatchError",
    "DirectoryStore",
    "ErrorRecord",
    "HostStatistics",
    "MetricEntry",
    "MetricStatistics",
    "MetricValue",
    "Metrics",
    "ModelShape",
    "ObjectStore",
    "OrbaxCapabilities",
    "PRESETS",
    "RunOutcome",
    "RunRecord",
    "RunSettings",
    "Suite",
    "SuiteSummary",
    "TestContext",
    "TestResult",
    "__version__",
    "abstract_from_checkpoint",
    "abstract_pytree",
    "benchmark_options",
    "capture_baseline",
    "check_loaded_shardings",
    "compare_to_baseline",
    "default_collectors",
    "evict_for_load",
    "evict_from_page_cache",
    "kvstore_payload",
    "kvstore_spec",
    "load_results",
    "load_suite",
    "load_suite_text",
    "median_ratio",
    "orbax_capabilities",
    "orbax_v1_context",
    "orbax_v1_io",
    "preset_shape",
    "preset_spec",
    "preset_summary",
    "pytree_checksums",
    "read_kvstore",
    "read_location",
    "read_sharding_config",
    "reading_checkpoint",
    "register_collector",
    "register_store",
    "run",
    "scan_inventory",
    "theil_sen_slope",
    "uses_fsspec",
    "verify_pytree",
    "write_kvstore",
    "write_location",
    "write_sharding_config",
]
