"""ckptbench: measure how fast and how costly ML checkpointing is.

The public API is what `__all__` lists: the names below, each written once (the
`TYPE_CHECKING` block is the list; `_lazy.lazy_face` reads it); every other module is private.

Names load on first use: `import ckptbench` (and `ckptbench --version`, `--help`,
`plan`) does not start JAX, Orbax, pandas or scipy until a name that needs them is
used. `Metrics` and `default_collectors` come through `ckptbench.metrics`, whose
import registers the built-in collectors they read. `ckptbench.run` is the function
that runs a suite (the package behind it is `ckptbench.engine`).
"""

from typing import TYPE_CHECKING

from ckptbench._lazy import lazy_face
from ckptbench._version import __version__
from ckptbench.errors import CkptbenchError, ConfigError

if TYPE_CHECKING:  # the public names, each once: lazy_face reads them, type checkers and IDEs resolve them
  from ckptbench.api import (
      BenchmarkOptions,
      BenchmarksGenerator,
      Builtin,
      Collector,
      HostStatistics,
      MetricEntry,
      MetricStatistics,
      MetricValue,
      OrbaxCapabilities,
      TestContext,
      TestResult,
      benchmark_options,
      orbax_capabilities,
      orbax_v1_context,
      orbax_v1_io,
      register_collector,
      BenchmarkSummary,
      ErrorRecord,
      RecordKind,
      RunRecord,
      SuiteSummary,
      measured_records,
      memory_pass_records,
      sampled_records,
      timed_runs,
      warmup_runs,
  )
  from ckptbench.config import (
      PRESETS,
      CheckpointConfig,
      MeshConfig,
      ModelShape,
      SimDeviceConfig,
      Suite,
      load_suite,
      load_suite_text,
      parse_yaml,
      preset_shape,
      preset_spec,
      preset_summary,
  )
  from ckptbench.engine import (
      RunOutcome,
      RunSettings,
      TuneOutcome,
      run,
      tune,
  )
  from ckptbench.data import (
      DataMismatchError,
      abstract_from_checkpoint,
      abstract_pytree,
      build_mesh,
      check_loaded_shardings,
      pytree_checksums,
      read_sharding_config,
      synthetic_pytree,
      reading_checkpoint,
      verify_pytree,
      write_sharding_config,
  )
  from ckptbench.distributed import torch_process_group
  from ckptbench.metrics import (
      Metrics,
      default_collectors,
      evict_for_load,
      evict_from_page_cache,
      host_live_mib,
      scan_inventory,
  )
  from ckptbench.stats import (
      host_statistics,
      median_ratio,
      metric_statistics,
      theil_sen_slope,
  )
  from ckptbench.storage import (
      DirectoryStore,
      ObjectStore,
      kvstore_spec,
      orbax_write_problem,
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
  from ckptbench.results import run_environment
  from ckptbench.views import TensorBoardWriter, markdown_code, markdown_text

__getattr__, __dir__ = lazy_face(globals())
