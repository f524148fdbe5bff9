"""The memory pass's process, forked from the run's own before JAX's backend starts.

A fresh `python -m ckptbench` costs the pass some 1.7 s of a quiet machine before its first run
(Python, JAX, Orbax and ckptbench imported, about half a bare tour's pass), and several times that
on a busy one. So `ckptbench run` forks a child once the suite is loaded (its generators, Orbax
among them, imported) and before any backend, device or thread of JAX's or ours exists, and the
child waits on a pipe. As the run's first run starts it is sent the pass's command, and runs it as
a fresh process would: glibc's mmap and trim thresholds set as `MALLOC_MMAP_THRESHOLD_` sets them at
a process's start (`mallopt`, which also stops glibc's adjusting them), what the imports freed
handed back (`malloc_trim`), the environment the pass's own, its output in the pass's log; its
warm-ups then run beside the run's, and its readings after the timed runs (engine/memory/_gate.py,
whose pipes it is forked with). Only the command line's own process forks
(`RunSettings.memory_pass_forked`): a program calling `ckptbench.run` may hold threads or state that a
child must not copy, and gets a fresh process.
measurements/memory_truth.py compares its readings with fresh processes' (docs/performance.md).
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import runpy
import signal
import sys
import threading

from ckptbench.engine.memory._gate import PassGate
from ckptbench.engine.memory._pass_choices import MEMORY_PASS_ENV

# mallopt's parameters (glibc's malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_GLIBC_TRIM_THRESHOLD = 128 << 10  # glibc's default, which a fixed mmap threshold leaves in place


class WarmProcess:
  """A child of this process, forked now, that runs one `ckptbench` command when `start` sends it.

  Forked only where nothing but the main thread runs Python and JAX has no backend (`can_fork`), with the
  pipes of its gate (`gate`; the command's `--memory_pass_gate` names the child's ends); a child that is
  never sent a command exits when `close` (or this process's exit) closes its pipe.
  """

  def __init__(self) -> None:
    self.gate = PassGate()
    read_end, self._write_end = os.pipe()
    sys.stdout.flush()  # nothing buffered before the fork is printed twice
    sys.stderr.flush()
    self.pid = os.fork()
    if self.pid == 0:
      os.close(self._write_end)
      _serve(read_end, self.gate)  # never returns
    os.close(read_end)
    self.gate.child_started()

  def start(self, argv: list[str], env: dict[str, str], log: str) -> None:
    """Has the child run `ckptbench ARGV` with `env` as its environment and its output in `log`."""
    message = json.dumps({"argv": argv, "env": env, "log": log}).encode()
    with os.fdopen(self._write_end, "wb") as pipe:
      pipe.write(message)
    self._write_end = -1

  def wait(self) -> int:
    """The child's exit status, once it exits."""
    try:
      return os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
    except BaseException:  # a second Ctrl-C here: the child is not left behind
      os.kill(self.pid, signal.SIGKILL)
      os.waitpid(self.pid, 0)
      raise
    finally:
      self.pid = 0

  def kill(self) -> None:
    """Stops the child, and reaps it."""
    os.kill(self.pid, signal.SIGKILL)
    self.wait()

  def close(self) -> None:
    """Lets a child that was sent nothing, or is held at its gate, exit, and reaps it."""
    self.gate.close()
    if self._write_end >= 0:
      os.close(self._write_end)
      self._write_end = -1
    if self.pid:
      self.wait()


def can_fork() -> bool:
  """Whether forking now copies no running thread of Python's, no JAX backend and no distributed client, in a
  run of one process (Linux only: `mallopt`)."""
  if not sys.platform.startswith("linux") or threading.active_count() != 1 or "JAX_PROCESS_ID" in os.environ:
    return False
  import jax  # noqa: PLC0415
  from jax._src import xla_bridge  # noqa: PLC0415

  backends_started = getattr(xla_bridge, "backends_are_initialized", None)
  distributed = getattr(jax.distributed, "is_initialized", None)
  return None not in (backends_started, distributed) and not backends_started() and not distributed()


def _serve(read_end: int, gate: PassGate) -> None:
  """The child: waits for its command (none: exits), then runs it as a fresh process would, and exits."""
  signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C before the pass is the run's to handle
  gate.close_run_ends()  # its own ends stay open for its command's `--memory_pass_gate`
  with os.fdopen(read_end, "rb") as pipe:
    message = pipe.read()
  if not message:
    os._exit(0)
  code = 1
  try:
    task = json.loads(message)
    _fresh_allocator()
    os.environ.clear()
    os.environ.update(task["env"])
    log = os.open(task["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    for fd, target in ((0, null), (1, log), (2, log)):
      os.dup2(target, fd)
    sys.stdout = sys.__stdout__ = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = sys.__stderr__ = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    logging.root.handlers.clear()  # the parent's handlers write to its terminal; the command sets its own
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = ["ckptbench", *task["argv"]]
    runpy.run_module("ckptbench", run_name="__main__", alter_sys=True)  # `python -m ckptbench ARGV`
  except SystemExit as e:  # its exit (a finished `run` leaves through os._exit)
    code = 0 if e.code is None else e.code if isinstance(e.code, int) else 1
  except BaseException:  # noqa: BLE001  (the child must exit here whatever happened, and say what)
    import traceback  # noqa: PLC0415

    traceback.print_exc()
  finally:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _fresh_allocator() -> None:
  """glibc's allocator as `MEMORY_PASS_ENV` leaves it at a process's start: the thresholds fixed, and the
  free memory the parent's imports left in the heap handed back."""
  libc = ctypes.CDLL(None)
  libc.mallopt(_M_MMAP_THRESHOLD, int(MEMORY_PASS_ENV["MALLOC_MMAP_THRESHOLD_"]))
  libc.mallopt(_M_TRIM_THRESHOLD, _GLIBC_TRIM_THRESHOLD)
  libc.malloc_trim(0)
