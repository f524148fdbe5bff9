"""Orbax's `core.multihost` on ckptbench: the process index and a barrier.

With a torch process group set up (a module using `torch.distributed`), both
answer for torch's ranks, as Orbax's do; otherwise for JAX's processes.
"""

from __future__ import annotations

import jax


def _torch_group_ready() -> bool:
  try:
    import torch.distributed as dist
  except ImportError:
    return False
  return dist.is_available() and dist.is_initialized()


def get_process_index() -> int:
  """This process's index (torch's rank when a torch process group is set up)."""
  if _torch_group_ready():
    import torch.distributed as dist

    return dist.get_rank()
  return jax.process_index()


def get_process_count() -> int:
  """How many processes run the suite (torch's world size when a torch process group is set up)."""
  if _torch_group_ready():
    import torch.distributed as dist

    return dist.get_world_size()
  return jax.process_count()


def sync_global_processes(name: str) -> None:
  """Waits until every process reaches the barrier `name`."""
  if _torch_group_ready():
    import torch.distributed as dist

    dist.barrier()
    return
  if jax.process_count() > 1:
    from jax.experimental import multihost_utils

    multihost_utils.sync_global_devices(name)
