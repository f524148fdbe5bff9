"""A `simdevice:` suite's processes and devices, checked before and after JAX starts.

The block fixes both: `num_processes` processes (`ckptbench run` starts them,
cli/_run.py) holding the topology's chips as simulated CPU devices between them.
Anything that would run it otherwise (one process from Python, `--devices`, a
device count in XLA_FLAGS, a launch with another process count) is an error, so a
run never measures a cluster other than the one its file names.
"""

from __future__ import annotations

import os

from ckptbench.config import SimDeviceConfig, emulated_backend
from ckptbench.errors import CkptbenchError


def check_cluster_before_start(simdevice: SimDeviceConfig | None, devices: int | None) -> None:
  """Refuses what would run the block on another cluster, before JAX starts.

  Args:
    simdevice: the suite's block (None: nothing to check).
    devices: the run's `--devices` (None: not given).
  """
  if simdevice is None:
    return
  if devices is not None and devices != simdevice.num_devices:
    raise CkptbenchError(
        f"--devices {devices} contradicts the suite's simdevice.topology ({simdevice.num_devices} chips);"
        " leave --devices out for a simdevice suite")
  processes = int(os.environ.get("JAX_NUM_PROCESSES", "1") or 1)
  if processes == simdevice.num_processes:
    return
  if processes == 1:
    raise CkptbenchError(
        f"simdevice.num_processes is {simdevice.num_processes}: the suite runs as {simdevice.num_processes}"
        " processes, which `ckptbench run FILE -o OUT` starts itself (or `ckptbench launch -n"
        f" {simdevice.num_processes}`); this process was started alone")
  raise CkptbenchError(
      f"simdevice.num_processes is {simdevice.num_processes}, but this job has {processes} processes"
      " (JAX_NUM_PROCESSES)")


def check_cluster_started(simdevice: SimDeviceConfig | None) -> None:
  """Refuses a started JAX whose device count is not the topology's (a count set in XLA_FLAGS)."""
  if simdevice is None:
    return
  import jax  # noqa: PLC0415  (the backend is up: the suite's generators are loaded)

  if jax.device_count() != simdevice.num_devices:
    raise CkptbenchError(
        f"simdevice.topology has {simdevice.num_devices} chips but JAX has {jax.device_count()} devices"
        f" ({jax.local_device_count()} in this process; XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}):"
        " remove --xla_force_host_platform_device_count from XLA_FLAGS")


def run_backend_name(simdevice: SimDeviceConfig | None) -> str:
  """The backend this run records (manifest.json, baselines) and is compared by: the cluster a
  `simdevice:` block emulates, else JAX's backend."""
  if simdevice is not None:
    return emulated_backend(simdevice)
  import jax  # noqa: PLC0415  (the backend is up: the suite is running)

  return jax.default_backend()
