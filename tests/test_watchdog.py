"""The multi-process run watchdog, in a child process (it ends the process it watches)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from conftest import REPO

from ckptbench.errors import EXIT_RUN_STUCK


def _watch(body: str, processes: int = 2) -> tuple[subprocess.CompletedProcess, float]:
  """Runs `body` with `w`, a RunWatchdog of process 0 (1 s grace, 2 s run limit); returns (result, seconds)."""
  code = textwrap.dedent("""\
      import time
      from ckptbench.api._records import ErrorRecord
      from ckptbench.distributed import DistributedTimeouts
      from ckptbench.engine._watchdog import RunWatchdog
      w = RunWatchdog(0, {processes}, DistributedTimeouts(run_limit_s=2, run_grace_s=1))
      """).format(processes=processes) + textwrap.dedent(body)
  t0 = time.monotonic()
  done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
  return done, time.monotonic() - t0


@pytest.mark.slow
def test_a_test_fn_past_its_timeout_and_the_grace_period_ends_the_process():
  done, took = _watch("""\
      w.start_run("Bench(x=1) repeat 2")
      w.in_test_fn(1)
      time.sleep(30)
      """)
  assert done.returncode == EXIT_RUN_STUCK
  assert done.stderr == (
      "ckptbench: error: process 0: run 'Bench(x=1) repeat 2' was still in test_fn past its limit of 2 s"
      " (timeout_s=1 + CKPTBENCH_RUN_GRACE_S); the processes are likely waiting in different collectives"
      " (one skipped a collective that the others entered); exiting with code 4\n"
  )
  assert took < 30  # bounded: far below the 30 s sleep it interrupts (process start-up varies with load)


@pytest.mark.slow
def test_a_failed_run_waits_only_the_grace_period_at_the_gather():
  done, _ = _watch("""\
      w.start_run("Bench repeat 0")
      w.in_test_fn(None)
      w.after_test_fn(ErrorRecord("RuntimeError", "boom", ""))
      time.sleep(30)
      """)
  assert done.returncode == EXIT_RUN_STUCK
  said, stuck = done.stderr.splitlines()
  # said at once, so that the reason survives a gloo abort at the gather
  assert said == ("ckptbench: process 0: run 'Bench repeat 0' failed (RuntimeError: boom); the others may be"
                  " waiting in a collective it skipped")  # fmt: skip
  assert "was still at the gather after its run failed (RuntimeError: boom) past its limit of 1 s" in stuck


@pytest.mark.slow
def test_a_successful_run_waits_at_the_gather_as_long_as_the_others_may_run_and_end_run_disarms():
  done, _ = _watch("""\
      w.start_run("Bench repeat 0")
      w.in_test_fn(None)  # the run limit: 2 s
      w.after_test_fn(None)
      time.sleep(1.5)  # past the grace period, within the test_fn limit
      w.end_run()
      w.start_run("Bench repeat 1")
      w.end_run()
      time.sleep(2.5)  # past the run limit
      print("alive")
      """)
  assert (done.returncode, done.stdout, done.stderr) == (0, "alive\n", "")


@pytest.mark.slow
def test_one_process_has_no_watchdog():
  done, _ = _watch("""\
      w.start_run("Bench repeat 0")
      time.sleep(2.5)
      print("alive")
      """, processes=1)  # fmt: skip
  assert (done.returncode, done.stdout) == (0, "alive\n")
