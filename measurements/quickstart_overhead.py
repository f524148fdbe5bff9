"""Wall and CPU time of the quick-start suite under `ckptbench run`, every output on disk, vs a bare
script doing the same work.

The guide's tour at 8192x8192 (examples/quickstart.yaml, held to 3 repeats as the bare
script does them) with the default outputs:
the storage probe (cached when steady), a warm-up per variant, cold loads, results,
summary, verdict tables, and the views: the clock stops once report.html and
tensorboard/ are on disk (a piped `ckptbench run` writes them before it exits; a
version that writes them in a detached process is timed until that process is
done). The bare script makes the same Orbax calls and checks: per variant one
warm-up and 3 repeats of async save, page eviction, load and a bit-exact comparison.
Its eviction is ckptbench's (one `sync`, then `posix_fadvise(DONTNEED)` a file: the kernel
drops no dirty page, so without the sync most of a just-saved checkpoint stays
cached and the "cold" load reads memory).

The disk work is the same on both sides: ckptbench removes each run's checkpoint
once it is recorded (its default), and so does the bare script after its check
(`shutil.rmtree`); with `--flags=--keep_checkpoints` both keep all eight (1 GiB),
removed by this script untimed. On this machine's ext4 (mounted with `discard`)
removing a 128 MiB checkpoint waits about 0.19 s for the disk: 1.5 s of a tour,
on whichever side removes. `--bare_keeps` keeps the bare script's checkpoints
whatever ckptbench does (the comparison until 26 Nov 2026).
What the bare script does not do, and ckptbench does: flush the machine's dirty
pages and meter its noise before each run, collect the metrics, write results,
summary, tables and views, and (by default) measure host memory in a memory pass: a
second process that runs the benchmarks again until their readings agree (docs/metrics.md, *Host memory*).
`--host_memory off` times the timed runs alone, which measure no host memory either way.

Each trial runs the bare script once and, beside it, the tour twice as `ckptbench run` (the default,
with its memory pass, and `--host_memory off`), the two in an order swapped every trial; the figures
are the medians of the per-trial ratios to the bare script of wall time and of CPU time (user +
system of the process and its children: steadier than wall time on a shared machine), with their
ranges. Goals (issue 42): the default at most 1.6x, `--host_memory off` at most 1.05x.
Then the quick start as users run it (`num_repeats: auto`, `--quickstarts` times): the memory
pass's share of the run's wall time (the manifest's `host_memory.seconds`; goal: at most 6%).

    .venv/bin/python measurements/quickstart_overhead.py [--trials 5] [--quickstarts 1] [--flags=--keep_checkpoints] [--repo DIR]

`--repo DIR` runs another checkout's ckptbench (its src/ and examples/), e.g. a
commit from before a change, with this script's bare script and clock.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
VIEWS_LOG, VIEWS_DONE = "views.log", "views written"  # a detached views writer's log and its last line
STDOUT = "stdout.txt"  # what the run printed, kept in its OUT
# The run's line after its memory pass (a tree from before the manifest's host_memory.seconds says it too).
PASS_LINE = re.compile(r"memory pass: \d+ run\(s\) recorded in ([\d.]+) s")

# The same saves and loads as examples/quickstart.yaml: an 8192x8192 bf16 array over 8 devices,
# use_ocdbt true/false, 1 warm-up + 3 repeats, async save, evict, load, compare.
BARE = r"""
import os, sys, pathlib, shutil
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, numpy as np, ml_dtypes
from orbax.checkpoint import v1 as ocp
jax.config.update("jax_enable_x64", True)
out, keep = pathlib.Path(sys.argv[1]), sys.argv[2] == "keep"
mesh = jax.sharding.Mesh(np.array(jax.devices()), ("fsdp",))
sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("fsdp"))
def shard(index):
  rng = np.random.default_rng(index[0].start or 0)
  return rng.standard_normal((1024, 8192), dtype=np.float32).astype(ml_dtypes.bfloat16)
tree = {"params": jax.make_array_from_callback((8192, 8192), sharding, shard)}
abstract = jax.tree.map(ocp.arrays.to_shape_dtype_struct, tree)
def evict(path):
  os.sync()  # dirty pages are not dropped: without it the load reads the save's pages from memory
  for d, _, names in os.walk(path):
    for name in names:
      fd = os.open(os.path.join(d, name), os.O_RDONLY)
      os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
      os.close(fd)
for use_ocdbt in (True, False):
  for run in ("warmup_0", "repeat_0", "repeat_1", "repeat_2"):
    path = out / f"{use_ocdbt}" / run / "ckpt"
    ctx = ocp.Context()
    ctx.array.saving.use_ocdbt = use_ocdbt
    with ctx:
      ocp.save_async(path, tree).result()
      evict(path)
      restored = ocp.load(path, abstract)
    for a, b in zip(tree["params"].addressable_shards, restored["params"].addressable_shards):
      assert np.array_equal(np.asarray(a.data).view(np.uint8), np.asarray(b.data).view(np.uint8))
    if not keep:
      shutil.rmtree(path.parent)
"""


def _cpu() -> float:
  usage = resource.getrusage(resource.RUSAGE_CHILDREN)
  return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], repo: pathlib.Path, out: pathlib.Path | None = None) -> tuple[float, float]:
  """(wall s, CPU s) of `cmd` and, with `out`, until OUT's views are on disk."""
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env["PYTHONPATH"] = str(repo / "src")
  t0, c0 = time.perf_counter(), _cpu()
  done = subprocess.run(cmd, check=True, capture_output=True, env=env, text=True)
  if out is not None:
    (out / STDOUT).write_text(done.stdout)
  cpu = _cpu() - c0  # a detached views process is no child of ours: its CPU time is not counted
  if out is not None:
    wait_for_views(out)
    assert (out / "report.html").is_file() and (out / "tensorboard").is_dir(), f"no views in {out}"
  return time.perf_counter() - t0, cpu


def wait_for_views(out: pathlib.Path, timeout_s: float = 300) -> None:
  """Until a detached views writer (if the run started one) has finished."""
  deadline = time.monotonic() + timeout_s
  log = out / VIEWS_LOG
  while log.exists() and VIEWS_DONE not in log.read_text(errors="replace") and time.monotonic() < deadline:
    time.sleep(0.05)


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--trials", type=int, default=5)
  parser.add_argument("--quickstarts", type=int, default=1, help="runs of the quick start as users run it")
  parser.add_argument("--flags", default="", help="extra `ckptbench run` flags, e.g. --flags=--no-probe")
  parser.add_argument("--bare_keeps", action="store_true", help="the bare script keeps its checkpoints anyway")
  parser.add_argument("--repo", type=pathlib.Path, default=REPO, help="the checkout whose ckptbench runs")
  args = parser.parse_args()
  repo = args.repo.resolve()
  flags = shlex.split(args.flags)
  bare_keeps = args.bare_keeps or "--keep_checkpoints" in flags
  # The quick start repeats until decided (num_repeats: auto, up to 90 s); the bare script does 3 repeats,
  # so the tour's runs are held to the same work.
  suite = str(repo / "examples" / "quickstart.yaml")
  tour = [sys.executable, "-m", "ckptbench", "run", suite, "--no-progress", "--set", "num_repeats=3", *flags]
  sides = {"default": tour, "host_memory off": tour + ["--host_memory", "off"]}
  print(f"bare script {'keeps' if bare_keeps else 'removes'} its checkpoints; ckptbench run flags: {flags}")
  walls: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
  cpus: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
  loads = []
  with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    for trial in range(args.trials):
      loads.append(os.getloadavg()[0])
      bare_out = tmp / f"bare_{trial}"
      names = list(sides) if trial % 2 == 0 else list(reversed(sides))
      bare = timed([sys.executable, "-c", BARE, str(bare_out), "keep" if bare_keeps else "remove"], repo)
      for name in names:  # the bare script between, the order of the two runs swapped every trial
        out = tmp / f"{name.replace(' ', '_')}_{trial}"
        ours = timed(sides[name] + ["-o", str(out)], repo, out)
        walls[name].append((ours[0], bare[0]))
        cpus[name].append((ours[1], bare[1]))
        print(f"trial {trial} ({name}): ckptbench {ours[0]:.2f} s ({ours[1]:.2f} s CPU), bare script {bare[0]:.2f} s"
              f" ({bare[1]:.2f} s CPU), ratio {ours[0] / bare[0]:.3f} wall, {ours[1] / bare[1]:.3f} CPU", flush=True)
        shutil.rmtree(out, ignore_errors=True)  # untimed: the next run starts with the same free disk
      shutil.rmtree(bare_out, ignore_errors=True)
    shares = []
    for run in range(args.quickstarts):
      loads.append(os.getloadavg()[0])
      out = tmp / f"quickstart_{run}"
      wall, _ = timed([sys.executable, "-m", "ckptbench", "run", suite, "--no-progress", "-o", str(out), *flags], repo, out)
      passed = json.loads((out / "manifest.json").read_text()).get("host_memory", {}).get("seconds")
      found = PASS_LINE.search((out / STDOUT).read_text())
      if passed is None and found:
        passed = float(found.group(1))
      if passed is not None:
        shares.append(passed / wall)
        lines = (out / "results.jsonl").read_text().splitlines()
        readings = sum(json.loads(line).get("memory_pass", False) for line in lines)
        print(f"quick start {run}: {wall:.1f} s, its memory pass {passed:.1f} s ({readings} readings kept):"
              f" {passed / wall:.1%}", flush=True)
      shutil.rmtree(out, ignore_errors=True)
  goals = {"default": 1.6, "host_memory off": 1.05}
  for name in sides if args.trials else ():
    for what, pairs in (("wall", walls[name]), ("CPU", cpus[name])):
      ratios = [a / b for a, b in pairs]
      print(f"tour, {name}, {what}: median ckptbench {statistics.median(a for a, _ in pairs):.2f} s, bare script"
            f" {statistics.median(b for _, b in pairs):.2f} s; ratio, median of {len(ratios)} trials:"
            f" {statistics.median(ratios):.3f} (range {min(ratios):.3f}-{max(ratios):.3f}; goal <= {goals[name]})")
  if shares:
    print(f"quick start as users run it: the memory pass's share of the run, median of {len(shares)}:"
          f" {statistics.median(shares):.1%} (range {min(shares):.1%}-{max(shares):.1%}; goal <= 6%)")
  print(f"load average (1 min) at each trial's start: {min(loads):.1f}-{max(loads):.1f}")


if __name__ == "__main__":
  main()
