"""Runs one suite as N cooperating processes on this machine.

Each process is `python -m ckptbench run ...` with its own simulated CPU
devices and the JAX_* variables that make it one member of a `jax.distributed`
job whose coordinator listens on 127.0.0.1. Their output is interleaved line
by line, prefixed `[p<i>]`. When one process fails or dies the others get a
short grace period, then SIGTERM, then SIGKILL: the launch always ends within
a bounded time and names the process that failed.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import IO, Iterator, Mapping, Sequence

from ckptbench.errors import EXIT_BENCHMARK_FAILED, EXIT_RUN_STUCK, CkptbenchError

_DEVICE_COUNT_FLAG = re.compile(r"--xla_force_host_platform_device_count=\S*")
_PR_SET_PDEATHSIG = 1


@dataclasses.dataclass(frozen=True)
class LaunchOutcome:
  """How a local launch ended.

  Attributes:
    exit_code: 0 when every process succeeded; else the failed process's exit
      code (1 when it was killed by a signal).
    returncodes: each process's return code (negative: killed by that signal).
    failed: the index of the first process that failed, or None.
    stopped: the processes the launcher had to stop after that failure.
    message: one line saying what happened (printed by the launcher on
      success; the caller reports a failure).
  """

  exit_code: int
  returncodes: tuple[int, ...]
  failed: int | None
  stopped: tuple[int, ...]
  message: str


def free_port(host: str = "127.0.0.1") -> int:
  """Returns a TCP port that was free on `host` a moment ago."""
  with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
    s.bind((host, 0))
    return s.getsockname()[1]


def process_env(
    base: Mapping[str, str],
    *,
    process_id: int,
    num_processes: int,
    port: int,
    devices_per_process: int,
) -> dict[str, str]:
  """The environment of local process `process_id`: JAX_* variables and its CPU device count.

  Example:
    >>> e = process_env({"XLA_FLAGS": "--xla_dump_to=/tmp/h"}, process_id=1,
    ...                 num_processes=2, port=1234, devices_per_process=4)
    >>> e["JAX_PROCESS_ID"], e["XLA_FLAGS"]
    ('1', '--xla_dump_to=/tmp/h --xla_force_host_platform_device_count=4')
  """
  flags = _DEVICE_COUNT_FLAG.sub("", base.get("XLA_FLAGS", "")).split()
  flags.append(f"--xla_force_host_platform_device_count={devices_per_process}")
  env = dict(base)
  env.update(
      XLA_FLAGS=" ".join(flags),
      JAX_PLATFORMS=base.get("JAX_PLATFORMS") or "cpu",
      JAX_COORDINATOR_ADDRESS=f"127.0.0.1:{port}",
      JAX_COORDINATOR_BIND_ADDRESS=f"127.0.0.1:{port}",
      JAX_NUM_PROCESSES=str(num_processes),
      JAX_PROCESS_ID=str(process_id),
      PYTHONUNBUFFERED="1",
  )
  env.pop("JAX_COORDINATOR_PORT", None)
  return env


def _die_with_parent() -> None:
  """In the child: ask Linux to SIGKILL it if the launcher dies first."""
  with contextlib.suppress(OSError, AttributeError):
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))


def _describe(code: int) -> str:
  if code < 0:
    with contextlib.suppress(ValueError):
      return f"was killed by {signal.Signals(-code).name}"
    return f"was killed by signal {-code}"
  if code == EXIT_RUN_STUCK:
    return f"exited with code {code} (a run passed its limit, likely stuck in a collective; see its line above)"
  return f"exited with code {code}"


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
  with contextlib.suppress(ProcessLookupError, PermissionError):
    os.killpg(proc.pid, sig)


class _Printer:
  """Copies each process's output to `out`, one whole line at a time, prefixed."""

  def __init__(self, out: IO[str]):
    self._out = out
    self._lock = threading.Lock()
    self._threads: list[threading.Thread] = []

  def say(self, line: str) -> None:
    with self._lock:
      self._out.write(line if line.endswith("\n") else line + "\n")
      self._out.flush()

  def follow(self, index: int, stream: IO[bytes]) -> None:
    def pump() -> None:
      for raw in iter(stream.readline, b""):
        self.say(f"[p{index}] " + raw.decode("utf-8", errors="replace"))
      stream.close()

    thread = threading.Thread(target=pump, name=f"ckptbench-launch-p{index}", daemon=True)
    thread.start()
    self._threads.append(thread)

  def drain(self, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    for thread in self._threads:
      thread.join(max(0.0, deadline - time.monotonic()))


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
  """Makes SIGTERM to the launcher unwind like Ctrl-C, so the children get stopped."""
  if threading.current_thread() is not threading.main_thread():
    yield
    return

  def handler(signum, frame):
    del signum, frame
    raise KeyboardInterrupt

  previous = signal.signal(signal.SIGTERM, handler)
  try:
    yield
  finally:
    signal.signal(signal.SIGTERM, previous)


def launch_local(
    num_processes: int,
    run_args: Sequence[str],
    *,
    devices_per_process: int,
    port: int | None = None,
    grace_s: float = 3.0,
    stop_timeout_s: float = 5.0,
    env: Mapping[str, str] | None = None,
    out: IO[str] | None = None,
) -> LaunchOutcome:
  """Runs `ckptbench run <run_args>` as `num_processes` processes of one JAX job.

  Args:
    num_processes: how many processes (at least 1).
    run_args: the arguments of `ckptbench run` (suite file, `-o OUT`, options).
    devices_per_process: simulated CPU devices of each process.
    port: the coordinator's port on 127.0.0.1; a free one when None.
    grace_s: after a process fails, how long the others may take to end by
      themselves before they are sent SIGTERM.
    stop_timeout_s: how long after SIGTERM before SIGKILL.
    env: the base environment; `os.environ` when None.
    out: where the prefixed output goes; `sys.stdout` when None.

  Returns:
    The outcome; the launch takes at most `grace_s + stop_timeout_s` (plus
    polling) longer than the first failure.

  Raises:
    CkptbenchError: a bad process or device count.
  """
  base = _base_env(num_processes, devices_per_process, env)
  port = port or free_port()
  printer = _Printer(out or sys.stdout)
  procs: list[subprocess.Popen] = []
  try:
    with _sigterm_as_interrupt():
      for i in range(num_processes):  # appended one by one: the finally below stops those started
        env_i = process_env(base, process_id=i, num_processes=num_processes, port=port,
                            devices_per_process=devices_per_process)  # fmt: skip
        procs.append(_start_run(run_args, env_i))
      printer.say(_started_line(procs, devices_per_process, port))
      for i, proc in enumerate(procs):
        printer.follow(i, proc.stdout)
      outcome = _supervise(procs, grace_s, stop_timeout_s)
  except KeyboardInterrupt:
    _stop(procs, 0.0, stop_timeout_s)
    printer.drain(1.0)
    raise
  finally:
    for proc in procs:
      if proc.poll() is None:
        _signal_group(proc, signal.SIGKILL)
        proc.wait()
  printer.drain(5.0)
  if outcome.failed is None:
    printer.say(f"[launch] {outcome.message}")
  return outcome


def _started_line(procs: Sequence[subprocess.Popen], devices_per_process: int, port: int) -> str:
  pids = " ".join(f"p{i}={p.pid}" for i, p in enumerate(procs))
  return (f"[launch] {len(procs)} processes x {devices_per_process} CPU devices, coordinator "
          f"127.0.0.1:{port}; pids {pids}")


def _base_env(num_processes: int, devices_per_process: int, env: Mapping[str, str] | None) -> dict[str, str]:
  """The environment every process starts from, once the counts are checked."""
  if num_processes < 1:
    raise CkptbenchError(f"Invalid value for -n={num_processes}: need at least 1 process")
  if devices_per_process < 1:
    raise CkptbenchError(f"Invalid value for --devices_per_process={devices_per_process}: need at least 1")
  base = dict(os.environ if env is None else env)
  # The processes write to a pipe; let their tables use the launcher's width (minus the prefix).
  base.setdefault("COLUMNS", str(max(80, shutil.get_terminal_size().columns - len("[p0] "))))
  return base


def _start_run(run_args: Sequence[str], env: Mapping[str, str]) -> subprocess.Popen:
  """Starts one `ckptbench run` process in its own session, its output on a pipe."""
  return subprocess.Popen(
      [sys.executable, "-m", "ckptbench", "run", *run_args],
      env=env,
      stdin=subprocess.DEVNULL,
      stdout=subprocess.PIPE,
      stderr=subprocess.STDOUT,
      start_new_session=True,
      preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
  )


def _supervise(procs: list[subprocess.Popen], grace_s: float, stop_timeout_s: float) -> LaunchOutcome:
  """Waits for every process; on the first failure, stops the rest."""
  while True:
    codes = [p.poll() for p in procs]
    failed = next((i for i, c in enumerate(codes) if c not in (None, 0)), None)
    if failed is not None or all(c is not None for c in codes):
      break
    time.sleep(0.05)
  if failed is None:
    return LaunchOutcome(0, tuple(codes), None, (), f"all {len(procs)} processes succeeded")
  stopped = _stop(procs, grace_s, stop_timeout_s)
  code = procs[failed].returncode
  message = f"process {failed} (pid {procs[failed].pid}) {_describe(code)}"
  if stopped:
    message += "; stopped process" + ("es " if len(stopped) > 1 else " ") + ", ".join(map(str, stopped))
  others = [i for i, p in enumerate(procs) if i != failed and i not in stopped and p.returncode != 0]
  if others:
    message += "; also failed: " + ", ".join(f"process {i} {_describe(procs[i].returncode)}" for i in others)
  return LaunchOutcome(
      code if code > 0 else EXIT_BENCHMARK_FAILED,
      tuple(p.returncode for p in procs),
      failed,
      tuple(stopped),
      message,
  )


def _stop(procs: list[subprocess.Popen], grace_s: float, stop_timeout_s: float) -> list[int]:
  """Lets running processes end within `grace_s`, then SIGTERM, then SIGKILL; returns those stopped."""
  deadline = time.monotonic() + grace_s
  while time.monotonic() < deadline and any(p.poll() is None for p in procs):
    time.sleep(0.05)
  stopped = [i for i, p in enumerate(procs) if p.poll() is None]
  for i in stopped:
    _signal_group(procs[i], signal.SIGTERM)
  deadline = time.monotonic() + stop_timeout_s
  for i in stopped:
    try:
      procs[i].wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
      _signal_group(procs[i], signal.SIGKILL)
      procs[i].wait()
  return stopped
