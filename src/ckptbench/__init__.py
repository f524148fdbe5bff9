"""ckptbench: measure how fast and how costly ML checkpointing is.

The public API is what `__all__` lists; every other module is private.

Names load on first use: `import ckptbench` (and `ckptbench --version`, `--help`,
`plan`) does not start JAX, Orbax, pandas or scipy until a name that needs them is
used. `Metrics` and `default_collectors` come through `ckptbench.metrics`, whose
import registers the built-in collectors they read.
"""

import sys
import types
from typing import TYPE_CHECKING

from ckptbench._lazy import lazy_getattr
from ckptbench._version import __version__
from ckptbench.errors import CkptbenchError, ConfigError

if TYPE_CHECKING:  # what the names are, for type checkers and the import-linter contracts
  from ckptbench.api import (
      BenchmarkOptions,
      BenchmarksGenerator,
      Builtin,
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
      BenchmarkSummary,
      ErrorRecord,
      RunRecord,
      SuiteSummary,
  )
  from ckptbench.config import (
      PRESETS,
      CheckpointConfig,
      MeshConfig,
      ModelShape,
      Suite,
      load_suite,
      load_suite_text,
      preset_shape,
      preset_spec,
      preset_summary,
  )
  from ckptbench.run import (
      RunOutcome,
      RunSettings,
      run,
  )
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
  from ckptbench.distributed import torch_process_group
  from ckptbench.metrics import (
      evict_for_load,
      evict_from_page_cache,
      host_live_mib,
      scan_inventory,
  )
  from ckptbench.stats import (
      median_ratio,
      theil_sen_slope,
  )
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
  from ckptbench.results import Comparison
  from ckptbench.analysis import capture_baseline
  from ckptbench.analysis import compare_to_baseline
  from ckptbench.results import load_results

_EXPORTS = {
    "BenchmarkOptions": "ckptbench.api",
    "BenchmarkSummary": "ckptbench.api",
    "BenchmarksGenerator": "ckptbench.api",
    "Builtin": "ckptbench.api",
    "CheckpointConfig": "ckptbench.config",
    "Collector": "ckptbench.api",
    "Comparison": "ckptbench.results",
    "DataMismatchError": "ckptbench.data",
    "DirectoryStore": "ckptbench.storage",
    "ErrorRecord": "ckptbench.api",
    "HostStatistics": "ckptbench.api",
    "MetricEntry": "ckptbench.api",
    "MetricStatistics": "ckptbench.api",
    "MeshConfig": "ckptbench.config",
    "MetricValue": "ckptbench.api",
    "Metrics": "ckptbench.metrics",
    "ModelShape": "ckptbench.config",
    "ObjectStore": "ckptbench.storage",
    "OrbaxCapabilities": "ckptbench.api",
    "PRESETS": "ckptbench.config",
    "RunOutcome": "ckptbench.run",
    "RunRecord": "ckptbench.api",
    "RunSettings": "ckptbench.run",
    "Suite": "ckptbench.config",
    "SuiteSummary": "ckptbench.api",
    "TestContext": "ckptbench.api",
    "TestResult": "ckptbench.api",
    "abstract_from_checkpoint": "ckptbench.data",
    "abstract_pytree": "ckptbench.data",
    "benchmark_options": "ckptbench.api",
    "check_loaded_shardings": "ckptbench.data",
    "capture_baseline": "ckptbench.analysis",
    "compare_to_baseline": "ckptbench.analysis",
    "default_collectors": "ckptbench.metrics",
    "evict_for_load": "ckptbench.metrics",
    "evict_from_page_cache": "ckptbench.metrics",
    "host_live_mib": "ckptbench.metrics",
    "kvstore_payload": "ckptbench.storage:payload",
    "kvstore_spec": "ckptbench.storage",
    "load_results": "ckptbench.results",
    "load_suite": "ckptbench.config",
    "load_suite_text": "ckptbench.config",
    "median_ratio": "ckptbench.stats",
    "orbax_capabilities": "ckptbench.api",
    "orbax_v1_context": "ckptbench.api",
    "orbax_v1_io": "ckptbench.api",
    "preset_shape": "ckptbench.config",
    "preset_spec": "ckptbench.config",
    "preset_summary": "ckptbench.config",
    "pytree_checksums": "ckptbench.data",
    "read_kvstore": "ckptbench.storage",
    "read_location": "ckptbench.storage",
    "read_sharding_config": "ckptbench.data",
    "reading_checkpoint": "ckptbench.data",
    "register_collector": "ckptbench.api",
    "register_store": "ckptbench.storage",
    "run": "ckptbench.run",
    "scan_inventory": "ckptbench.metrics",
    "theil_sen_slope": "ckptbench.stats",
    "torch_process_group": "ckptbench.distributed",
    "uses_fsspec": "ckptbench.storage",
    "verify_pytree": "ckptbench.data",
    "write_kvstore": "ckptbench.storage",
    "write_location": "ckptbench.storage",
    "write_sharding_config": "ckptbench.data",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)


def __dir__() -> list[str]:
  return __all__


class _Package(types.ModuleType):
  """`ckptbench.run` is the function, also after the subpackage `ckptbench.run` is imported.

  Importing a subpackage binds its name on the parent package; loaded lazily, the
  function `run` would then be shadowed by the package `ckptbench.run`.
  """

  def __setattr__(self, name: str, value: object) -> None:
    if name == "run" and isinstance(value, types.ModuleType):
      return  # the function is bound on first use (__getattr__)
    super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = [
    "BenchmarkOptions",
    "BenchmarkSummary",
    "BenchmarksGenerator",
    "Builtin",
    "CheckpointConfig",
    "CkptbenchError",
    "Collector",
    "Comparison",
    "ConfigError",
    "DataMismatchError",
    "DirectoryStore",
    "ErrorRecord",
    "HostStatistics",
    "MeshConfig",
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
    "host_live_mib",
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
    "torch_process_group",
    "uses_fsspec",
    "verify_pytree",
    "write_kvstore",
    "write_location",
    "write_sharding_config",
]
