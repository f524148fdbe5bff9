"""One writer per output directory: a second run is refused, a killed run's lock is taken over."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time

import pytest

from ckptbench.errors import CkptbenchError
from ckptbench.results import LOCK_FILE, output_lock
from conftest import REPO, run_cli

pytestmark = pytest.mark.host_memory("inline", reason=(
    "these tests hold OUT's lock against a second writer mid-run; which runs a memory pass adds is "
    "not what they check"
))

# Holds OUT's lock in another process until its standard input closes.
_HOLDER = """\
import sys
from ckptbench.results import output_lock

with output_lock(sys.argv[1], "run"):
  print("locked", flush=True)
  sys.stdin.read()
"""


def _holder(out) -> subprocess.Popen:
  proc = subprocess.Popen(
      [sys.executable, "-c", _HOLDER, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
      env={**os.environ, "PYTHONPATH": str(REPO / "src")},
  )  # fmt: skip
  assert proc.stdout.readline() == "locked\n"
  return proc


@pytest.mark.slow
def test_a_locked_directory_is_refused_naming_the_holder(tmp_path):
  (tmp_path / "out").mkdir()
  holder = _holder(tmp_path / "out")
  try:
    with pytest.raises(CkptbenchError) as refused, output_lock(tmp_path / "out", "report"):
      pass
    message = str(refused.value)
    assert f"in use by `ckptbench run` (pid {holder.pid} on " in message
    assert "started 20" in message and "\n" not in message
  finally:
    holder.stdin.close()
    holder.wait(timeout=30)
  with output_lock(tmp_path / "out", "report"):  # released when the holder ended
    held = json.loads((tmp_path / "out" / LOCK_FILE).read_text())
    assert held["pid"] == os.getpid() and held["command"] == "report"
  assert (tmp_path / "out" / LOCK_FILE).read_text() == ""  # released cleanly: nothing stale left


@pytest.mark.slow
def test_a_killed_holders_lock_is_taken_over_with_a_warning(tmp_path, caplog):
  holder = _holder(tmp_path / "out")
  holder.send_signal(signal.SIGKILL)
  holder.wait(timeout=30)
  with caplog.at_level(logging.WARNING), output_lock(tmp_path / "out", "run"):
    pass
  assert f"taking over the stale lock of `ckptbench run` (pid {holder.pid} on " in caplog.text


def test_a_directory_the_lock_created_and_nothing_was_written_to_is_removed(tmp_path):
  with output_lock(tmp_path / "new", "run"):
    (tmp_path / "new" / "logs").mkdir()
    (tmp_path / "new" / "logs" / "process_0.log").touch()
  assert not (tmp_path / "new").exists()
  with output_lock(tmp_path / "kept", "run"):
    (tmp_path / "kept" / "results.jsonl").write_text("{}\n")
  assert (tmp_path / "kept" / LOCK_FILE).read_text() == ""


def test_report_into_a_missing_directory_creates_nothing(tmp_path):
  with pytest.raises(CkptbenchError, match="does not exist"), output_lock(tmp_path / "none", "report", create=False):
    pass
  assert not (tmp_path / "none").exists()


def _suite(tmp_path):
  """Three runs, repeat i waiting until tmp_path/gate<i> exists."""
  suite = tmp_path / "s.yaml"
  suite.write_text(
      "suite_name: lock\nnum_repeats: 3\nnum_warmups: 0\nbenchmarks:\n"
      f"  - generator: gated_benchmarks.GatedBenchmark\n    options: {{gate: {tmp_path / 'gate'}}}\n"
  )
  return suite


def _start_run(suite, out, *flags) -> subprocess.Popen:
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO / "tests")])
  return subprocess.Popen(
      [sys.executable, "-m", "ckptbench", "run", str(suite), "-o", str(out), "--no_views", "--no_probe",
       "--no_progress", *flags],
      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
  )  # fmt: skip


def _wait_until_locked(out, proc, timeout=120.0) -> None:
  deadline = time.monotonic() + timeout
  while not ((out / LOCK_FILE).exists() and (out / LOCK_FILE).read_text()):
    assert proc.poll() is None, proc.communicate()
    assert time.monotonic() < deadline, "the run never took the lock"
    time.sleep(0.05)


def _measured(out) -> list[tuple[str, int]]:
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  return sorted((r["key"], r["repeat"]) for r in records)


@pytest.mark.slow
def test_two_concurrent_runs_one_refused_nothing_duplicated(tmp_path):
  suite = _suite(tmp_path)
  out = tmp_path / "out"
  first = _start_run(suite, out)
  _wait_until_locked(out, first)
  second = run_cli("run", str(suite), "-o", str(out), "--resume", "--no_views", "--no_probe")
  assert second.returncode == 2, second.stderr
  assert f"is in use by `ckptbench run` (pid {first.pid} on " in second.stderr
  assert len(second.stderr.strip().splitlines()) == 1, second.stderr
  for i in range(3):
    (tmp_path / f"gate{i}").touch()
  _, err = first.communicate(timeout=240)
  assert first.returncode == 0, err
  measured = _measured(out)
  assert len(measured) == 3 and len(set(measured)) == 3


@pytest.mark.slow
def test_resume_after_a_kill_takes_the_lock_over_and_completes(tmp_path):
  suite = _suite(tmp_path)
  out = tmp_path / "out"
  first = _start_run(suite, out)
  _wait_until_locked(out, first)
  (tmp_path / "gate0").touch()
  while not ((out / "results.jsonl").exists() and (out / "results.jsonl").read_text()):  # one run recorded
    assert first.poll() is None, first.communicate()
    time.sleep(0.05)
  first.send_signal(signal.SIGKILL)
  first.communicate(timeout=60)
  assert len(_measured(out)) == 1
  (tmp_path / "gate1").touch()
  (tmp_path / "gate2").touch()
  done = run_cli("run", str(suite), "-o", str(out), "--resume", "--no_views", "--no_probe", "--no_progress")
  assert done.returncode == 0, done.stderr
  assert f"taking over the stale lock of `ckptbench run` (pid {first.pid} on " in done.stderr
  measured = _measured(out)
  assert len(measured) == 3 and len(set(measured)) == 3
  assert (out / LOCK_FILE).read_text() == ""
