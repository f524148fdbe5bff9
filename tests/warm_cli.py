"""`ckptbench ARGS` as `python -m ckptbench` runs it, in a process forked from a warm one.

Each command runs in a child of one server process per test worker (multiprocessing's forkserver) that
imported ckptbench, JAX and Orbax once and started no JAX backend: the child sets the command's
environment, directory, arguments and output files and calls the command-line entry point as
`python -m ckptbench` does, so the command's JAX starts with the devices it asks for and its memory
pass forks as it does from the command line. What it saves is the import (a second or two of CPU a
command). `run_cli` (tests/conftest.py) runs commands through it, unless they set JAX's own
variables, and tests/test_example_walk.py walks the catalogue through it.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pathlib
import subprocess
import sys
import tempfile

# Imported once in the server; what each command imports after these is its own.
PRELOAD = ["ckptbench.cli", "ckptbench.engine", "orbax.checkpoint"]
_context = None


def _server():
  global _context
  if _context is None:
    _context = multiprocessing.get_context("forkserver")
    _context.set_forkserver_preload(PRELOAD)
  return _context


def run_cli_forked(args: list[str], cwd: pathlib.Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
  """Runs `ckptbench ARGS` in a forked child (see the module's docstring); returns the CompletedProcess.

  Raises:
    subprocess.TimeoutExpired: the command ran past `timeout` seconds (it is killed).
  """
  with tempfile.TemporaryDirectory() as scratch:
    out, err = pathlib.Path(scratch, "stdout"), pathlib.Path(scratch, "stderr")
    child = _server().Process(target=_run, args=(list(args), str(cwd), dict(env), str(out), str(err)))
    child.start()
    child.join(timeout)
    if child.exitcode is None:
      child.kill()
      child.join()
      raise subprocess.TimeoutExpired(["ckptbench", *args], timeout)
    return subprocess.CompletedProcess(["ckptbench", *args], child.exitcode, out.read_text(errors="replace"),
                                       err.read_text(errors="replace"))  # fmt: skip


def _run(args: list[str], cwd: str, env: dict[str, str], out: str, err: str) -> None:
  """The child: the command as `python -m ckptbench ARGS` would run it here; exits with its status."""
  os.chdir(cwd)
  os.environ.clear()
  os.environ.update(env)
  # Where `python -m ckptbench` with this environment looks for modules first: $PYTHONPATH (the current
  # directory it leaves off, as ckptbench/__main__.py does).
  for entry in reversed([p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]):
    if entry not in sys.path:
      sys.path.insert(0, entry)
  for fd, path, mode in ((0, os.devnull, os.O_RDONLY), (1, out, os.O_WRONLY | os.O_CREAT), (2, err, os.O_WRONLY | os.O_CREAT)):
    os.dup2(os.open(path, mode, 0o644), fd)
  sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
  sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
  logging.root.handlers.clear()  # what an import logged set up a handler on the server's stderr
  sys.argv = ["ckptbench", *args]
  from ckptbench.cli import main  # noqa: PLC0415

  try:
    code = main()  # argv from sys.argv, as the command line's own process (a finished `run` exits here)
  except SystemExit as e:  # argparse's usage errors
    code = e.code if isinstance(e.code, int) else 2
  sys.stdout.flush()
  sys.stderr.flush()
  os._exit(code)
