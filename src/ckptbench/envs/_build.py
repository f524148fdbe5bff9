"""Building isolated environments with uv, cached by the hash of their spec.

An environment is a virtual environment under the cache directory
(`$CKPTBENCH_ENV_CACHE`, else `~/.cache/ckptbench/envs`) named by
`EnvSpec.cache_key`: the requirements, the Python version and ckptbench's own
source tree (its path and pyproject.toml). ckptbench is installed into it
editable from that tree, so code changes need no rebuild while a change of
dependencies does, and two checkouts never run each other's code. A virtual
environment cannot be moved once built, so it is built in place and marked
complete last; an unmarked directory is a broken build and is built again.
"""

from __future__ import annotations

import dataclasses
import datetime
import fcntl
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys

import ckptbench
from ckptbench.envs._spec import EnvSpec
from ckptbench.errors import EXIT_BENCHMARK_FAILED, CkptbenchError

_COMPLETE = "ckptbench-env.json"
_LAST_LINES = 4
_BUILD_TIMEOUT_S = 1800


class EnvBuildError(CkptbenchError):
  """An environment could not be built; the message ends with the installer's last lines."""

  exit_code = EXIT_BENCHMARK_FAILED


@dataclasses.dataclass(frozen=True)
class BuiltEnv:
  spec: EnvSpec
  path: pathlib.Path
  reused: bool  # found complete in the cache


def last_lines(text: str, count: int = _LAST_LINES) -> str:
  """The last `count` non-empty lines of a tool's output, on one line."""
  lines = [line.strip() for line in text.splitlines() if line.strip()]
  return " | ".join(lines[-count:])


def env_cache_dir() -> pathlib.Path:
  return pathlib.Path(os.environ.get("CKPTBENCH_ENV_CACHE") or pathlib.Path.home() / ".cache/ckptbench/envs")


def project_root() -> pathlib.Path:
  """The source tree ckptbench runs from (installed into every environment).

  Raises:
    CkptbenchError: when ckptbench was not installed from a source tree.
  """
  root = pathlib.Path(ckptbench.__file__).resolve().parents[2]
  pyproject = root / "pyproject.toml"
  if not pyproject.is_file() or 'name = "ckptbench"' not in pyproject.read_text():
    raise CkptbenchError(
        "environments need ckptbench installed from its source tree (pip install -e .);"
        f" {root} holds no ckptbench pyproject.toml"
    )
  return root


def project_fingerprint(root: pathlib.Path) -> str:
  """The source tree's identity in cache keys: its path (the editable install points
  there) and its pyproject.toml (ckptbench's own dependencies)."""
  digest = hashlib.sha256(str(root.resolve()).encode() + b"\0" + (root / "pyproject.toml").read_bytes())
  return digest.hexdigest()[:16]


def isolated_environ() -> dict[str, str]:
  """The process environment for a command in a built environment: without PYTHONPATH,
  which could put another Orbax in front of the environment's own."""
  return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def uv_binary() -> str:
  try:
    from uv import find_uv_bin  # noqa: PLC0415
  except ImportError:
    found = shutil.which("uv")
    if found:
      return found
    raise CkptbenchError("environments are built with uv: pip install uv (or ckptbench[dev])") from None
  return find_uv_bin()


def build_env(spec: EnvSpec, cache_dir: pathlib.Path | None = None) -> BuiltEnv:
  """The environment of `spec`, from the cache or built now.

  Raises:
    EnvBuildError: when uv fails; the message holds its last lines.
  """
  root = project_root()
  cache_dir = cache_dir or env_cache_dir()
  cache_dir.mkdir(parents=True, exist_ok=True)
  path = cache_dir / spec.cache_key(project_fingerprint(root))
  with open(cache_dir / f"{path.name}.lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)  # two matrices building the same spec wait for each other
    if (path / _COMPLETE).is_file():
      return BuiltEnv(spec, path, reused=True)
    shutil.rmtree(path, ignore_errors=True)  # an earlier build that did not finish
    uv = uv_binary()
    try:
      _uv(spec, uv, "venv", "--quiet", "--python", sys.executable, str(path))
      _uv(spec, uv, "pip", "install", "--quiet", "--python", str(path / "bin" / "python"),
          "-e", str(root), *(str(r) for r in spec.requirements))  # fmt: skip
    except EnvBuildError:
      shutil.rmtree(path, ignore_errors=True)
      raise
    record = {
        "spec": spec.text,
        "requirements": [str(r) for r in spec.requirements],
        "source": str(root),
        "built_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    (path / _COMPLETE).write_text(json.dumps(record, indent=1))
  return BuiltEnv(spec, path, reused=False)


def _uv(spec: EnvSpec, uv: str, *args: str) -> None:
  which = f"environment {spec.label} ({spec.text})"
  try:
    done = subprocess.run((uv, *args), capture_output=True, text=True, timeout=_BUILD_TIMEOUT_S)
  except subprocess.TimeoutExpired:
    raise EnvBuildError(f"{which}: uv {args[0]} took over {_BUILD_TIMEOUT_S} s") from None
  if done.returncode != 0:
    raise EnvBuildError(f"{which} failed to build: {last_lines(done.stderr or done.stdout)}")
