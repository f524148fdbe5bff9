"""The benchmark API every other part builds on: options, the generator base,
the test context and result, and `Metrics` with its collector registry.

It imports no other part of ckptbench, so every other part can depend on it.
Only the options load with this face; every other name loads on first use, so that
the pure statistics can import the records and tags from it without the generator
base (pathlib) or the Orbax probe, and `ckptbench plan` loads none of the metrics.
"""

from typing import TYPE_CHECKING

from ckptbench._lazy import lazy_face
from ckptbench.api._options import BenchmarkOptions, options_to_dict

# Building their frozen dataclasses and the tag table's patterns cost `plan` some 20 ms;
# a generator's module needs only the options and the base class to be defined.
if TYPE_CHECKING:  # the face, each name once: lazy_face reads it, type checkers and IDEs resolve it
  from ckptbench.api._collector import (
      Collector,
      MetricValue,
      collectors_held,
      default_collectors,
      collector_registrations,
      register_collector,
  )
  from ckptbench.api._metrics import Metrics, collect_created_metrics, merged
  from ckptbench.api._values import (
      HostStatistics,
      MetricEntry,
      MetricStatistics,
      SchemaError,
      as_number,
      finite_number,
      json_fields,
  )
  from ckptbench.api._tag_table import (
      DERIVED,
      NAMESPACES,
      PATTERNS,
      TAGS,
      TagSpec,
      is_host_memory_tag,
      unit_of,
      value as tag_value,
  )
  from ckptbench.api._tags import (
      BYTES_PER_UNIT,
      PEAK_OVER_CHECKPOINT_SUFFIX,
      RENAMED,
      SECONDS_PER_UNIT,
      Tag,
      current_tag,
      is_memory_unit,
      is_rate_unit,
  )
  from ckptbench.api._judged import JUDGED, Judged, JudgedMetric, is_judged, judged_as, judged_metrics, judged_text
  from ckptbench.api._records import (
      BenchmarkSummary,
      ErrorRecord,
      NotRun,
      RecordKind,
      RunFailure,
      RunRecord,
      SkippedMesh,
      SuiteSummary,
      check_version,
      measured_records,
      memory_pass_records,
      sampled_records,
      timed_runs,
      warmup_runs,
  )
  from ckptbench.api._verdict_record import Verdict, VerdictRecord, threshold_text
  from ckptbench.api._effect_record import ConditionalRecord, EffectRecord, InteractionRecord
  from ckptbench.api._floor_record import FloorShareRecord
  from ckptbench.api._generator import (
      BenchmarksGenerator,
      TestContext,
      TestResult,
      benchmark_options,
      safe_path_component,
  )
  from ckptbench.api._builtin import Builtin
  from ckptbench.api._levels import is_reference, level_labels, mesh_name, spec_text, value_text, variant_labels
  from ckptbench.api._orbax_probe import OrbaxCapabilities, orbax_capabilities, orbax_v1_context, orbax_v1_io

__getattr__, __dir__ = lazy_face(globals())
