"""manifest.json: what ran, where, with which versions."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import socket
import subprocess
import sys
from typing import Any, Mapping

from ckptbench.distributed import slurm_job_from_env

# torch and torchax: the PyTorch built-ins' figures depend on them (None where not installed).
_PACKAGES = ("jax", "jaxlib", "orbax-checkpoint", "tensorstore", "numpy", "torch", "torchax", "ckptbench")


def package_versions() -> dict[str, str | None]:
  versions: dict[str, str | None] = {"python": platform.python_version()}
  for name in _PACKAGES:
    try:
      versions[name] = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
      versions[name] = None
  return versions


def git_state(cwd: str | None = None) -> dict[str, Any]:
  """The sha and dirty flag of the git work tree at `cwd` (None outside a repository)."""
  def git(*args: str) -> str | None:
    try:
      out = subprocess.check_output(["git", *args], cwd=cwd, stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):  # no git, not a work tree, or hung
      return None
    return out.decode("utf-8", "replace").strip()

  sha = git("rev-parse", "HEAD")
  status = git("status", "--porcelain", "--untracked-files=no") if sha else None
  return {"sha": sha, "dirty": bool(status) if status is not None else None}


def machine() -> dict[str, Any]:
  """What identifies the hardware a run had, beyond its name (a history's series never mix two)."""
  import psutil  # noqa: PLC0415

  model = None
  try:
    with open("/proc/cpuinfo", encoding="utf-8") as f:
      model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
  except OSError:
    pass
  return {"cpu_model": model or platform.processor() or None, "arch": platform.machine(),
          "memory_bytes": psutil.virtual_memory().total}  # fmt: skip


def now_iso() -> str:
  return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def run_backend(manifest: Mapping[str, Any]) -> str | None:
  """The backend a run's manifest records: JAX's ("cpu", "tpu", "gpu"), or what a `simdevice:`
  suite emulated ("cpu (emulating tpu v6e 2x2x1, 2 processes)"); None for a manifest without one.

  Baselines and history entries carry it, and timings of different backends are never compared.
  """
  backend = manifest.get("backend")
  return str(backend) if backend else None


def run_environment() -> dict[str, Any]:
  """What a run's manifest records of the code and machine it ran on: package versions, git,
  host, JAX's processes, devices and backend, XLA_FLAGS."""
  import jax  # noqa: PLC0415  (the backend is up by the time a manifest is written)

  devices = jax.devices()
  return {
      "versions": package_versions(),
      "git": git_state(),
      "hostname": socket.gethostname(),
      "platform": platform.platform(),
      "cpu_count": os.cpu_count(),
      "machine": machine(),
      "process_count": jax.process_count(),
      "device_count": len(devices),
      "local_device_count": jax.local_device_count(),
      "device_kind": devices[0].device_kind if devices else None,
      "backend": jax.default_backend(),
      "xla_flags": os.environ.get("XLA_FLAGS", ""),
  }


def build_manifest(
    *, suite_raw: dict[str, Any], suite_file: str, argv: list[str], backend: str | None = None
) -> dict[str, Any]:
  """The run's manifest; `backend` names what the run emulated (None: JAX's own backend)."""
  environment = run_environment()
  return {
      "schema_version": 1,
      **environment,
      "backend": backend or environment["backend"],
      "argv": argv or sys.argv,
      "cluster_job": slurm_job_from_env(os.environ),
      "suite_file": suite_file,
      "config": suite_raw,
      "started_at": now_iso(),
      "ended_at": None,
  }
