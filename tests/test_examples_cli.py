"""The example suites ship in the package: listed, written out, and run by name from anywhere."""

from __future__ import annotations

import importlib.resources
import json
import os
import pathlib
import subprocess
import sys
import sysconfig

import pytest

from ckptbench.cli._examples import example_names, example_text, suite_file
from ckptbench.cli._main import main
from ckptbench.errors import CkptbenchError
from conftest import REPO, run_cli


def test_the_examples_are_package_data_and_the_repository_points_at_them():
  shipped = importlib.resources.files("ckptbench") / "examples"
  names = example_names()
  assert "quickstart" in names and len(names) >= 20
  assert sorted(p.name for p in (REPO / "examples").iterdir()) == sorted(f"{n}.yaml" for n in names)
  assert (REPO / "examples").resolve() == (REPO / "src" / "ckptbench" / "examples")  # one copy
  assert (shipped / "quickstart.yaml").read_text() == (REPO / "examples" / "quickstart.yaml").read_text()


def test_examples_lists_them_and_writes_one_out(tmp_path, capsys):
  assert main(["examples"]) == 0
  listing = capsys.readouterr().out
  assert "quickstart" in listing and "quickstart: ocdbt vs non-ocdbt" in listing
  target = tmp_path / "qs.yaml"
  assert main(["examples", "quickstart", "-o", str(target)]) == 0
  assert target.read_text() == example_text("quickstart")
  assert f"ckptbench run {target}" in capsys.readouterr().out
  assert main(["examples", "quickstart", "-o", str(target)]) == 2  # never replaced silently
  assert "exists; pass --overwrite" in capsys.readouterr().err


def test_an_unknown_example_is_one_short_line_with_the_close_names():
  with pytest.raises(CkptbenchError) as refused:
    example_text("quikstart")
  assert str(refused.value) == "no example suite named 'quikstart'; did you mean quickstart?"


def test_a_suite_is_a_file_first_and_an_example_name_second(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  assert suite_file("quickstart") == str(importlib.resources.files("ckptbench") / "examples" / "quickstart.yaml")
  (tmp_path / "quickstart").write_text("suite_name: mine\n")
  assert suite_file("quickstart") == "quickstart"  # a file of that name wins
  assert suite_file("missing.yaml") == "missing.yaml"


@pytest.mark.slow
def test_plan_takes_an_example_by_name_from_any_directory(tmp_path):
  done = run_cli("plan", "quickstart", cwd=tmp_path)
  assert done.returncode == 0, done.stderr
  assert done.stdout.startswith("quickstart: ocdbt vs non-ocdbt: ") and "SaveRestoreBenchmark(use_ocdbt=True)" in done.stdout


@pytest.mark.slow
def test_a_built_wheel_installs_and_gives_a_first_result_with_two_commands(tmp_path):
  """The wheel as a user gets it: installed into a fresh environment (its dependencies taken from this
  one's site-packages, not from the repository), then `ckptbench examples` and `ckptbench run` from an
  empty directory."""
  wheels = tmp_path / "wheels"
  built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                          str(wheels), str(REPO)], capture_output=True, text=True, timeout=300)  # fmt: skip
  assert built.returncode == 0, built.stderr
  (wheel,) = wheels.glob("ckptbench-*.whl")
  env_dir = tmp_path / "fresh"
  subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
  python = env_dir / "bin" / "python"
  site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                        check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
  # The dependencies, as a plain path: the editable install's own .pth there is not processed.
  pathlib.Path(site, "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
  # Without PYTHONPATH here too: a source tree on it (PYTHONPATH=src) shows the ckptbench.egg-info that the
  # wheel's build leaves in src/, and pip would call the wheel installed already and install nothing.
  environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "XLA_FLAGS")}
  installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                              str(wheel)], env=environ, capture_output=True, text=True, timeout=300)  # fmt: skip
  assert installed.returncode == 0, installed.stderr
  home = tmp_path / "home"
  home.mkdir()
  where = subprocess.run([str(python), "-c", "import ckptbench; print(ckptbench.__file__)"], cwd=home, env=environ,
                         check=True, capture_output=True, text=True).stdout  # fmt: skip
  assert where.startswith(site), where  # the wheel's copy, not the repository's
  cli = env_dir / "bin" / "ckptbench"
  written = subprocess.run([str(cli), "examples", "quickstart", "-o", "qs.yaml"], cwd=home, env=environ,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
  assert written.returncode == 0, written.stderr
  suite = home / "qs.yaml"
  text = suite.read_text().replace("shape: [8192, 8192]", "shape: [256, 256]").replace("time_budget_s: 90", "time_budget_s: 5")
  assert "[256, 256]" in text and "time_budget_s: 5" in text
  suite.write_text(text)
  run = subprocess.run([str(cli), "run", "qs.yaml", "-o", "out", "--no_progress"], cwd=home, env=environ,
                       capture_output=True, text=True, timeout=600)  # fmt: skip
  assert run.returncode == 0, run.stdout + run.stderr
  summary = json.loads((home / "out" / "summary.json").read_text())
  assert len(summary["benchmarks"]) == 2 and summary["verdicts"]
  assert (home / "out" / "report.html").is_file()


@pytest.mark.slow
def test_an_example_that_loads_a_fixture_writes_it_on_its_first_run_and_reuses_it(tmp_path):
  """`ckptbench run orbax_load -o OUT` with no `ckptbench fixture` step: the fixture written once, in one
  line, reused by the next run, and written again when the suite asks for other data."""
  fixture = tmp_path / "fixture"
  suite = tmp_path / "orbax_load.yaml"
  suite.write_text(example_text("orbax_load").replace("/tmp/ckptbench-orbax-load", str(fixture)))
  quick = ("--no_views", "--no_probe", "--host_memory", "off", "--set", "num_repeats=1")
  # A fifth of the example's data (its own runs as shipped in tests/test_example_walk.py): the fixture's
  # life here does not depend on its size.
  small = ("--set", "checkpoint_config.scale=0.0002")
  first = run_cli("run", str(suite), "-o", str(tmp_path / "first"), *quick, *small)
  assert first.returncode == 0, first.stdout + first.stderr
  wrote = [line for line in first.stdout.splitlines() if line.startswith("fixture: ")]
  assert len(wrote) == 1 and f"to {fixture}/checkpoint" in wrote[0] and "later runs reuse it" in wrote[0]
  assert "preset=llama-3.1-8b@0.0002" in wrote[0]
  assert (fixture / "checkpoint").is_dir() and (fixture / "sharding.json").exists()
  again = run_cli("run", str(suite), "-o", str(tmp_path / "again"), *quick, *small)
  assert again.returncode == 0 and "fixture: " not in again.stdout, again.stdout + again.stderr
  other = run_cli("run", str(suite), "-o", str(tmp_path / "other"), *quick, "--set", "checkpoint_config.scale=0.0005")
  assert other.returncode == 0, other.stdout + other.stderr
  assert "fixture: wrote preset=llama-3.1-8b@0.0005" in other.stdout and "other data than was there" in other.stdout
