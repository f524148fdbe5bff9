"""Flags are taken exactly as written: no prefixes, both spellings, one-line errors naming the closest flag."""

from __future__ import annotations

import pytest

from ckptbench.cli._launch import split_run_args
from ckptbench.cli._main import build_parser
from conftest import run_cli

pytestmark = pytest.mark.host_memory("inline", reason=(
    "these tests check what each run flag changes; tests/test_cli.py runs the command in its default "
    "mode"
))


def _refused(capsys, *argv: str) -> str:
  with pytest.raises(SystemExit) as stop:
    build_parser().parse_args(list(argv))
  assert stop.value.code == 2
  err = capsys.readouterr().err
  assert err.count("\n") == 1, err  # one line, no usage block
  return err


@pytest.mark.parametrize(
    ("given", "meant"),
    [("--keep", "--keep_checkpoints"), ("--device", "--devices"), ("--no-prog", "--no_progress"),
     ("--output_dir", "--output_directory")],
)  # fmt: skip
def test_a_prefix_of_a_run_flag_is_refused_naming_the_flag(capsys, given, meant):
  err = _refused(capsys, "run", "s.yaml", "-o", "out", given, "1")
  assert err == f"ckptbench run: error: unknown flag {given}; did you mean {meant}?\n"


def test_every_subcommand_refuses_prefixes(capsys):
  assert "did you mean --config_file?" in _refused(capsys, "plan", "--config", "s.yaml")
  assert "did you mean --views_from?" in _refused(capsys, "report", "out", "--views")
  assert "did you mean --num_processes?" in _refused(capsys, "launch", "--num", "2", "s.yaml")
  assert "did you mean --verbose?" in _refused(capsys, "--verb", "run")


def test_an_unknown_flag_with_nothing_close_points_to_help(capsys):
  err = _refused(capsys, "run", "s.yaml", "--zzzzzz")
  assert err == "ckptbench run: error: unknown flag --zzzzzz; see ckptbench run --help\n"


def test_snake_and_kebab_spellings_are_the_same_flag():
  snake = build_parser().parse_args(
      ["run", "s.yaml", "--output_directory=o", "--checkpoint_root", "r", "--no_views", "--skip_memory_check",
       "--baseline_label", "2"])  # fmt: skip
  kebab = build_parser().parse_args(
      ["run", "s.yaml", "--output-directory=o", "--checkpoint-root", "r", "--no-views", "--skip-memory-check",
       "--baseline-label", "2"])  # fmt: skip
  assert vars(snake) == vars(kebab)
  assert (snake.output_directory, snake.checkpoint_root, snake.views, snake.baseline_label) == ("o", "r", False, "2")


def test_launch_takes_its_flags_in_either_spelling_and_passes_the_rest_on_unchanged():
  args = build_parser().parse_args(
      ["launch", "-n", "2", "s.yaml", "--output-directory", "o", "--no-views", "--", "--devices-per-process"])  # fmt: skip
  args = split_run_args(args)
  assert args.out == "o"
  assert args.run_args == ["--no-views", "--devices-per-process"]  # after `--`: for `ckptbench run`


def test_help_shows_one_spelling_of_each_flag():
  text = build_parser()._subparsers._group_actions[0].choices["run"].format_help()
  assert "--output_directory" in text and "--no_views" in text
  assert "--output-directory" not in text and "--no-views" not in text


@pytest.mark.slow
def test_the_cli_refuses_a_prefix_before_running_anything(tmp_path):
  done = run_cli("run", "missing.yaml", "-o", str(tmp_path / "out"), "--keep", cwd=tmp_path)
  assert done.returncode == 2
  assert done.stderr == "ckptbench run: error: unknown flag --keep; did you mean --keep_checkpoints?\n"
  assert not (tmp_path / "out").exists()


def test_the_time_budget_help_states_the_default_the_run_takes():
  from ckptbench.config import DEFAULT_TIME_BUDGET_S

  text = " ".join(build_parser()._subparsers._group_actions[0].choices["run"].format_help().split())
  assert f"time_budget_s, else {DEFAULT_TIME_BUDGET_S:g})" in text
