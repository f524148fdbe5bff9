"""Orbax's `core.multihost` on ckptbench: the process index and a barrier, for torch's ranks when a
torch process group is set up (a module using `torch.distributed`), as Orbax's are, else JAX's processes."""

from __future__ import annotations

from typing import Any

import jax


def _torch_group() -> Any:
  """`torch.distributed` when a torch process group is set up, else None."""
  try:
    import torch.distributed as dist
  except ImportError:
    return None
  return dist if dist.is_available() and dist.is_initialized() else None


def get_process_index() -> int:
  """This process's index (torch's rank when a torch process group is set up)."""
  dist = _torch_group()
  return jax.process_index() if dist is None else dist.get_rank()


def get_process_count() -> int:
  """How many processes run the suite (torch's world size when a torch process group is set up)."""
  dist = _torch_group()
  return jax.process_count() if dist is None else dist.get_world_size()


def sync_global_processes(name: str) -> None:
  """Waits until every process reaches the barrier `name`."""
  dist = _torch_group()
  if dist is not None:
    dist.barrier()
  elif jax.process_count() > 1:
    from jax.experimental import multihost_utils

    multihost_utils.sync_global_devices(name)
