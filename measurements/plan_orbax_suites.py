"""Runs `ckptbench plan` over every suite file Orbax's in-tree framework ships.

Usage: python measurements/plan_orbax_suites.py [-v]

Finds the suite files in the installed orbax-checkpoint wheel (`configs/`,
`configs/evaluations/...`, `orbax_load/configs/`, `safetensors/configs/`),
plans each one unchanged, and prints N/TOTAL with the first line of the reason
for each failure. `-v` also prints each success's plan summary line. Plans run
in this process (one import of ckptbench for all files) through the same CLI
entry point a user types, so what passes here passes `ckptbench plan FILE`.
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import sys

import orbax.checkpoint

from ckptbench.cli._main import main

# Suite directories of the framework (xpk/ holds a Kubernetes manifest, not a suite).
_SUITE_DIRS = ("configs", "orbax_load/configs", "safetensors/configs")


def suite_files() -> list[pathlib.Path]:
  root = pathlib.Path(orbax.checkpoint.__file__).parent / "_src" / "testing" / "benchmarks"
  return sorted(p for d in _SUITE_DIRS for p in (root / d).rglob("*.yaml"))


def plan(path: pathlib.Path) -> tuple[int, str]:
  """(exit code, the output lines) of `ckptbench plan PATH`."""
  out, err = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
      code = main(["plan", str(path)])
    except Exception as e:  # a traceback is a defect: report it as a failure
      code, err = 99, io.StringIO(f"traceback: {type(e).__name__}: {e}")
  return code, (err.getvalue() or out.getvalue()).strip()


def main_script(verbose: bool) -> int:
  files = suite_files()
  failed = []
  for path in files:
    code, text = plan(path)
    rel = path.as_posix().split("/benchmarks/", 1)[-1]
    if code:
      reason = text.splitlines()[0] if text else f"exit {code}"
      reason = reason.replace(f"ckptbench: error: {path}", "line")  # the file is named already
      failed.append((rel, reason[:240]))
    elif verbose:
      print(f"ok   {rel}: {text.splitlines()[0] if text else ''}")
  for rel, reason in failed:
    print(f"FAIL {rel}: {reason}")
  print(f"{len(files) - len(failed)}/{len(files)} suite files plan unchanged")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main_script("-v" in sys.argv[1:]))
