"""Test set-up: 8 simulated CPU devices for in-process JAX, set before JAX starts."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import pytest  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent


def run_cli(*args: str, cwd: pathlib.Path | None = None, env: dict | None = None, timeout: float = 240):
  """Runs `python -m ckptbench ARGS` in a fresh process; returns the CompletedProcess."""
  full_env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  full_env["PYTHONPATH"] = os.pathsep.join(
      [str(REPO / "src"), str(REPO / "tests")] + [p for p in [os.environ.get("PYTHONPATH")] if p]
  )
  full_env.update(env or {})
  return subprocess.run(
      [sys.executable, "-m", "ckptbench", *args],
      cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout,
  )  # fmt: skip


@pytest.fixture
def cli():
  return run_cli


def wait_for_views(out: pathlib.Path, timeout_s: float = 180) -> bool:
  """Waits until a detached views process has logged that it is done (OUT/views.log); True if it did."""
  import time  # noqa: PLC0415

  from ckptbench.views import VIEWS_DONE  # noqa: PLC0415

  deadline = time.monotonic() + timeout_s
  while time.monotonic() < deadline:
    log = out / "views.log"
    if log.exists() and VIEWS_DONE in log.read_text(errors="replace"):
      return True
    time.sleep(0.2)
  return False
