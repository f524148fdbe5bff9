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
from ckptbench.config._options import OptionPoint
from ckptbench.config._presets import PRESETS, ModelShape, preset_shape, preset_spec, preset_summary
from ckptbench.config._spec import SpecTree, iter_arrays
from ckptbench.config._yaml import load_yaml_file

__all__ = [
    "ArraySpec",
    "BenchmarkEntry",
    "CheckpointConfig",
    "CheckpointSource",
    "GeneratorEntry",
    "MeshConfig",
    "ModelShape",
    "OptionPoint",
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
