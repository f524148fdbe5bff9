"""`ckptbench run SUITE --with REQUIREMENTS`: the same run, inside an isolated environment."""

from __future__ import annotations

import subprocess

from ckptbench.envs._build import build_env, isolated_environ
from ckptbench.envs._index import check_released
from ckptbench.envs._spec import parse_with


def without_with(argv: list[str]) -> list[str]:
  """`argv` less its `--with VALUE` / `--with=VALUE`."""
  out, skip = [], False
  for arg in argv:
    if skip:
      skip = False
    elif arg == "--with":
      skip = True
    elif not arg.startswith("--with="):
      out.append(arg)
  return out


def run_with(with_text: str, argv: list[str]) -> int:
  """Builds (or reuses) the environment of `with_text` and runs `ckptbench argv` in it.

  Raises:
    CkptbenchError: an unknown package or version (exit 2); EnvBuildError when uv fails.
  """
  spec = parse_with(with_text)
  for requirement in spec.requirements:
    check_released(requirement)
  env = build_env(spec)
  print(f"environment {spec.label}: {'cached' if env.reused else 'built'} ({env.path})", flush=True)
  return subprocess.run([str(env.path / "bin" / "ckptbench"), *without_with(argv)], env=isolated_environ()).returncode
