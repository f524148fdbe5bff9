"""The command line answers without starting JAX when it does not need it (measurements/cli_latency.py times it)."""

from __future__ import annotations

import json
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


@pytest.mark.slow
@pytest.mark.parametrize("argv", [("--version",), ("--help",), ("run", "--help"), ("examples",)])
def test_version_help_and_examples_import_no_jax_nor_numpy(argv):
  imported = _imported(*argv)
  assert "ckptbench" in imported
  assert not imported & {"jax", "jaxlib", "orbax", "tensorstore", "numpy", "pandas", "pydantic"}, sorted(imported)


@pytest.mark.slow
def test_plan_reads_the_kept_orbax_probe_and_imports_no_jax(tmp_path, monkeypatch):
  monkeypatch.setenv("CKPTBENCH_CACHE_DIR", str(tmp_path / "cache"))
  first = _imported("plan", "quickstart")  # probes Orbax (and so imports JAX) once, and keeps the answer
  assert "orbax" in first and list((tmp_path / "cache" / "orbax-capabilities").glob("*.json"))
  imported = _imported("plan", "quickstart")
  # Sizes come from the dtype table; the disk estimate needs neither the stores nor the collectors.
  heavy = {"jax", "jaxlib", "orbax", "tensorstore", "pandas", "scipy", "numpy", "ml_dtypes", "psutil", "asyncio"}
  assert not imported & heavy, sorted(imported)


def test_the_kept_probe_is_the_probe(tmp_path, monkeypatch):
  from ckptbench.api._orbax_probe import OrbaxCapabilities, _probe

  live = _probe()
  assert OrbaxCapabilities.from_json(json.loads(json.dumps(live.to_json()))) == live


@pytest.mark.slow
def test_ckptbench_run_is_the_function_also_after_the_engine_is_imported():
  code = "import inspect, ckptbench.engine, ckptbench; assert inspect.isfunction(ckptbench.run), ckptbench.run"
  done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO / "src")},
                        capture_output=True, text=True, timeout=120)  # fmt: skip
  assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_version_answers_before_the_parser_is_built():
  imported = _imported("--version")
  assert not imported & {"argparse", "logging"}, sorted(imported)
  done = subprocess.run([sys.executable, "-m", "ckptbench", "--version"], env={**os.environ, "PYTHONPATH": str(REPO / "src")},
                        capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
  assert done.stdout.startswith("ckptbench ") and done.stderr == ""


def _loaded(prefix: str, *argv: str) -> set[str]:
  """The modules under `prefix` that `ckptbench ARGV` loads (run in a fresh process, which may exit with help)."""
  code = (f"import sys\nfrom ckptbench.cli import main\ntry: main({list(argv)!r})\nexcept SystemExit: pass\n"
          f"print(*[m for m in sys.modules if m.startswith({prefix!r})], file=sys.stderr)")  # fmt: skip
  done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO / "src")},
                        capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
  return set(done.stderr.split())


@pytest.mark.slow
def test_a_subcommand_loads_only_its_own_parser_and_help_lists_them_all():
  assert _loaded("ckptbench.cli._", "-v", "plan", "--help") == {
      "ckptbench.cli._main", "ckptbench.cli._parser", "ckptbench.cli._plan",
      "ckptbench.cli._run", "ckptbench.cli._compare", "ckptbench.cli._examples", "ckptbench.cli._units",
  }  # fmt: skip
  assert "ckptbench.cli._scale" in _loaded("ckptbench.cli._", "--help")


@pytest.mark.slow
def test_plan_loads_the_generator_base_but_none_of_the_metrics():
  # _builtin: the catalogue's record, which a built-in's class declares; _levels names the data and the
  # reference, _judged (with the tags it reads) the metrics a run judges.
  assert _loaded("ckptbench.api", "plan", "quickstart") == {
      "ckptbench.api", "ckptbench.api._options", "ckptbench.api._generator", "ckptbench.api._builtin",
      "ckptbench.api._orbax_probe", "ckptbench.api._probe_cache", "ckptbench.api._levels", "ckptbench.api._judged",
      "ckptbench.api._tags",
  }  # fmt: skip
