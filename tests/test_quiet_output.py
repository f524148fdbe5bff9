"""Native libraries' standard error goes to OUT/logs/ (shown with -v); ckptbench's own messages stay."""

from __future__ import annotations

import pytest

from conftest import run_cli

SUITE = """\
suite_name: noisy
num_repeats: 2
num_warmups: 0
benchmarks:
  - generator: noisy_benchmarks.NoisyBenchmark
"""


@pytest.mark.slow
def test_library_output_goes_to_the_logs_and_the_last_lines_say_where(tmp_path):
  (tmp_path / "s.yaml").write_text(SUITE)
  out = tmp_path / "out"
  done = run_cli("run", str(tmp_path / "s.yaml"), "-o", str(out), "--no_views", "--no_probe", "--no_progress")
  assert done.returncode == 0, done.stderr
  assert "native library noise" not in done.stderr + done.stdout
  log = (out / "logs" / "process_0.log").read_text()
  assert log.count("native library noise") == 8  # 3 on descriptor 2 and 1 on descriptor 1, per run
  assert f"library messages: {len(log.splitlines())} lines in {out / 'logs' / 'process_0.log'}" in done.stdout


@pytest.mark.slow
def test_verbose_shows_library_output(tmp_path):
  (tmp_path / "s.yaml").write_text(SUITE)
  out = tmp_path / "out"
  done = run_cli("-v", "run", str(tmp_path / "s.yaml"), "-o", str(out), "--no_views", "--no_probe", "--no_progress")
  assert done.returncode == 0, done.stderr
  assert (done.stdout + done.stderr).count("native library noise") == 8
  assert not (out / "logs").exists()


@pytest.mark.slow
def test_a_run_whose_libraries_say_nothing_leaves_no_log(tmp_path):
  (tmp_path / "s.yaml").write_text(SUITE)
  out = tmp_path / "out"
  done = run_cli("run", str(tmp_path / "s.yaml"), "-o", str(out), "--no_views", "--no_probe", "--no_progress",
                 "--set", "benchmarks[0].options.lines=0")  # fmt: skip
  assert done.returncode == 0, done.stderr
  assert "library messages" not in done.stdout
  assert not (out / "logs").exists()


def test_an_unknown_generator_is_one_short_line_naming_the_closest():
  import pytest

  from ckptbench import ConfigError, load_suite_text

  with pytest.raises(ConfigError) as refused:
    load_suite_text("suite_name: s\nbenchmarks:\n  - generator: save_restor\n", file="s.yaml")
  message = str(refused.value)
  assert "\n" not in message and len(message) < 200, message
  assert "did you mean 'save_restore'" in message
