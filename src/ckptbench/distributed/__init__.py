"""Multi-process runs on JAX's own distributed runtime."""

from ckptbench.distributed._coordinator import Coordinator, LocalCoordinator
from ckptbench.distributed._init import DISTRIBUTED_MODES, DistributedTimeouts, initialize
from ckptbench.distributed._jax_coordinator import JaxCoordinator, make_coordinator
from ckptbench.distributed._launcher import LaunchOutcome, launch_local
from ckptbench.distributed._manifests import ClusterJob, jobset_manifest, render_manifest, slurm_script
from ckptbench.distributed._pathways import (
    check_colocated_python_supported,
    is_pathways_backend,
    pathways_load_context,
)

from ckptbench.distributed._manifests import ACCELERATORS, MANIFEST_KINDS

__all__ = [
    "ACCELERATORS",
    "MANIFEST_KINDS",
    "DISTRIBUTED_MODES",
    "ClusterJob",
    "Coordinator",
    "DistributedTimeouts",
    "JaxCoordinator",
    "LaunchOutcome",
    "LocalCoordinator",
    "check_colocated_python_supported",
    "initialize",
    "is_pathways_backend",
    "jobset_manifest",
    "launch_local",
    "make_coordinator",
    "pathways_load_context",
    "render_manifest",
    "slurm_script",
]

