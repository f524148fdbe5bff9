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
from ckptbench.config._mesh_list import without_undeclared_axes
from ckptbench.config._presets import PRESETS, ModelShape, preset_shape, preset_spec, preset_summary
from ckptbench.config._spec import SpecTree, iter_arrays
from ckptbench.config._yaml import load_yaml_file

from ckptbench.config._dtypes import numpy_dtype
from ckptbench.config._overrides import apply_overrides, parse_override

__all__ = [
    "apply_overrides",
    "numpy_dtype",
    "parse_override",
    "ArraySpec",
    "BenchmarkEntry",
    "CheckpointConfig",
    "CheckpointSource",
    "GeneratorEntry",
    "MeshConfig",
    "ModelShape",
    "PRESETS",
    "ScalarSpec",
    "SpecTree",
    "Suite",
    "SuiteConfig",
    "iter_arrays",
    "load_suite",
    "load_suite_text",
    "load_yaml_file",
    "preset_shape",
    "preset_spec",
    "preset_summary",
    "without_undeclared_axes",
]
