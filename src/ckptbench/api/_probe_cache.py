"""The Orbax capability probe kept on disk, so that `ckptbench plan` needs neither Orbax nor JAX.

Probing imports orbax-checkpoint, and with it JAX: a second or more that `plan` would pay
for nothing else. The answer depends only on the installed orbax-checkpoint, so it is kept
in the cache directory (`$CKPTBENCH_CACHE_DIR`, else `~/.cache/ckptbench`) under a key made
of its version, where it is installed and its RECORD (the hash of every file its wheel
installed): another release, another environment or a reinstall gives another key.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import pathlib
from typing import Any


def probe_cache_path() -> pathlib.Path | None:
  """Where the probe of the installed orbax-checkpoint is kept; None when it is not installed."""
  try:
    dist = importlib.metadata.distribution("orbax-checkpoint")
  except importlib.metadata.PackageNotFoundError:
    return None
  identity = "\0".join([dist.version, str(dist.locate_file("")), dist.read_text("RECORD") or ""])
  base = os.environ.get("CKPTBENCH_CACHE_DIR") or os.path.join(
      os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ckptbench")  # fmt: skip
  return pathlib.Path(base) / "orbax-capabilities" / f"{hashlib.sha256(identity.encode()).hexdigest()[:20]}.json"


def read_probe(path: pathlib.Path | None) -> dict[str, Any] | None:
  """The kept probe, or None (none kept, or unreadable: then it is probed again)."""
  if path is None:
    return None
  try:
    data = json.loads(path.read_text())
  except (OSError, ValueError):
    return None
  return data if isinstance(data, dict) else None


def write_probe(path: pathlib.Path, data: dict[str, Any]) -> None:
  """Keeps `data` at `path`, atomically; a cache that cannot be written is no error (probed next time)."""
  try:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)
  except OSError:
    pass
