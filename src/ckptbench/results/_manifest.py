"""manifest.json: what ran, where, with which versions."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import socket
import subprocess
import sys
from typing import Any

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
      done = subprocess.run(("git", *args), cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
      return None
    return done.stdout.strip() if done.returncode == 0 else None

  sha = git("rev-parse", "HEAD")
  status = git("status", "--porcelain", "--untracked-files=no") if sha else None
  return {"sha": sha, "dirty": bool(status) if status is not None else None}


def now_iso() -> str:
  return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def build_manifest(*, suite_raw: dict[str, Any], suite_file: str, argv: list[str]) -> dict[str, Any]:
  import jax  # noqa: PLC0415  (the backend is up by the time a manifest is written)

  devices = jax.devices()
  return {
      "schema_version": 1,
      "versions": package_versions(),
      "git": git_state(),
      "hostname": socket.gethostname(),
      "platform": platform.platform(),
      "cpu_count": os.cpu_count(),
      "process_count": jax.process_count(),
      "device_count": len(devices),
      "local_device_count": jax.local_device_count(),
      "device_kind": devices[0].device_kind if devices else None,
      "backend": jax.default_backend(),
      "xla_flags": os.environ.get("XLA_FLAGS", ""),
      "argv": argv or sys.argv,
      "suite_file": suite_file,
      "config": suite_raw,
      "started_at": now_iso(),
      "ended_at": None,
  }
