"""torch.distributed's process group over ckptbench's processes (gloo, so it works on CPU)."""

from __future__ import annotations

import os
import socket


def torch_process_group() -> tuple[int, int]:
  """(rank, world size) of a gloo process group spanning the JAX processes; created on first use.

  Alone, the group needs no network. Under `ckptbench launch -n N` process 0
  picks a free port on the coordinator's host and hands it to the others
  through JAX's collectives, then every process joins as rank
  `jax.process_index()`.

  Example:
    >>> rank, world = ckptbench.torch_process_group()
  """
  import jax
  import numpy as np
  import torch.distributed as dist

  if not dist.is_initialized():
    rank, world = jax.process_index(), jax.process_count()
    if world == 1:
      dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    else:
      from jax.experimental import multihost_utils

      host = os.environ.get("JAX_COORDINATOR_ADDRESS", "127.0.0.1:0").rpartition(":")[0] or "127.0.0.1"
      port = 0
      if rank == 0:
        with socket.socket() as s:
          s.bind((host, 0))
          port = s.getsockname()[1]
      port = int(multihost_utils.broadcast_one_to_all(np.int32(port)))
      dist.init_process_group("gloo", init_method=f"tcp://{host}:{port}", rank=rank, world_size=world)
  return dist.get_rank(), dist.get_world_size()
