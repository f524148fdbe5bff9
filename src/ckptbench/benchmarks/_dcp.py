"""torch.distributed.checkpoint (DCP) for `pytorch`: one rank per process, over gloo.

Under `ckptbench launch -n N` every process is one rank of the gloo group
`ckptbench.torch_process_group()` sets up. With several ranks each tensor is a
DTensor split along its first dimension (replicated when the rank count does
not divide it, as Orbax's PyTorch benchmark does), so DCP writes the shards of
every rank; alone, tensors stay plain. The writer takes DCP's knobs
(`thread_count`, `per_thread_copy_ahead`, `single_file_per_rank`,
`cache_staged_state_dict`).

Once torchax is imported (the `torchax` library ran earlier in the process), torch
sees its `jax` device as the accelerator: DCP's writer then saves without copy-ahead
(DCP's serial loader, the one it uses on a CPU-only machine) and says so in a note,
and ranks meet over a CPU all-reduce rather than `dist.barrier()`.
"""

from __future__ import annotations

import sys
from typing import Any

import ckptbench

_MIB = 1 << 20
BESIDE_TORCHAX_NOTE = (
    "dcp: torchax was imported in this process (it registers torch's privateuse1 device 'jax'), so DCP's"
    " default writer would call torch.jax.current_stream(), which torchax lacks; saved with"
    " per_thread_copy_ahead=0, the serial loader DCP uses on a CPU-only machine"
)


def beside_torchax() -> bool:
  """Whether torchax was imported in this process (torch then takes its `jax` device for the accelerator)."""
  return "torchax" in sys.modules


def barrier() -> None:
  """Every rank waits for the others: an all-reduce of a CPU tensor over gloo.

  Not `dist.barrier()`: it asks torch for the accelerator first, which fails once torchax has
  registered its device without the hooks torch needs ("Please register PrivateUse1HooksInterface").
  """
  import torch  # noqa: PLC0415
  import torch.distributed as dist  # noqa: PLC0415

  dist.all_reduce(torch.zeros(1))


def _rows(n: int, rank: int, world: int) -> tuple[int, int] | None:
  """The first-dimension rows of `rank`, or None when `world` does not divide `n` (replicated)."""
  if world == 1 or n % world:
    return None
  size = n // world
  return rank * size, (rank + 1) * size


def distribute(full: dict[str, Any], rank: int, world: int) -> dict[str, Any]:
  """Each full tensor as this rank's DTensor (split along dim 0), or as is when alone."""
  if world == 1:
    return full
  from torch.distributed.device_mesh import init_device_mesh  # noqa: PLC0415
  from torch.distributed.tensor import DTensor, Replicate, Shard  # noqa: PLC0415

  mesh = init_device_mesh("cpu", (world,))
  out = {}
  for name, tensor in full.items():
    rows = _rows(tensor.shape[0], rank, world) if tensor.dim() else None
    local = tensor if rows is None else tensor[rows[0] : rows[1]].clone()
    out[name] = DTensor.from_local(local, mesh, [Replicate() if rows is None else Shard(0)], run_check=False)
  return out


def local_part(tensor: Any) -> Any:
  """What this rank holds of a tensor or DTensor."""
  return tensor.to_local() if hasattr(tensor, "to_local") else tensor


def empty_like(state: dict[str, Any]) -> dict[str, Any]:
  """Tensors (DTensors) shaped and placed like `state`, to load into."""
  import torch  # noqa: PLC0415

  out = {}
  for name, value in state.items():
    if hasattr(value, "to_local"):
      from torch.distributed.tensor import DTensor  # noqa: PLC0415

      out[name] = DTensor.from_local(
          torch.empty_like(value.to_local()), value.device_mesh, value.placements, run_check=False
      )
    else:
      out[name] = torch.empty_like(value)
  return out


def writer(directory: str, options: Any) -> Any:
  """DCP's writer with the options' knobs (None keeps torch's default).

  A local directory gets the FileSystemWriter; a store reached through fsspec
  (gs://, s3://: gcsfs, s3fs) DCP's fsspec writer, which has every knob but
  cache_staged_state_dict.
  """
  import torch.distributed.checkpoint as dcp  # noqa: PLC0415

  knobs: dict[str, Any] = {}
  if options.save_thread_count is not None:
    knobs["thread_count"] = options.save_thread_count
  if options.save_per_thread_copy_ahead_mb is not None:
    knobs["per_thread_copy_ahead"] = options.save_per_thread_copy_ahead_mb * _MIB
  if beside_torchax():
    if knobs.get("per_thread_copy_ahead"):
      raise ckptbench.CkptbenchError(
          f"dcp: save_per_thread_copy_ahead_mb={options.save_per_thread_copy_ahead_mb} cannot apply in a process"
          " that imported torchax (DCP's copy-ahead loader calls torch.jax.current_stream(), which torchax lacks):"
          " set it to 0, or run the torchax library in a suite of its own"
      )
    knobs["per_thread_copy_ahead"] = 0
  if options.single_file_per_rank is not None:
    knobs["single_file_per_rank"] = options.single_file_per_rank
  if options.cache_staged_state_dict is not None:
    knobs["cache_staged_state_dict"] = options.cache_staged_state_dict
  if ckptbench.uses_fsspec(directory):
    from torch.distributed.checkpoint._fsspec_filesystem import FsspecWriter  # noqa: PLC0415

    knobs.pop("cache_staged_state_dict", None)
    return FsspecWriter(directory, **knobs)
  return dcp.FileSystemWriter(directory, **knobs)


def reader(directory: str) -> Any:
  """DCP's reader for a local directory, or its fsspec reader for a store reached through fsspec."""
  if ckptbench.uses_fsspec(directory):
    from torch.distributed.checkpoint._fsspec_filesystem import FsspecReader  # noqa: PLC0415

    return FsspecReader(directory)
  import torch.distributed.checkpoint as dcp  # noqa: PLC0415

  return dcp.FileSystemReader(directory)


def save_and_load(state: dict[str, Any], directory: str, options: Any, asynchronous: bool, metrics, context) -> dict:
  """Saves `state` with DCP (every rank), loads it back into a copy of its layout."""
  import torch.distributed.checkpoint as dcp  # noqa: PLC0415

  barrier()
  with metrics.measure("save"), context.trace("save"):
    if asynchronous:
      with metrics.measure("save_blocking"):
        pending = dcp.async_save(state, storage_writer=writer(directory, options))
      with metrics.measure("wait_until_finished"):
        pending.result()
    else:
      with metrics.measure("save_blocking"):
        dcp.save(state, storage_writer=writer(directory, options))
    barrier()
  loaded = empty_like(state)
  ckptbench.evict_for_load(directory, metrics, "load", options.cold_cache)
  with metrics.measure("load"), context.trace("load"):
    dcp.load(loaded, storage_reader=reader(directory))
  return loaded
