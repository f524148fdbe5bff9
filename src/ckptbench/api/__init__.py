"""The benchmark API every other part builds on: options, the generator base,
the test context and result, and `Metrics` with its collector registry.

It imports no other part of ckptbench, so every other part can depend on it.
The generator base (pathlib) and the Orbax probe load on first use, so that
the pure statistics can import the records and tags from this face.
"""

from ckptbench._lazy import lazy_getattr

from ckptbench.api._collector import (
    Collector,
    MetricValue,
    default_collectors,
    collector_registrations,
    register_collector,
)
from ckptbench.api._metrics import Metrics, collect_created_metrics, merged
from ckptbench.api._options import BenchmarkOptions, options_to_dict
from ckptbench.api._values import HostStatistics, MetricEntry, MetricStatistics, as_number

from ckptbench.api._values import SchemaError, json_fields
from ckptbench.api._tag_table import DERIVED, NAMESPACES, PATTERNS, TAGS, TagSpec, unit_of
from ckptbench.api._tag_table import value as tag_value
from ckptbench.api._tags import BYTES_PER_UNIT, Tag, is_memory_unit, is_rate_unit

# The records and verdicts load on first use: `ckptbench plan` reads none.
_EXPORTS = {
    "BenchmarkSummary": "ckptbench.api._records",
    "ErrorRecord": "ckptbench.api._records",
    "NotRun": "ckptbench.api._records",
    "RunFailure": "ckptbench.api._records",
    "RunRecord": "ckptbench.api._records",
    "SkippedMesh": "ckptbench.api._records",
    "SuiteSummary": "ckptbench.api._records",
    "check_version": "ckptbench.api._records",
    "Verdict": "ckptbench.api._verdict_record",
    "VerdictRecord": "ckptbench.api._verdict_record",
    "BenchmarksGenerator": "ckptbench.api._generator",
    "OrbaxCapabilities": "ckptbench.api._orbax_probe",
    "TestContext": "ckptbench.api._generator",
    "TestResult": "ckptbench.api._generator",
    "benchmark_options": "ckptbench.api._generator",
    "orbax_capabilities": "ckptbench.api._orbax_probe",
    "orbax_v1_context": "ckptbench.api._orbax_probe",
    "orbax_v1_io": "ckptbench.api._orbax_probe",
    "safe_path_component": "ckptbench.api._generator",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)

__all__ = [
    "BYTES_PER_UNIT",
    "BenchmarkSummary",
    "ErrorRecord",
    "DERIVED",
    "NAMESPACES",
    "PATTERNS",
    "NotRun",
    "RunFailure",
    "RunRecord",
    "SchemaError",
    "SkippedMesh",
    "SuiteSummary",
    "Verdict",
    "VerdictRecord",
    "TAGS",
    "Tag",
    "TagSpec",
    "as_number",
    "check_version",
    "is_memory_unit",
    "is_rate_unit",
    "json_fields",
    "tag_value",
    "unit_of",
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
    "collector_registrations",
    "merged",
    "options_to_dict",
    "orbax_capabilities",
    "orbax_v1_context",
    "orbax_v1_io",
    "register_collector",
    "safe_path_component",
]
