"""Multi-process runs on JAX's own distributed runtime.

Names load on first use: the launcher, the cluster manifests, SLURM's client
and the flag choices do not import JAX; initializing and coordinating do.
"""

from typing import TYPE_CHECKING

from ckptbench._lazy import lazy_face

if TYPE_CHECKING:  # the face, each name once: lazy_face reads it, type checkers and IDEs resolve it
  from ckptbench.distributed._choices import ACCELERATORS, DISTRIBUTED_MODES, MANIFEST_KINDS, SUBMIT_KINDS
  from ckptbench.distributed._manifests import ClusterJob, jobset_manifest, render_manifest, slurm_script
  from ckptbench.distributed._coordinator import Coordinator, LocalCoordinator
  from ckptbench.distributed._init import DistributedTimeouts, initialize, leave
  from ckptbench.distributed._jax_coordinator import JaxCoordinator, make_coordinator
  from ckptbench.distributed._launcher import LaunchOutcome, launch_local
  from ckptbench.distributed._slurm import SlurmJob, cancel_job, slurm_job_from_env
  from ckptbench.distributed._slurm_submit import SlurmOutcome, Submitted, follow_job, submit_job
  from ckptbench.distributed._pathways import (
      check_colocated_python_supported,
      is_pathways_backend,
      pathways_load_context,
  )
  from ckptbench.distributed._torch import torch_process_group

__getattr__, __dir__ = lazy_face(globals())
