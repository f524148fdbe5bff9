"""How long the command line takes to answer: `--version`, `--help`, `plan`, and the first line of `run`.

Each command runs as a fresh process (as a user types it) TRIALS times; the figure
is the median wall time with the min and max (and, for a command that runs to its end,
the median CPU time, which a busy machine inflates least). The first line of `run` is timed from
the process start to the first line it writes, read through a pipe (CI, `| tee`)
and through a pseudo-terminal (an interactive shell). `python -c pass` is the floor
any Python command pays. Goals: --version 0.2 s, --help 0.3 s, plan 0.5 s, first
line of run 0.5 s.

    .venv/bin/python measurements/cli_latency.py [--trials 7] [--no_bytecode] [--src OTHER/src]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import pty
import resource
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "examples" / "quickstart.yaml"
CKPTBENCH = [sys.executable, "-m", "ckptbench"]
# The run is stopped after its first line; a tiny array keeps it short if it gets further.
# (Flags in kebab-case: older trees accept only that spelling of these.)
TINY = ["--set", "checkpoint_config.spec.params.shape=[64,64]", "--set", "num_repeats=1", "--no-views",
        "--no-probe"]  # fmt: skip


def env_for(src: pathlib.Path, pycache: pathlib.Path | None) -> dict[str, str]:
  """The environment of a timed command: `src` first on the path; with `pycache`, bytecode kept there.

  An installed package has its .pyc files (pip compiles them), so by default the
  warm-up writes them (into a scratch cache, not the tree) even where the shell
  sets PYTHONDONTWRITEBYTECODE; `--no_bytecode` times compiling every module instead.
  """
  env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])}
  if pycache is not None:
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
  return env


def _children_cpu() -> float:
  usage = resource.getrusage(resource.RUSAGE_CHILDREN)
  return usage.ru_utime + usage.ru_stime


def wall(argv: list[str], env: dict[str, str], cpu: list[float]) -> float:
  """Wall time of the command; its CPU time (user + system) is appended to `cpu`."""
  start, cpu_start = time.perf_counter(), _children_cpu()
  subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
  elapsed = time.perf_counter() - start
  cpu.append(_children_cpu() - cpu_start)
  return elapsed


def first_line_piped(argv: list[str], env: dict[str, str]) -> float:
  start = time.perf_counter()
  proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
  proc.stdout.readline()
  elapsed = time.perf_counter() - start
  proc.kill()
  proc.wait()
  return elapsed


def first_line_terminal(argv: list[str], env: dict[str, str]) -> float:
  parent, child = pty.openpty()
  start = time.perf_counter()
  proc = subprocess.Popen(argv, env=env, stdout=child, stderr=child, stdin=subprocess.DEVNULL)
  os.close(child)
  seen = b""
  while b"\n" not in seen and select.select([parent], [], [], 60)[0]:
    seen += os.read(parent, 4096)
  elapsed = time.perf_counter() - start
  proc.kill()
  proc.wait()
  os.close(parent)
  return elapsed


def show(name: str, goal: float | None, times: list[float], cpu: list[float]) -> None:
  med = statistics.median(times)
  verdict = "" if goal is None else f"  goal {goal:.2f} s: {'met' if med <= goal else 'MISSED'}"
  # CPU time is what a busy machine inflates least (it still slows caches and memory).
  spent = f"; CPU median {statistics.median(cpu):.3f} s" if cpu else ""
  print(f"{name:28s} median {med:6.3f} s  (min {min(times):.3f}, max {max(times):.3f}, n={len(times)}{spent}){verdict}")


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--trials", type=int, default=7)
  parser.add_argument("--src", action="append", default=[], type=pathlib.Path, help="another source tree to time")
  parser.add_argument("--no_bytecode", action="store_true",
                      help="keep no .pyc files: every command compiles the modules it imports")  # fmt: skip
  args = parser.parse_args()
  trees = [REPO / "src", *(p.resolve() for p in args.src)]
  work = pathlib.Path(tempfile.mkdtemp(prefix="cli-latency-"))
  pycache = None if args.no_bytecode else work / "pycache"
  print(f"bytecode: {'none (every module compiled)' if pycache is None else 'kept, as an installed package has it'}")
  try:
    out = lambda tag: ["-o", str(work / tag)]  # noqa: E731  (a fresh OUT each trial)
    run = [*CKPTBENCH, "run", str(QUICKSTART), *TINY]
    cases = [
        ("python -c pass", None, lambda env, tag, cpu: wall([sys.executable, "-c", "pass"], env, cpu)),
        ("ckptbench --version", 0.2, lambda env, tag, cpu: wall([*CKPTBENCH, "--version"], env, cpu)),
        ("ckptbench --help", 0.3, lambda env, tag, cpu: wall([*CKPTBENCH, "--help"], env, cpu)),
        ("ckptbench plan quickstart", 0.5, lambda env, tag, cpu: wall([*CKPTBENCH, "plan", str(QUICKSTART)], env, cpu)),
        ("run: first line, piped", 0.5, lambda env, tag, cpu: first_line_piped([*run, *out(tag)], env)),
        ("run: first line, terminal", 0.5, lambda env, tag, cpu: first_line_terminal([*run, *out(tag)], env)),
    ]
    for name, goal, measure in cases:
      times: dict[pathlib.Path, list[float]] = {tree: [] for tree in trees}
      cpus: dict[pathlib.Path, list[float]] = {tree: [] for tree in trees}
      for tree in trees:
        measure(env_for(tree, pycache), f"w{len(times[tree])}", [])  # warm-up: file caches, .pyc files, a kept probe
      for i in range(args.trials):
        for j, tree in enumerate(trees):
          times[tree].append(measure(env_for(tree, pycache), f"{i}-{j}", cpus[tree]))
      for tree in trees:
        show(name if len(trees) == 1 else f"{name} [{tree}]", goal, times[tree], cpus[tree])
  finally:
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
  main()
