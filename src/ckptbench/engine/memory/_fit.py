"""Refusing a suite whose checkpoint data would not fit in memory, before building any.

The estimate is per process: the local shards of the largest checkpoint x mesh
pair (the runner keeps one such pair at a time), times a factor for the copies
a save/restore round trip holds at once. It is compared with the memory the
machine (or its cgroup) has available, shared by the processes on this host.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
import socket

import psutil

from ckptbench.engine._sizes import checkpoint_bytes, format_bytes
from ckptbench.engine._sweep import Plan, PlannedBenchmark
from ckptbench.distributed import Coordinator

# On the CPU backend, device buffers are host memory: the data, the restored
# copy and Orbax's host staging copy during the save are all in RAM at once.
CPU_FACTOR = 3
# On accelerators, the host holds the staging copies of the save and the load.
ACCELERATOR_HOST_FACTOR = 1
# On accelerators, each device holds its shards and the restored copy.
ACCELERATOR_DEVICE_FACTOR = 2
_CGROUP = pathlib.Path("/sys/fs/cgroup")


@dataclasses.dataclass(frozen=True)
class MemoryEstimate:
  """The bytes one process of a benchmark holds, and how they were counted."""

  benchmark: str
  local_bytes: int  # the local shards of the checkpoint data
  local_devices: int
  per_device_bytes: int


def estimate(bench: PlannedBenchmark, process_count: int) -> MemoryEstimate | None:
  """Local shard bytes of a benchmark's synthetic data; None for existing checkpoints."""
  sizes = checkpoint_bytes(bench)
  if sizes is None:
    return None
  _, per_device = sizes
  devices = 1 if bench.mesh is None else max(1, math.ceil(bench.mesh.num_devices / max(process_count, 1)))
  return MemoryEstimate(bench.name, per_device * devices, devices, per_device)


def available_host_memory() -> tuple[int, str]:
  """(bytes available, where the limit comes from): the machine's, or a lower cgroup v2 limit."""
  available, source = psutil.virtual_memory().available, "available memory"
  try:
    limit = (_CGROUP / "memory.max").read_text().strip()
    if limit != "max":
      used = int((_CGROUP / "memory.current").read_text())
      if int(limit) - used < available:
        available, source = max(0, int(limit) - used), f"cgroup memory.max {format_bytes(int(limit))}"
  except (OSError, ValueError):
    pass
  return available, source


def _device_limit() -> int | None:
  """The memory of one accelerator device, or None on CPU (or when unknown)."""
  import jax  # noqa: PLC0415

  device = jax.local_devices()[0]
  if device.platform == "cpu":
    return None
  stats = device.memory_stats() or {}
  return stats.get("bytes_limit")


def memory_problem(plan: Plan, coordinator: Coordinator, skip: str = "--no_memory_check") -> str | None:
  """Why the suite's data would not fit in memory on this host, or None when it fits.

  A collective: every process must call it (processes on one host share its memory).
  """
  hosts = coordinator.allgather_json(socket.gethostname())
  on_this_host = max(1, hosts.count(socket.gethostname()))
  estimates = [e for e in (estimate(b, coordinator.process_count) for b in plan.benchmarks) if e]
  if not estimates:
    return None
  device_limit = _device_limit()
  if device_limit is not None:
    worst = max(estimates, key=lambda e: e.per_device_bytes)
    need = worst.per_device_bytes * ACCELERATOR_DEVICE_FACTOR
    if need > device_limit:
      return (
          f"benchmark {worst.benchmark} needs about {format_bytes(need)} per device"
          f" ({format_bytes(worst.per_device_bytes)} of shards x {ACCELERATOR_DEVICE_FACTOR} for the"
          f" restored copy) but a device has {format_bytes(device_limit)}; use smaller shapes or"
          f" shard over more devices, or pass {skip}"
      )
  factor = CPU_FACTOR if device_limit is None else ACCELERATOR_HOST_FACTOR
  worst = max(estimates, key=lambda e: e.local_bytes)
  need = worst.local_bytes * factor * on_this_host
  available, source = available_host_memory()
  if need <= available:
    return None
  processes = f" x {on_this_host} processes on this host" if on_this_host > 1 else ""
  return (
      f"benchmark {worst.benchmark} needs about {format_bytes(need)} of memory"
      f" ({format_bytes(worst.local_bytes)} of local shards on {worst.local_devices} device(s)"
      f" x {factor} for the restored copy and save buffers{processes}) but the limit is"
      f" {format_bytes(available)} ({source}); use smaller shapes or more processes, or pass"
      f" {skip}"
  )
