"""The example suites ship in the package: listed, written out, and run by name from anywhere."""

from __future__ import annotations

import importlib.resources

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


def test_plan_takes_an_example_by_name_from_any_directory(tmp_path):
  done = run_cli("plan", "quickstart", cwd=tmp_path)
  assert done.returncode == 0, done.stderr
  assert done.stdout.startswith("quickstart: ocdbt vs non-ocdbt: ") and "SaveRestoreBenchmark(use_ocdbt=True)" in done.stdout
