"""Suite configuration: YAML with line numbers, pydantic models, validation."""

from ckptbench.config._loader import CheckpointSource, GeneratorEntry, Suite, load_suite, load_suite_text
from ckptbench.config._models import (
    ArraySpec,
    BenchmarkEntry,
    CheckpointConfig,
    DEFAULT_TIME_BUDGET_S,
    MeshConfig,
    ScalarSpec,
    SimDeviceConfig,
    SuiteConfig,
)
from ckptbench.config._catalogue import catalogue
from ckptbench.config._simdevice import emulated_backend, read_simdevice
from ckptbench.config._generators import resolve_generator
from ckptbench.config._mesh_list import mesh_skip_reason
from ckptbench.config._options import OptionPoint
from ckptbench.config._presets import PRESETS, ModelShape, preset_shape, preset_spec, preset_summary
from ckptbench.config._spec import SpecTree, iter_arrays, parse_spec
from ckptbench.config._yaml import LocatedDocument, parse_yaml

from ckptbench.config._dtypes import dtype_itemsize, numpy_dtype

__all__ = [
    "DEFAULT_TIME_BUDGET_S",
    "dtype_itemsize",
    "emulated_backend",
    "read_simdevice",
    "numpy_dtype",
    "ArraySpec",
    "BenchmarkEntry",
    "CheckpointConfig",
    "CheckpointSource",
    "GeneratorEntry",
    "LocatedDocument",
    "MeshConfig",
    "ModelShape",
    "OptionPoint",
    "PRESETS",
    "ScalarSpec",
    "SimDeviceConfig",
    "SpecTree",
    "parse_spec",
    "parse_yaml",
    "Suite",
    "SuiteConfig",
    "catalogue",
    "iter_arrays",
    "load_suite",
    "load_suite_text",
    "preset_shape",
    "preset_spec",
    "preset_summary",
    "resolve_generator",
    "mesh_skip_reason",
]
