"""Multi-process runs on JAX's own distributed runtime.

Names load on first use: the launcher, the cluster manifests and the flag
choices do not import JAX; initializing and coordinating do.
"""

from ckptbench._lazy import lazy_getattr

_EXPORTS = {
    "ACCELERATORS": "ckptbench.distributed._choices",
    "ClusterJob": "ckptbench.distributed._manifests",
    "Coordinator": "ckptbench.distributed._coordinator",
    "DISTRIBUTED_MODES": "ckptbench.distributed._choices",
    "DistributedTimeouts": "ckptbench.distributed._init",
    "JaxCoordinator": "ckptbench.distributed._jax_coordinator",
    "LaunchOutcome": "ckptbench.distributed._launcher",
    "LocalCoordinator": "ckptbench.distributed._coordinator",
    "MANIFEST_KINDS": "ckptbench.distributed._choices",
    "check_colocated_python_supported": "ckptbench.distributed._pathways",
    "initialize": "ckptbench.distributed._init",
    "is_pathways_backend": "ckptbench.distributed._pathways",
    "jobset_manifest": "ckptbench.distributed._manifests",
    "launch_local": "ckptbench.distributed._launcher",
    "make_coordinator": "ckptbench.distributed._jax_coordinator",
    "pathways_load_context": "ckptbench.distributed._pathways",
    "render_manifest": "ckptbench.distributed._manifests",
    "slurm_script": "ckptbench.distributed._manifests",
    "torch_process_group": "ckptbench.distributed._torch",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)

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
    "torch_process_group",
]

