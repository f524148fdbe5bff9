"""Flags are taken exactly as written: no prefixes, both spellings, one-line errors naming the closest flag."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

from ckptbench.cli._launch import split_run_args
from ckptbench.cli._main import build_parser
from conftest import REPO, run_cli

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
  assert f"time_budget_s, else {DEFAULT_TIME_BUDGET_S:g}s)" in text


def _subcommands() -> dict:
  return build_parser()._subparsers._group_actions[0].choices


@pytest.mark.parametrize("command", sorted(_subcommands()))
def test_every_subcommands_help_shows_one_spelling(command):
  flags = re.findall(r"(?<![\w-])--?[a-z][a-z0-9_-]*", _subcommands()[command].format_help())
  assert not [f for f in flags if f.startswith("--") and "-" in f[2:]], "kebab-case in help"
  unit_suffixed = [f for f in flags if re.search(r"_(s|mib|gib|mb|gb|bytes)$", f)]
  assert not unit_suffixed, f"a unit in a flag's name, not its value: {unit_suffixed}"
  old_names = {"--time_budget_s", "--regression_threshold", "--fail_on_change", "--skip_memory_check",
               "--skip_disk_check", "--output_dir", "--output", "--out"}  # fmt: skip
  assert not set(flags) & old_names


@pytest.mark.parametrize(
    ("old", "new"),
    [(["run", "s", "--time-budget", "120"], ["run", "s", "--time_budget", "2m"]),
     (["run", "s", "--time_budget_s=90"], ["run", "s", "--time_budget=90s"]),
     (["run", "s", "--regression_threshold", "0.2"], ["run", "s", "--threshold", "0.2"]),
     (["run", "s", "--skip_memory_check", "--skip-disk-check"], ["run", "s", "--no_memory_check", "--no_disk_check"]),
     (["history", "H", "--fail_on_change"], ["history", "H", "--fail_on_regression"]),
     (["probe", "--size_mib", "64"], ["probe", "--size", "64MiB"]),
     (["fixture", "s", "--shard_mb", "2"], ["fixture", "s", "--shard_size", "2MiB"]),
     (["scale", "s", "--hosts", "1,2,4", "-o", "o", "--host_memory_gib", "8"],
      ["scale", "s", "--hosts", "1,2,4", "-o", "o", "--memory_per_host", "8GiB"]),
     (["goodput", "O", "--mtbf", "6h", "--output_dir", "d"], ["goodput", "O", "--mtbf", "6h", "-o", "d"]),
     (["report", "O", "-o", "r.html"], ["report", "O", "--html", "r.html"]),
     (["examples", "quickstart", "--output", "q.yaml"], ["examples", "quickstart", "--yaml", "q.yaml"]),
     (["launch", "-n", "2", "--out", "o", "--poll_s", "10", "--stop_timeout_s", "1"],
      ["launch", "-n", "2", "-o", "o", "--poll_interval", "10s", "--stop_timeout", "1s"])],
)  # fmt: skip
def test_old_flag_names_are_the_new_flags(old, new):
  parser = build_parser()
  assert vars(parser.parse_args(old)) == vars(parser.parse_args(new))


def test_a_message_names_a_flag_by_its_own_name_not_its_old_ones(capsys):
  err = _refused(capsys, "run", "s.yaml", "--time_budget_s", "soon")
  assert err.startswith("ckptbench run: error: argument --time_budget: expected a positive duration such as 90s")
  assert "did you mean --threshold?" in _refused(capsys, "run", "s.yaml", "--regression_threshol", "1")


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("90s", 90), ("5m", 300), ("1.5h", 5400), ("2d", 172800)])
def test_durations_take_units_and_a_bare_number_is_seconds(text, seconds):
  assert build_parser().parse_args(["run", "s", "--time_budget", text]).time_budget_s == seconds


@pytest.mark.parametrize("text", ["0", "-5m", "5 parsecs", "m"])
def test_a_duration_without_a_sense_is_refused(capsys, text):
  assert "expected a positive duration" in _refused(capsys, "run", "s", f"--time_budget={text}")


def test_sizes_take_units_and_a_bare_number_is_the_old_flags_unit():
  parse = build_parser().parse_args
  assert parse(["probe", "--size", "1GiB"]).size_bytes == parse(["probe", "--size_mib", "1024"]).size_bytes == 1 << 30
  assert parse(["scale", "s", "--hosts", "1,2,4", "-o", "o", "--memory_per_host", "16"]).memory_per_host == 16 << 30


def test_v_goes_after_the_subcommand_too():
  assert build_parser().parse_args(["plan", "quickstart", "-v"]).verbose
  assert build_parser().parse_args(["-v", "plan", "quickstart"]).verbose
  assert not build_parser().parse_args(["plan", "quickstart"]).verbose


@pytest.mark.slow
def test_an_unknown_command_gets_a_did_you_mean():
  done = run_cli("plann", "quickstart")
  assert (done.returncode, done.stderr) == (2, "ckptbench: error: unknown command 'plann'; did you mean plan?\n")


@pytest.mark.slow
def test_a_reader_that_stops_reading_ends_the_command_quietly():
  done = subprocess.run(f"{shlex.quote(sys.executable)} -m ckptbench examples | head -1; exit ${{PIPESTATUS[0]}}",
                        shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120,
                        env={**os.environ, "PYTHONPATH": str(REPO / "src")})  # fmt: skip
  assert done.returncode == 0 and done.stderr == "", done.stderr
  assert len(done.stdout.splitlines()) == 1


@pytest.mark.slow
def test_plan_without_a_suite_names_plan():
  done = run_cli("plan")
  assert done.returncode != 0
  assert "ckptbench plan SUITE" in done.stderr and "ckptbench run" not in done.stderr


OLD_SCRIPT_SUITE = """\
suite_name: old_script
num_repeats: 1
num_warmups: 0
checkpoint_config:
  spec:
    params: {dtype: float32, shape: [64, 32], sharding: [fsdp]}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 2}}
benchmarks:
  - generator: orbax.checkpoint._src.testing.benchmarks.v1.benchmark.Benchmark
    options: {use_ocdbt: true}
"""


@pytest.mark.slow
def test_a_users_script_in_the_old_flag_names_still_runs(tmp_path):
  suite = tmp_path / "suite.yaml"
  suite.write_text(OLD_SCRIPT_SUITE)
  out = tmp_path / "out"
  done = run_cli("run", str(suite), "--output-directory", str(out), "--time-budget", "60", "--regression_threshold",
                 "0.2", "--skip_memory_check", "--skip-disk-check", "--no-progress", "--no-probe", "--no-views")  # fmt: skip
  assert done.returncode == 0, done.stderr
  assert (out / "results.jsonl").exists()
  report = run_cli("report", str(out), "--view", "report", "-o", str(tmp_path / "r.html"))
  assert report.returncode == 0, report.stderr
  assert (tmp_path / "r.html").stat().st_size > 0
  export = run_cli("export", str(out), "--format", "parquet", "--output", str(tmp_path / "t.parquet"))
  assert export.returncode == 0, export.stderr
  assert (tmp_path / "t.parquet").stat().st_size > 0
  example = run_cli("examples", "quickstart", "-o", str(tmp_path / "q.yaml"))
  assert example.returncode == 0 and "suite_name" in (tmp_path / "q.yaml").read_text()
