"""Ports every generator module of Orbax's framework in the installed wheel and runs it under ckptbench.

Usage: python measurements/run_orbax_modules.py [-v] [--keep DIR] [--orbax-python PYTHON] [MODULE...]

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
it) is counted apart too, as failing in Orbax, with the reason: only while its
runs fail with its known error alone, and, given `--orbax-python` (a Python
with the same orbax-checkpoint and what Orbax's runner imports: clu,
TensorFlow), only when Orbax's own `run_benchmarks` fails the unported module
on the same suite with the same error. Exit 0 when every other module passed or
was recorded unsupported.
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

from ckptbench.cli import port_file

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


@dataclasses.dataclass(frozen=True)
class OrbaxRun:
  """What Orbax's own runner gave on a module's suite, unported."""

  returncode: int
  errors: tuple[str, ...]  # its "Test: NAME, Error: ..." lines
  version: str  # the orbax-checkpoint it ran
  seconds: float


def orbax_runner_errors(output: str) -> tuple[str, ...]:
  """The failed tests Orbax's `run_benchmarks` names at the end (its RuntimeError's "Test: NAME, Error: ..." lines)."""
  _, found, tail = output.rpartition("Benchmark test suite run failed with following errors:\n")
  return tuple(line for line in tail.splitlines() if line.startswith("Test: ")) if found else ()


def run_under_orbax(module: Module, dest: pathlib.Path, python: str) -> OrbaxRun:
  """Runs the module, unported, on the same suite under Orbax's `run_benchmarks` in `python` (8 simulated CPU devices)."""
  if module.processes > 1:
    raise ValueError(f"{module.source}: Orbax's runner is only run here for single-process suites")
  name = ported_name(module.source)
  dotted = "orbax.checkpoint._src.testing.benchmarks." + module.source.removesuffix(".py").replace("/", ".")
  suite = dest / f"{name}.orbax.yaml"
  suite.write_text(module.suite.format(generator=f"{dotted}.{module.cls}", fixtures=dest / "fixtures", name=name))
  env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XLA_FLAGS")}
  env.update(JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=8")
  version = subprocess.run([python, "-c", "import orbax.checkpoint as o; print(o.__version__)"], env=env,
                           capture_output=True, text=True, timeout=300, check=True).stdout.strip()  # fmt: skip
  t0 = time.perf_counter()
  done = subprocess.run(
      [python, "-m", "orbax.checkpoint._src.testing.benchmarks.run_benchmarks", f"--config_file={suite}",
       f"--output_directory={dest / 'orbax_out' / name}"],
      cwd=dest, env=env, capture_output=True, text=True, timeout=900,
  )  # fmt: skip
  return OrbaxRun(done.returncode, orbax_runner_errors(done.stdout + done.stderr), version, time.perf_counter() - t0)


def failing_in_orbax(
    outcome: Outcome, expected: ExpectedFailure, orbax_run: OrbaxRun | None, version: str = orbax.checkpoint.__version__
) -> tuple[bool, str]:
  """Whether a failed module counts as failing in Orbax (not in ckptbench), and the line that says why.

  It does when every failed run under ckptbench failed with the module's known error
  and, where Orbax's own runner was run (`orbax_run`), that runner, on the same
  orbax-checkpoint, failed the module with that same error too.
  """
  if not is_expected(outcome, expected):
    return False, "UNEXPECTEDLY (not the module's known error alone: a ckptbench failure until shown otherwise)"
  if orbax_run is None:
    return True, f"in Orbax itself (known, not re-checked under Orbax's runner: --orbax-python): {expected.why}"
  if orbax_run.version != version:
    return False, f"UNCHECKED: Orbax's runner has orbax-checkpoint {orbax_run.version}, this one {version}"
  if orbax_run.returncode == 0 or not orbax_run.errors or not all(expected.error in e for e in orbax_run.errors):
    return False, (f"UNEXPECTEDLY: Orbax's own runner gave exit {orbax_run.returncode},"
                   f" {list(orbax_run.errors) or 'no failed test'} (a ckptbench difference)")  # fmt: skip
  return True, (f"in Orbax itself: Orbax's own runner (orbax-checkpoint {orbax_run.version}) failed it too, exit"
                f" {orbax_run.returncode}, {len(orbax_run.errors)} test(s) with the same error; {expected.why}")  # fmt: skip


def missing_package_hint(outcome: Outcome) -> str:
  """A note when runs failed on an import: the modules need `make dev`'s environment (the pathways extra: cloudpickle)."""
  missing = sorted({m.split("No module named", 1)[1].strip(" '\"") for m in (outcome.detail, *outcome.errors)
                    if "No module named" in m})  # fmt: skip
  if not missing:
    return ""
  return (f" (missing {', '.join(missing)}: this runner wants `make dev`'s environment,"
          " pip install -e '.[dev,storage,torch,pathways]')")  # fmt: skip


def is_expected(outcome: Outcome, expected: ExpectedFailure) -> bool:
  """Whether the module's runs failed with its known error alone (any other error makes the failure unexpected)."""
  return outcome.failed > 0 and bool(outcome.errors) and all(expected.error in m for m in outcome.errors)


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("modules", nargs="*", help="only these (ported names, e.g. v1_benchmark)")
  parser.add_argument("-v", "--verbose", action="store_true", help="a line per module as it finishes")
  parser.add_argument("--keep", help="work in this directory and keep it (default: a temporary one)")
  parser.add_argument("--orbax-python", metavar="PYTHON",
                      help="a Python with the same orbax-checkpoint, clu and TensorFlow: also run each module with a"
                      " known failure under Orbax's own run_benchmarks, and count it failing in Orbax only if that fails"
                      " the same way")  # fmt: skip
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
    verdicts = {}
    for m in MODULES:
      o = next((o for o in outcomes if o.name == ported_name(m.source) and o.status == "failed"), None)
      if o is None or m.expected_failure is None:
        continue
      orbax_run = run_under_orbax(m, dest, args.orbax_python) if args.orbax_python else None
      if orbax_run is not None and args.verbose:
        print(f"orbax's runner {o.name}: exit {orbax_run.returncode}, {orbax_run.seconds:.0f} s;"
              f" {'; '.join(orbax_run.errors) or 'no failed test'}", flush=True)  # fmt: skip
      verdicts[o.name] = failing_in_orbax(o, m.expected_failure, orbax_run)
  if not args.verbose:
    for o in outcomes:
      print(f"{o.status:11s} {o.name}: {o.runs} runs, {o.failed} failed, {o.seconds:.0f} s; {o.detail}")
  passed = sum(o.status == "passed" for o in outcomes)
  unsupported = [o for o in outcomes if o.status == "unsupported"]
  failed = [o for o in outcomes if o.status == "failed"]
  in_orbax = [o for o in failed if verdicts.get(o.name, (False,))[0]]
  print(f"{passed}/{len(outcomes)} ran with every run passing; {len(unsupported)} recorded unsupported"
        + "".join(f" ({o.name}: {o.detail})" for o in unsupported)
        + f"; {len(in_orbax)} failing in Orbax itself; {len(failed) - len(in_orbax)} failing under ckptbench")  # fmt: skip
  for o in failed:
    print(f"{o.name} failed " + verdicts.get(o.name, (False, "UNEXPECTEDLY"))[1] + missing_package_hint(o))
  return 0 if len(in_orbax) == len(failed) else 1


if __name__ == "__main__":
  sys.exit(main())
