"""Host memory as ckptbench reads it vs the same operation done plainly in fresh processes.

Issue 30: a sync save and a load of a 128 MiB bf16 array over `fsdp=8`, 6 repeats.
ckptbench side: `ckptbench run memory_over_checkpoint -k '*async_enabled=False*'`, each repeat's
`save_`/`load_7_memory/host_rss_peak_diff_mib`, twice: as a run does by default (a memory pass:
the runs again in a fresh process with glibc's mmap threshold fixed, engine/memory/_pass.py), and
with `--host_memory inline` (inside the timed runs, one long process: what the pass replaces).
Fresh side: `--fresh` pairs (default 6) of fresh processes with nothing of ckptbench: one
builds the same array and saves it once, the next loads that checkpoint once. The peak is
the kernel's high-water mark (VmHWM, reset through /proc/self/clear_refs) over the RSS
before the operation, which in a fresh process has no earlier operation's free memory to
reuse (a load after a save in the same process would reuse what the save freed); the load
reads cold (page cache evicted), as ckptbench's loads do.

Prints both sides' readings, their medians, the ratio ckptbench / fresh (goal 0.75-1.15), and
each ckptbench repeat's distance from its median (goal within 25%). Linux only (VmHWM).
tests/test_memory_pass.py runs the same comparison at 64 MiB.

    .venv/bin/python measurements/memory_truth.py [--fresh 6]
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

import ckptbench

REPO = pathlib.Path(__file__).resolve().parent.parent
OPS = ("save", "load")
SHAPE = (8192, 8192)  # bf16: 128 MiB

PLAIN = r"""
import gc, json, os, shutil, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, numpy as np, ml_dtypes
from orbax.checkpoint import v1 as ocp
path = sys.argv[1]
rows, cols = (int(n) for n in sys.argv[3].split("x"))
mesh = jax.sharding.Mesh(np.array(jax.devices()), ("fsdp",))
sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("fsdp"))
def shard(index):
  rng = np.random.default_rng(index[0].start or 0)
  return rng.standard_normal((rows // 8, cols), dtype=np.float32).astype(ml_dtypes.bfloat16)
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
abstract = {"params": jax.ShapeDtypeStruct((rows, cols), ml_dtypes.bfloat16, sharding=sharding)}
if sys.argv[2] == "save":
  tree = jax.block_until_ready({"params": jax.make_array_from_callback((rows, cols), sharding, shard)})
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


def ckptbench_side(scratch: pathlib.Path, env: dict[str, str], name: str, flags: tuple[str, ...] = (),
                   repeats: int = 6, shape: tuple[int, int] = SHAPE) -> dict[str, list[float]]:
  """Each measured repeat's reading: the memory pass's records where the run had one, else the timed runs'."""
  out = scratch / name
  command = [sys.executable, "-m", "ckptbench", "run", "memory_over_checkpoint", "-k", "*async_enabled=False*",
             "-o", str(out), "--no_views", "--no_probe", "--no_progress", "--set", f"num_repeats={repeats}",
             "--set", f"checkpoint_config.spec.params.shape=[{shape[0]}, {shape[1]}]", *flags]
  subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=REPO, env={**os.environ, **env})
  records = [ckptbench.RunRecord.from_json(json.loads(line)) for line in (out / "results.jsonl").read_text().splitlines()]
  kinds = {r.kind for r in records}
  measured_by = ckptbench.RecordKind.MEMORY_PASS if ckptbench.RecordKind.MEMORY_PASS in kinds else ckptbench.RecordKind.TIMED
  readings: dict[str, list[float]] = {op: [] for op in OPS}
  for record in records:
    if record.kind is measured_by:  # the records holding host memory
      for op in OPS:
        readings[op].append(record.value(f"{op}_7_memory/host_rss_peak_diff_mib"))
  return readings


def fresh_side(scratch: pathlib.Path, processes: int, env: dict[str, str],
               shape: tuple[int, int] = SHAPE) -> dict[str, list[float]]:
  readings: dict[str, list[float]] = {op: [] for op in OPS}
  for i in range(processes):
    for op in OPS:  # the load in a process of its own, reading what the save process wrote
      done = subprocess.run([sys.executable, "-c", PLAIN, str(scratch / f"plain_{i}"), op, f"{shape[0]}x{shape[1]}"],
                            check=True, capture_output=True, text=True, env={**os.environ, **env})
      readings[op].append(json.loads(done.stdout.strip().splitlines()[-1]))
  return readings


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--fresh", type=int, default=6, help="fresh processes (default 6)")
  args = parser.parse_args()
  print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
  default = {"CKPTBENCH_HOST_MEMORY": ""}  # a user who has not chosen: the memory pass
  with tempfile.TemporaryDirectory(prefix="memory_truth_") as scratch:
    passes = {"ckptbench (memory pass, the default)": ckptbench_side(pathlib.Path(scratch), default, "pass"),
              "ckptbench --host_memory inline": ckptbench_side(pathlib.Path(scratch), default, "inline",
                                                              ("--host_memory", "inline"))}
    fresh = fresh_side(pathlib.Path(scratch), args.fresh, {})
  for op in OPS:
    fresh_median = statistics.median(fresh[op])
    print(f"{op}, fresh processes: {' '.join(f'{x:.0f}' for x in fresh[op])} MiB (median {fresh_median:.0f})")
    for pass_name, ours in passes.items():
      median = statistics.median(ours[op])
      spread = max(abs(x / median - 1) for x in ours[op])
      print(f"  {pass_name}: {' '.join(f'{x:.0f}' for x in ours[op])} MiB (median {median:.0f}, every repeat"
            f" within {spread:.0%} of it); ratio to fresh {median / fresh_median:.2f} (goal 0.75-1.15)")
  print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
