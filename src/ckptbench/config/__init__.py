"""Suite configuration: YAML with line numbers, pydantic models, validation."""

from ckptbench.config._loader import CheckpointSource, GeneratorEntry, Suite, load_suite, load_suite_text
from ckptbench.config._models import (
    ArraySpec,
    BenchmarkEntry,
    CheckpointConfig,
    MeshConfig,
    ScalarSpec,
    SuiteConfig,
)
from ckptbench.config._yaml import load_yaml_file
from ckptbench.config._spec import SpecTree, iter_arrays

__all__ = [
    "load_yaml_file",
    "ArraySpec",
    "BenchmarkEntry",
    "CheckpointConfig",
    "CheckpointSource",
    "GeneratorEntry",
    "MeshConfig",
    "ScalarSpec",
    "SpecTree",
    "Suite",
    "SuiteConfig",
    "iter_arrays",
    "load_suite",
    "load_suite_text",
]
