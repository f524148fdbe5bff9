"""Isolated environments: the same suite under other releases of Orbax, JAX or TensorStore.

Environments are built with uv and cached by the hash of their spec (`_build`);
`matrix` runs a suite in several, repeats interleaved, and compares them with
the first; `bisect` searches released versions for the one where a metric
regressed; `run --with` runs one suite in one environment.
"""

from ckptbench.envs._bisect import BisectStep, bisect_versions
from ckptbench.envs._build import BuiltEnv, EnvBuildError, build_env, env_cache_dir
from ckptbench.envs._matrix import MatrixOutcome, MatrixSettings, run_matrix
from ckptbench.envs._run_with import run_with
from ckptbench.envs._spec import EnvSpec, parse_with, unique_labels

__all__ = [
    "BisectStep",
    "BuiltEnv",
    "EnvBuildError",
    "EnvSpec",
    "MatrixOutcome",
    "MatrixSettings",
    "bisect_versions",
    "build_env",
    "env_cache_dir",
    "parse_with",
    "run_matrix",
    "run_with",
    "unique_labels",
]
