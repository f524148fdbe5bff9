"""Ports every generator module of Orbax's framework in the installed wheel and runs it under ckptbench.

Usage: python benchmarks/run_orbax_modules.py [-v] [--keep DIR] [MODULE...]

Copies each of the 21 generator modules of the installed orbax-checkpoint
wheel (`orbax/checkpoint/_src/testing/benchmarks/`, `core/` aside) into a
scratch directory, rewrites their imports with `ckptbench port` (and nothing
else), writes the reference checkpoints the load modules read with `ckptbench
fixture`, and runs each module on a suite with the options of Orbax's own
suite file, scaled to 8 simulated CPU devices (the multislice, emergency and
P2P modules under `ckptbench launch -n 2`). Prints one line per module and
`N/21 ran with every run passing`; a module this machine cannot run (the
PyTorch one needs a CUDA device) is counted apart, with the reason the run
recorded. A module whose own code fails with the installed Orbax (whoever runs
it) is listed with the reason; exit 0 when every other module passed or was
recorded unsupported and that module's runs failed with its known error alone.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import orbax.checkpoint

from ckptbench.compat.orbax import port_file

FRAMEWORK = pathlib.Path(orbax.checkpoint.__file__).parent / "_src" / "testing" / "benchmarks"
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _orbax_module_suites import FIXTURES, MODULES, ExpectedFailure, Module  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Outcome:
  """What running one ported module gave."""

  name: str
  status: str  # "passed", "failed" or "unsupported"
  runs: int
  failed: int
  detail: str
  seconds: float
  errors: tuple[str, ...] = ()  # each failed run's error message


def module_files() -> list[pathlib.Path]:
  """The generator modules of the wheel's framework: every module defining a BenchmarksGenerator subclass."""
  return sorted(
      p for p in FRAMEWORK.rglob("*.py")
      if "core" not in p.relative_to(FRAMEWORK).parts and not p.name.endswith("_test.py")
      and "BenchmarksGenerator):" in p.read_text()
  )  # fmt: skip


def ported_name(relative: str) -> str:
  """The flat module name a framework module gets in the scratch directory (v1/benchmark.py -> v1_benchmark)."""
  return relative.removesuffix(".py").replace("/", "_")


def port_all(dest: pathlib.Path) -> dict[str, list[str]]:
  """Copies every module into `dest` and ports it; returns what each still needs by hand (nothing, we hope).

  Raises:
    AssertionError: when the port changed anything but import lines.
  """
  problems = {}
  for module in MODULES:
    target = dest / f"{ported_name(module.source)}.py"
    shutil.copyfile(FRAMEWORK / module.source, target)
    result = port_file(target, write=True)
    before, after = result.original.splitlines(), result.ported.splitlines()
    changed = [i + 1 for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(before) == len(after) and set(changed) == set(result.rewritten), target
    assert all(after[i - 1].lstrip().startswith(("from ckptbench.compat.orbax", "import ckptbench.compat.orbax")) for i in changed)
    problems[module.source] = list(result.needs_hand)
  return problems


def _env(dest: pathlib.Path) -> dict[str, str]:
  src = HERE.parent / "src"
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env["PYTHONPATH"] = os.pathsep.join([str(src), str(dest)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
  env.setdefault("JAX_PLATFORMS", "cpu")
  return env


def _ckptbench(dest: pathlib.Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
  return subprocess.run(
      [sys.executable, "-m", "ckptbench", *args], cwd=dest, env=_env(dest),
      capture_output=True, text=True, timeout=timeout,
  )  # fmt: skip


def write_fixtures(dest: pathlib.Path, only: tuple[str, ...] | None = None) -> None:
  """The reference checkpoints the load modules read (`ckptbench fixture`), under dest/fixtures/<name>."""
  for name, (fmt, suite) in FIXTURES.items():
    if only is not None and name not in only:
      continue
    suite_file = dest / f"fixture_{name}.yaml"
    suite_file.write_text(suite)
    done = _ckptbench(dest, "fixture", str(suite_file), "-o", str(dest / "fixtures" / name), "--format", fmt, timeout=300)
    if done.returncode:
      raise RuntimeError(f"fixture {name} failed: {done.stderr[-2000:]}")


def run_module(module: Module, dest: pathlib.Path) -> Outcome:
  """Runs one ported module on its suite; reads its summary.json."""
  name = ported_name(module.source)
  suite = dest / f"{name}.yaml"
  suite.write_text(module.suite.format(generator=f"{name}.{module.cls}", fixtures=dest / "fixtures", name=name))
  out = dest / "out" / name
  run = ("launch", "-n", str(module.processes)) if module.processes > 1 else ("run",)
  t0 = time.perf_counter()
  done = _ckptbench(dest, *run, str(suite), "-o", str(out), "--no-progress", "--no-probe", "--no-views", timeout=900)
  seconds = time.perf_counter() - t0
  summary_file = out / "summary.json"
  if done.returncode == 2 and "nothing would run" in done.stderr:  # every point unsupported here, refused
    return Outcome(name, "unsupported", 0, 0, done.stderr.strip().split("nothing would run: ", 1)[-1][:600], seconds)
  if not summary_file.exists():
    return Outcome(name, "failed", 0, 0, f"exit {done.returncode}, no summary.json: {done.stderr.strip()[-600:]}", seconds)
  summary = json.loads(summary_file.read_text())
  runs = sum(b["runs"] for b in summary["benchmarks"])
  failed = sum(b["failed"] for b in summary["benchmarks"])
  errors = [e for b in summary["benchmarks"] for e in b["errors"]]
  if failed or not runs or done.returncode:
    first = f"{errors[0]['type']}: {errors[0]['message'][:400]}" if errors else done.stderr.strip()[-600:]
    messages = tuple(e["message"] for e in errors)
    return Outcome(name, "failed", runs, failed, f"exit {done.returncode}; {first}", seconds, messages)
  return Outcome(name, "passed", runs, 0, f"{len(summary['benchmarks'])} benchmark(s)", seconds)


def run_all(dest: pathlib.Path, only: list[str] | None = None, verbose: bool = False) -> list[Outcome]:
  """Ports, prepares fixtures and runs every module (or those named in `only`)."""
  problems = port_all(dest)
  for source, items in problems.items():
    for item in items:
      print(f"{source}: needs a hand: {item}")
  write_fixtures(dest)
  outcomes = []
  for module in MODULES:
    if only and ported_name(module.source) not in only:
      continue
    outcome = run_module(module, dest)
    outcomes.append(outcome)
    if verbose:
      print(f"{outcome.status:11s} {outcome.name}: {outcome.runs} runs, {outcome.failed} failed,"
            f" {outcome.seconds:.0f} s; {outcome.detail}", flush=True)  # fmt: skip
  return outcomes


def is_expected(outcome: Outcome, expected: ExpectedFailure) -> bool:
  """Whether the module's runs failed with its known error alone (any other error makes the failure unexpected)."""
  return outcome.failed > 0 and bool(outcome.errors) and all(expected.error in m for m in outcome.errors)


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("modules", nargs="*", help="only these (ported names, e.g. v1_benchmark)")
  parser.add_argument("-v", "--verbose", action="store_true", help="a line per module as it finishes")
  parser.add_argument("--keep", help="work in this directory and keep it (default: a temporary one)")
  args = parser.parse_args(argv)
  found = {p.relative_to(FRAMEWORK).as_posix() for p in module_files()}
  listed = {m.source for m in MODULES}
  if found != listed:
    print(f"the wheel's modules differ from the table: new {sorted(found - listed)}, gone {sorted(listed - found)}")
    return 1
  scratch = contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory(prefix="ckptbench-orbax-")
  with scratch as directory:
    dest = pathlib.Path(directory)
    dest.mkdir(parents=True, exist_ok=True)
    outcomes = run_all(dest, args.modules or None, args.verbose)
  if not args.verbose:
    for o in outcomes:
      print(f"{o.status:11s} {o.name}: {o.runs} runs, {o.failed} failed, {o.seconds:.0f} s; {o.detail}")
  passed = sum(o.status == "passed" for o in outcomes)
  unsupported = [o for o in outcomes if o.status == "unsupported"]
  expected = {ported_name(m.source): m.expected_failure for m in MODULES if m.expected_failure}
  failed = [o for o in outcomes if o.status == "failed"]
  as_expected = {o.name for o in failed if o.name in expected and is_expected(o, expected[o.name])}
  print(f"{passed}/{len(outcomes)} ran with every run passing; {len(unsupported)} recorded unsupported"
        + "".join(f" ({o.name}: {o.detail})" for o in unsupported))  # fmt: skip
  for o in failed:
    print(f"{o.name} failed " + (f"as expected: {expected[o.name].why}" if o.name in as_expected else "UNEXPECTEDLY"))
  return 0 if all(o.name in as_expected for o in failed) else 1


if __name__ == "__main__":
  sys.exit(main())
