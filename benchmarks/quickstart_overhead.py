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
second process that runs the 8 runs again (docs/metrics.md, *Host memory*).
`--flags='--host_memory off'` times the timed runs alone, which measure no host memory
either way.

Both run as fresh processes (both pay for importing JAX and Orbax) in alternating
pairs, the order swapped every pair; the figures are the medians of the per-pair
ratios of wall time and of CPU time (user + system of the process and its
children: steadier than wall time on a shared machine), with their ranges.
Goal: at most 1.05.

    .venv/bin/python benchmarks/quickstart_overhead.py [--trials 5] [--flags=--keep_checkpoints] [--repo DIR]

`--repo DIR` runs another checkout's ckptbench (its src/ and examples/), e.g. a
commit from before a change, with this script's bare script and clock.
"""

from __future__ import annotations

import argparse
import os
import pathlib
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
  subprocess.run(cmd, check=True, capture_output=True, env=env)
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
  parser.add_argument("--flags", default="", help="extra `ckptbench run` flags, e.g. --flags=--no-probe")
  parser.add_argument("--bare_keeps", action="store_true", help="the bare script keeps its checkpoints anyway")
  parser.add_argument("--repo", type=pathlib.Path, default=REPO, help="the checkout whose ckptbench runs")
  args = parser.parse_args()
  repo = args.repo.resolve()
  flags = shlex.split(args.flags)
  bare_keeps = args.bare_keeps or "--keep_checkpoints" in flags
  # The quick start repeats until decided (num_repeats: auto, up to 90 s); the bare script does 3 repeats,
  # so the run is held to the same work.
  run = [sys.executable, "-m", "ckptbench", "run", str(repo / "examples" / "quickstart.yaml"), "--no-progress",
         "--set", "num_repeats=3", *flags]  # fmt: skip
  print(f"bare script {'keeps' if bare_keeps else 'removes'} its checkpoints; ckptbench run flags: {flags}")
  walls, cpus = [], []
  with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    for trial in range(args.trials):
      out, bare_out = tmp / f"ckptbench_{trial}", tmp / f"bare_{trial}"

      def run_ours() -> tuple[float, float]:
        return timed(run + ["-o", str(out)], repo, out)

      def run_bare() -> tuple[float, float]:
        return timed([sys.executable, "-c", BARE, str(bare_out), "keep" if bare_keeps else "remove"], repo)

      if trial % 2 == 0:
        a, b = run_ours(), run_bare()
      else:
        b, a = run_bare(), run_ours()
      walls.append((a[0], b[0]))
      cpus.append((a[1], b[1]))
      print(f"pair {trial}: ckptbench {a[0]:.2f} s ({a[1]:.2f} s CPU), bare script {b[0]:.2f} s"
            f" ({b[1]:.2f} s CPU), ratio {a[0] / b[0]:.3f} wall, {a[1] / b[1]:.3f} CPU", flush=True)
      shutil.rmtree(out, ignore_errors=True)  # untimed: the next pair starts with the same free disk
      shutil.rmtree(bare_out, ignore_errors=True)
  for name, pairs in (("wall", walls), ("CPU", cpus)):
    ratios = [a / b for a, b in pairs]
    print(f"{name}: median ckptbench {statistics.median(a for a, _ in pairs):.2f} s, bare script"
          f" {statistics.median(b for _, b in pairs):.2f} s; ratio ckptbench / bare, median of {len(ratios)} pairs:"
          f" {statistics.median(ratios):.3f} (range {min(ratios):.3f}-{max(ratios):.3f}; goal <= 1.05)")


if __name__ == "__main__":
  main()
