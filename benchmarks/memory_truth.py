"""Host memory as ckptbench reads it in one long process vs the same operation done plainly in fresh ones.

Issue 30: a sync save and a load of a 128 MiB bf16 array over `fsdp=8`, 6 repeats.
ckptbench side: `ckptbench run memory_over_checkpoint -k '*async_enabled=False*'` (one
warm-up, 6 repeats in one process), each repeat's `save_`/`load_7_memory/host_rss_peak_diff_mib`.
Fresh side: `--fresh` pairs (default 6) of fresh processes with nothing of ckptbench: one
builds the same array and saves it once, the next loads that checkpoint once. The peak is
the kernel's high-water mark (VmHWM, reset through /proc/self/clear_refs) over the RSS
before the operation, which in a fresh process has no earlier operation's free memory to
reuse (a load after a save in the same process would reuse what the save freed); the load
reads cold (page cache evicted), as ckptbench's loads do.

Prints both sides' readings, their medians, the ratio ckptbench / fresh (goal 0.75-1.15), and
each ckptbench repeat's distance from its median (goal within 25%). The ckptbench side runs twice:
as a timed run does (glibc's defaults), and as a memory pass with `MALLOC_MMAP_THRESHOLD_=33554432`
(docs/metrics.md, *Host memory*); `--long_process_threshold` adds fresh processes with that
threshold too. Linux only (VmHWM).

    .venv/bin/python benchmarks/memory_truth.py [--fresh 6] [--long_process_threshold]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
OPS = ("save", "load")
# The memory pass: glibc's thresholds fixed (the mmap threshold at 32 MiB; the trim threshold then
# stays at 128 KiB), so no thread's arena keeps earlier runs' free memory (docs/metrics.md).
MEMORY_PASS = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20)}

PLAIN = r"""
import gc, json, os, shutil, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, numpy as np, ml_dtypes
from orbax.checkpoint import v1 as ocp
path = sys.argv[1]
mesh = jax.sharding.Mesh(np.array(jax.devices()), ("fsdp",))
sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("fsdp"))
def shard(index):
  rng = np.random.default_rng(index[0].start or 0)
  return rng.standard_normal((1024, 8192), dtype=np.float32).astype(ml_dtypes.bfloat16)
def rss():
  return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
def peak_added(operation):
  gc.collect()
  before = rss()
  with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
  result = operation()
  for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
      return (int(line.split()[1]) * 1024 - before) / 2**20, result
abstract = {"params": jax.ShapeDtypeStruct((8192, 8192), ml_dtypes.bfloat16, sharding=sharding)}
if sys.argv[2] == "save":
  tree = jax.block_until_ready({"params": jax.make_array_from_callback((8192, 8192), sharding, shard)})
  added, _ = peak_added(lambda: ocp.save(path, tree))
else:  # a process of its own: no free memory a save left behind to reuse; read cold, as ckptbench's is
  os.sync()
  for directory, _, names in os.walk(path):
    for name in names:
      fd = os.open(os.path.join(directory, name), os.O_RDONLY)
      os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
      os.close(fd)
  added, restored = peak_added(lambda: jax.block_until_ready(ocp.load(path, abstract_state=abstract)))
  shutil.rmtree(path)
print(json.dumps(added))
"""


def ckptbench_side(scratch: pathlib.Path, env: dict[str, str], name: str) -> dict[str, list[float]]:
  out = scratch / name
  command = [sys.executable, "-m", "ckptbench", "run", "memory_over_checkpoint", "-k", "*async_enabled=False*",
             "-o", str(out), "--no_views", "--no_probe", "--no_progress"]
  subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=REPO, env={**os.environ, **env})
  readings: dict[str, list[float]] = {op: [] for op in OPS}
  for line in (out / "results.jsonl").read_text().splitlines():
    record = json.loads(line)
    if record.get("warmup"):
      continue
    for op in OPS:
      readings[op].append(record["metrics"][f"{op}_7_memory/host_rss_peak_diff_mib"]["value"])
  return readings


def fresh_side(scratch: pathlib.Path, processes: int, env: dict[str, str]) -> dict[str, list[float]]:
  readings: dict[str, list[float]] = {op: [] for op in OPS}
  for i in range(processes):
    for op in OPS:  # the load in a process of its own, reading what the save process wrote
      done = subprocess.run([sys.executable, "-c", PLAIN, str(scratch / f"plain_{i}"), op], check=True,
                            capture_output=True, text=True, env={**os.environ, **env})
      readings[op].append(json.loads(done.stdout.strip().splitlines()[-1]))
  return readings


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--fresh", type=int, default=6, help="fresh processes (default 6)")
  parser.add_argument("--long_process_threshold", action="store_true",
                      help="also the fresh processes with glibc's mmap threshold at 32 MiB, as the memory pass"
                           " has it (where its dynamic threshold ends in a long process: 16 MiB buffers then come"
                           " from the heap, not mmap)")
  args = parser.parse_args()
  print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
  with tempfile.TemporaryDirectory(prefix="memory_truth_") as scratch:
    passes = {"ckptbench": ckptbench_side(pathlib.Path(scratch), {}, "default"),
              "ckptbench memory pass": ckptbench_side(pathlib.Path(scratch), MEMORY_PASS, "memory_pass")}
    sides = {"fresh": fresh_side(pathlib.Path(scratch), args.fresh, {})}
    if args.long_process_threshold:
      sides["fresh, mmap threshold 32 MiB"] = fresh_side(
          pathlib.Path(scratch), args.fresh, MEMORY_PASS)
  for op in OPS:
    for name, fresh in sides.items():
      fresh_median = statistics.median(fresh[op])
      print(f"{op}, {name}: {' '.join(f'{x:.0f}' for x in fresh[op])} MiB (median {fresh_median:.0f})")
    for pass_name, ours in passes.items():
      median = statistics.median(ours[op])
      spread = max(abs(x / median - 1) for x in ours[op])
      ratios = "; ".join(f"/ {name} {median / statistics.median(fresh[op]):.2f}" for name, fresh in sides.items())
      print(f"  {pass_name}: {' '.join(f'{x:.0f}' for x in ours[op])} MiB (median {median:.0f}, every repeat"
            f" within {spread:.0%} of it); ratio {ratios} (goal 0.75-1.15)")
  print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
