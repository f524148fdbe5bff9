"""Runs Orbax's shipped suite files, scaled to this machine, under ckptbench and under Orbax's own runner.

Usage: python measurements/run_orbax_suites.py WORK [-j N] [-k SUBSTRING ...] [--no-orbax] [--orbax-python PY] [--warm]

Each of the wheel's suite files is scaled (measurements/_orbax_scaled.py: meshes
of at most 8 devices, small shapes, capped repeats, gs:// and other remote
paths replaced by small local fixtures of the same layout written under
WORK/fixtures) and run with `ckptbench run` in a process of its own (planned
with `ckptbench plan` when the run refuses it: the plan must refuse it too);
then the same scaled file runs under Orbax's runner (`run_benchmarks.py` from
the wheel) with as many simulated devices. The suites of the generators that
need peers (emergency, multislice, P2P) run as 2 processes: `ckptbench launch
-n 2`, and two Orbax runners of one jax.distributed job. Printed: each suite's outcome (ran / refused by plan, with
the reason / failed runs), the count that ran, and for the suites both ran,
the ratio Orbax/ckptbench of the median save and load times (`<op>_0_basics/time_s`
over the operations both measured, by name less Orbax's step number: save is
`*save*` and `serialize`, load is `*load*`, `*restore*` and `deserialize`;
Orbax's first repeat of each benchmark left out, as it has no warm-up), with
their geometric mean. N suites at a time (-j,
default 2); -k keeps the suites whose path contains a SUBSTRING. Orbax's
runner imports `clu`, whose metric writers import TensorFlow: --orbax-python
names an interpreter that has them and ckptbench's packages (default: this one).
ckptbench's loads evict the page cache first (`cold_cache`, on by default);
Orbax's runner reads warm: --warm gives every benchmark whose generator has
the option `cold_cache: false` for ckptbench (a file of its own), so that the load ratios compare like with like.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import math
import os
import pathlib
import re
import socket
import statistics
import subprocess
import sys
import threading

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _orbax_scaled  # noqa: E402

_OPS = ("save", "load")
_TIME = "_0_basics/time_s"
_TIMEOUT_S = 900
_FIXTURES = threading.Lock()
# The generators that restore from, or broadcast to, other processes: run as 2
# processes of one job (`ckptbench launch -n 2`), as run_orbax_modules.py runs
# their modules (one process holding every replica has no peer and no local tier).
MULTI_PROCESS = ("emergency_checkpoint_manager_benchmark", "multislice_broadcast_benchmark",
                 "p2p_checkpoint_manager_benchmark")  # fmt: skip
PROCESSES = 2


@dataclasses.dataclass(frozen=True)
class Outcome:
  suite: str
  status: str  # ran | refused | failed
  detail: str
  ckptbench: dict[str, list[float]]  # op -> median time_s of each benchmark
  orbax: dict[str, list[float]] | str | None  # op -> times; why its runner failed; or not run
  cold: frozenset[str] = frozenset()  # ckptbench's operations that read with a cold page cache


def _env(devices: int) -> dict[str, str]:
  env = dict(os.environ, JAX_PLATFORMS="cpu")
  env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
  return env


def _ckptbench(args: list[str], devices: int) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "ckptbench", *args], capture_output=True, text=True,
                        env=_env(devices), timeout=_TIMEOUT_S)  # fmt: skip


def run_ckptbench(scaled: _orbax_scaled.Scaled, suite_file: pathlib.Path, out: pathlib.Path) -> Outcome:
  """Runs one scaled suite (plans it when the run refuses it); the outcome with ckptbench's median times."""
  name = _orbax_scaled.relative_name(scaled.source)
  devices = _orbax_scaled.devices_for(scaled)
  command = ["launch", "-n", str(PROCESSES)] if processes(scaled) > 1 else ["run"]
  run = _ckptbench([*command, str(suite_file), "-o", str(out), "--overwrite", "--remove_repeated_dir", "--no-views",
                    "--no-probe", "--no-progress"], devices)  # fmt: skip
  summary = out / "summary.json"
  if not summary.exists():  # refused before running: plan must refuse it too, with the same reason
    plan = _ckptbench(["plan", str(suite_file)], devices)
    if plan.returncode:
      return Outcome(name, "refused", _first_line(plan.stderr or plan.stdout), {}, None)
    said = [ln for ln in run.stderr.splitlines() if re.match(r"ckptbench: process \d+: run '.*' failed", ln)]
    why = " ".join([_first_line(run.stderr), *said])  # a process's failure, said before a collective aborted
    return Outcome(name, "failed", f"exit {run.returncode}, no summary.json: {why}", {}, None)
  data = json.loads(summary.read_text())
  errors = [e["message"] for b in data["benchmarks"] for e in b.get("errors", [])]
  if run.returncode or errors:
    return Outcome(name, "failed", f"exit {run.returncode}: {(errors or [_first_line(run.stderr)])[0][:300]}", {}, None)
  return Outcome(name, "ran", f"{len(data['benchmarks'])} benchmarks", ckptbench_times(data), None, cold_ops(data))


def processes(scaled: _orbax_scaled.Scaled) -> int:
  """How many processes the suite runs as: PROCESSES when a generator needs peers, else 1."""
  generators = [b["generator"].rsplit(".", 2)[-2] for b in scaled.suite["benchmarks"]]
  return PROCESSES if any(g in MULTI_PROCESS for g in generators) else 1


def cold_ops(summary: dict) -> frozenset[str]:
  """The operations ckptbench measured after evicting the page cache (`<op>_0_basics/cold_cache_fadvise`
  or `_drop_caches` is 1; `_warm` is `cold_cache: false`).

  Orbax's runner reads whatever the cache holds (warm, for files just written
  or read), so those load times are not like for like.
  """
  return frozenset(
      tag.split("_0_basics/")[0] for bench in summary["benchmarks"] for tag, stats in bench["metrics"].items()
      if tag.endswith(("_0_basics/cold_cache_fadvise", "_0_basics/cold_cache_drop_caches")) and stats.get("median")
  )  # fmt: skip


def compared(o: Outcome, kind: str) -> set[str]:
  """The operations of `kind` both frameworks measured in the suite."""
  return {op for op in set(o.ckptbench) & set(o.orbax) if _kind(op) == kind} if isinstance(o.orbax, dict) else set()


def ckptbench_times(summary: dict) -> dict[str, list[float]]:
  """Each operation's median time per benchmark, from a summary.json.

  A block entered several times in a run sums its time; its `_mean` is one
  entry's time, what Orbax's numbered operations (`save_0`, `save_1`) record.
  """
  out: dict[str, list[float]] = {}
  for bench in summary["benchmarks"]:
    metrics = bench["metrics"]
    for tag, stats in metrics.items():
      if tag.endswith(_TIME):
        median = metrics.get(tag + "_mean", stats).get("median")
        if median is not None:
          out.setdefault(tag[: -len(_TIME)], []).append(median)
  return out


def run_orbax(
    scaled: _orbax_scaled.Scaled, suite_file: pathlib.Path, out: pathlib.Path, python: str
) -> dict[str, list[float]] | str:
  """Orbax's runner on the same scaled file: its times per operation, or why it failed.

  A suite of several processes runs as that many runners of one jax.distributed
  job, which Orbax's runner starts from JAX_COORDINATOR_ADDRESS, JAX_PROCESS_ID
  and JAX_NUM_PROCESSES.
  """
  runner = _orbax_scaled.wheel_root() / "run_benchmarks.py"
  args = [python, str(runner), f"--config_file={suite_file}", f"--output_directory={out}", "--remove_repeated_dir"]
  n = processes(scaled)
  envs = [_env(_orbax_scaled.devices_for(scaled) // n) for _ in range(n)]
  if n > 1:
    address = f"localhost:{_free_port()}"
    for i, env in enumerate(envs):
      env.update(JAX_COORDINATOR_ADDRESS=address, JAX_PROCESS_ID=str(i), JAX_NUM_PROCESSES=str(n))
  # Standard error to files, not pipes: a runner blocked on a full pipe that is
  # not being read would hold the others in their next collective.
  logs = [out.parent / f"{out.name}.process_{i}.log" for i in range(n)]
  out.parent.mkdir(parents=True, exist_ok=True)
  procs = []
  for env, log in zip(envs, logs):
    with log.open("w") as stderr:
      procs.append(subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=stderr, env=env))
  try:
    for p in procs:
      p.wait(timeout=_TIMEOUT_S)
  except subprocess.TimeoutExpired:
    for p in procs:
      p.kill()
      p.wait()
    return f"timed out after {_TIMEOUT_S} s"
  failed = [(p.returncode, log.read_text()) for p, log in zip(procs, logs) if p.returncode]
  if failed:
    return f"exit {failed[0][0]}: {_last_error(failed[0][1])}"
  return orbax_times(out / "tensorboard")


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def orbax_times(root: pathlib.Path) -> dict[str, list[float]]:
  """Each operation's times from Orbax's TensorBoard scalars (`<op>/0_basics/time_s`).

  Orbax's generators number an operation by step (`save_0`, `restore_1`): the
  number is dropped, so that `save_0` and ckptbench's `save` are one operation.
  """
  out: dict[str, list[float]] = {}
  for tag, values in _scalars(root).items():
    match = re.fullmatch(r"(.+?)(_\d+)?/0_basics/time_s", tag)
    if match:
      out.setdefault(match.group(1), []).extend(values)
  return out


def _kind(op: str) -> str | None:
  """save (`*save*`, `serialize`), load (`*load*`, `*restore*`, `deserialize`) or neither."""
  if "deserialize" in op or ("save" not in op and ("load" in op or "restore" in op)):
    return "load"
  if "save" in op or "serialize" in op:
    return "save"
  return None


def ratio(ours: dict[str, list[float]], peer: dict[str, list[float]], kind: str) -> float | None:
  """Orbax/ckptbench median time over the operations of `kind` that both frameworks measured.

  Operations named differently are not compared: the P2P module's three
  scenarios (`test_p2p_restore_restore`, ...) against ckptbench's one `restore`
  of the `delete_before_restore` asked for would compare unlike work.
  """
  ops = [op for op in set(ours) & set(peer) if _kind(op) == kind]
  a = [v for op in ops for v in peer[op]]
  b = [v for op in ops for v in ours[op]]
  return statistics.median(a) / statistics.median(b) if a and b and statistics.median(b) > 0 else None


def _scalars(root: pathlib.Path) -> dict[str, list[float]]:
  """Every scalar in the TensorBoard event files under `root`, by tag (per-host runs only, not aggregates)."""
  from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: PLC0415
  from tensorboard.util import tensor_util  # noqa: PLC0415

  out: dict[str, list[float]] = {}
  for events in root.rglob("events.out.tfevents.*"):
    if "host_" not in events.as_posix():
      continue
    acc = EventAccumulator(str(events.parent), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    series = {tag: [e.value for e in acc.Scalars(tag)] for tag in acc.Tags().get("scalars", [])}
    for tag in acc.Tags().get("tensors", []):
      series[tag] = [float(tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors(tag)]
    for tag, values in series.items():
      # Orbax's runner has no warm-up: its first repeat pays the first compilation, which
      # ckptbench's warm-up keeps out of the figures; leave it out here too.
      out.setdefault(tag, []).extend(values[1:] if len(values) > 1 else values)
  return out


def _first_line(text: str) -> str:
  """ckptbench's one-line error (its message may wrap onto more lines)."""
  text = text.strip()
  start = text.rfind("ckptbench: error:")
  return " ".join((text[start:] if start >= 0 else text).split())[:600]


def _last_error(text: str) -> str:
  """The last line of a traceback or absl log naming an error."""
  lines = [ln for ln in text.splitlines() if "Error" in ln or "error" in ln]
  return (lines[-1] if lines else text.strip()[-300:])[:300]


def one_suite(path: pathlib.Path, work: pathlib.Path, orbax_python: str | None, warm: bool = False) -> Outcome:
  stem = _orbax_scaled.relative_name(path).replace("/", "__").removesuffix(".yaml")
  scaled = _orbax_scaled.Scaled(path, work / "fixtures" / stem)  # per suite: a path may need another layout elsewhere
  with _FIXTURES:  # Orbax saves in one process, one at a time
    scaled.write_fixtures()
  suite_file = work / "suites" / f"{stem}.yaml"
  suite_file.parent.mkdir(parents=True, exist_ok=True)
  suite_file.write_text(scaled.text())
  ours = suite_file
  if warm:  # ckptbench's option, which Orbax's runner would refuse: a file of ckptbench's own
    ours = work / "suites" / f"{stem}.warm.yaml"
    suite = {**scaled.suite, "benchmarks": [{**b, "options": {**b["options"], "cold_cache": False}}
                                            if has_cold_cache(b["generator"]) else b
                                            for b in scaled.suite["benchmarks"]]}  # fmt: skip
    ours.write_text(yaml.safe_dump(suite, sort_keys=False))
  outcome = run_ckptbench(scaled, ours, work / "ckptbench" / stem)
  if orbax_python and outcome.status == "ran":
    outcome = dataclasses.replace(outcome, orbax=run_orbax(scaled, suite_file, work / "orbax" / stem, orbax_python))
  return outcome


def has_cold_cache(generator: str) -> bool:
  """Whether the generator's options have `cold_cache` (those that load; a dispatcher or broadcast does not)."""
  from ckptbench.config import resolve_generator  # noqa: PLC0415

  _, cls = resolve_generator(generator)
  return "cold_cache" in {f.name for f in dataclasses.fields(cls.options_class)}


def _line(o: Outcome) -> str:
  ops = sorted(o.ckptbench)[:6]
  times = " ".join(f"{op} {statistics.median(o.ckptbench[op]):.3f}s" for op in ops)
  if isinstance(o.orbax, dict):
    ratios = {k: ratio(o.ckptbench, o.orbax, k) for k in _OPS}
    peer = " | Orbax/ckptbench " + " ".join(f"{k} {r:.2f}" for k, r in ratios.items() if r is not None)
    peer += " (ckptbench's load: cold page cache)" if compared(o, "load") & o.cold else ""
  else:
    peer = "" if o.orbax is None else f" | Orbax's runner failed: {o.orbax}"
  return f"{o.status:8} {o.suite}: {o.detail} {times}{peer}"


def report(outcomes: list[Outcome], total: int) -> None:
  for o in sorted(outcomes, key=lambda o: (o.status, o.suite)):
    print(_line(o))
  ran = [o for o in outcomes if o.status == "ran"]
  print(f"\n{len(ran)}/{total} suites ran under ckptbench;"
        f" refused by plan: {sum(o.status == 'refused' for o in outcomes)};"
        f" failed: {sum(o.status == 'failed' for o in outcomes)}")  # fmt: skip
  both = [o for o in ran if isinstance(o.orbax, dict)]
  print(f"{len(both)} of them also ran under Orbax's runner")
  groups = [("save", "save", both), ("load", "load", both),
            ("load", "load, both warm", [o for o in both if not compared(o, "load") & o.cold]),
            ("load", "load, ckptbench's cold", [o for o in both if compared(o, "load") & o.cold])]  # fmt: skip
  for kind, label, suites in groups:
    ratios = [r for o in suites if (r := ratio(o.ckptbench, o.orbax, kind)) is not None]
    if ratios:
      geo = math.exp(statistics.fmean(math.log(r) for r in ratios))
      print(f"{label}: Orbax/ckptbench median time ratio over {len(ratios)} suites: geometric mean {geo:.2f},"
            f" median {statistics.median(ratios):.2f}, range {min(ratios):.2f}-{max(ratios):.2f}")  # fmt: skip


def main(argv: list[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("work", type=pathlib.Path)
  parser.add_argument("-j", type=int, default=2)
  parser.add_argument("-k", action="append", default=[])
  parser.add_argument("--no-orbax", dest="orbax", action="store_false")
  parser.add_argument("--orbax-python", default=sys.executable)
  parser.add_argument("--warm", action="store_true")
  args = parser.parse_args(argv)
  orbax_python = args.orbax_python if args.orbax else None
  files = [p for p in _orbax_scaled.suite_files() if not args.k or any(k in str(p) for k in args.k)]
  with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
    outcomes = []
    futures = [pool.submit(one_suite, p, args.work, orbax_python, args.warm) for p in files]
    for future in concurrent.futures.as_completed(futures):
      outcomes.append(future.result())
      print(_line(outcomes[-1]), flush=True)
  print()
  report(outcomes, len(files))
  return 0 if all(o.status == "ran" for o in outcomes) else 1


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
