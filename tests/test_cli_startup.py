"""The command line answers without starting JAX when it does not need it (benchmarks/cli_latency.py times it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO


def _imported(*argv: str) -> set[str]:
  """The top-level packages `python -m ckptbench ARGV` imports (from `-X importtime`)."""
  done = subprocess.run(
      [sys.executable, "-X", "importtime", "-m", "ckptbench", *argv],
      env={**os.environ, "PYTHONPATH": str(REPO / "src")}, capture_output=True, text=True, timeout=120,
  )  # fmt: skip
  assert done.returncode == 0, done.stderr[-2000:]
  names = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
  return {name.split(".")[0] for name in names}


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ("run", "--help"), ("examples",)])
def test_version_help_and_examples_import_no_jax_nor_numpy(argv):
  imported = _imported(*argv)
  assert "ckptbench" in imported
  assert not imported & {"jax", "jaxlib", "orbax", "tensorstore", "numpy", "pandas", "pydantic"}, sorted(imported)
