"""Wall time of the quick-start suite under `ckptbench run` vs a bare script doing the same work.

The guide's tour at 8192x8192 (examples/quickstart.yaml) with the default outputs:
the storage probe (cached when steady), a warm-up per variant, cold loads, results,
summary, verdict tables; the report and TensorBoard are written by a detached
process after the run returns, so they are not in its wall time (the next trial
waits for them, untimed, so they do not slow it). The bare script makes the same
Orbax calls and checks: per variant one warm-up and 3 repeats of async save, page
eviction, load and a bit-exact comparison.

Both run as fresh processes (both pay for importing JAX and Orbax) in alternating
pairs, the order swapped every pair; the figure is the median of the per-pair ratios
with their range. Goal: at most 1.05.

    .venv/bin/python benchmarks/quickstart_overhead.py [--trials 5] [--flags "--no-probe"]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "examples" / "quickstart.yaml"
sys.path.insert(0, str(REPO / "src"))

from ckptbench.views import VIEWS_DONE  # noqa: E402

# The same saves and loads as examples/quickstart.yaml: an 8192x8192 bf16 array over 8 devices,
# use_ocdbt true/false, 1 warm-up + 3 repeats, async save, evict, load, compare.
BARE = r"""
import os, sys, pathlib
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, numpy as np, ml_dtypes
from orbax.checkpoint import v1 as ocp
jax.config.update("jax_enable_x64", True)
out = pathlib.Path(sys.argv[1])
mesh = jax.sharding.Mesh(np.array(jax.devices()), ("fsdp",))
sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("fsdp"))
def shard(index):
  rng = np.random.default_rng(index[0].start or 0)
  return rng.standard_normal((1024, 8192), dtype=np.float32).astype(ml_dtypes.bfloat16)
tree = {"params": jax.make_array_from_callback((8192, 8192), sharding, shard)}
abstract = jax.tree.map(ocp.arrays.to_shape_dtype_struct, tree)
def evict(path):
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
"""


def timed(cmd: list[str]) -> float:
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env["PYTHONPATH"] = str(REPO / "src")
  t0 = time.perf_counter()
  subprocess.run(cmd, check=True, capture_output=True, env=env)
  return time.perf_counter() - t0


def wait_for_views(out: pathlib.Path, timeout_s: float = 300) -> None:
  """Untimed: the detached views of a run finish before the next process starts."""
  deadline = time.monotonic() + timeout_s
  log = out / "views.log"
  while log.exists() and VIEWS_DONE not in log.read_text(errors="replace") and time.monotonic() < deadline:
    time.sleep(0.2)


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--trials", type=int, default=5)
  parser.add_argument("--flags", default="", help="extra `ckptbench run` flags, e.g. --no-probe")
  args = parser.parse_args()
  run = [sys.executable, "-m", "ckptbench", "run", str(QUICKSTART), "--no-progress", *shlex.split(args.flags)]
  ours, bare, ratios = [], [], []
  with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    for trial in range(args.trials):
      out = tmp / f"ckptbench_{trial}"

      def run_ours() -> float:
        t = timed(run + ["-o", str(out)])
        wait_for_views(out)
        return t

      def run_bare() -> float:
        return timed([sys.executable, "-c", BARE, str(tmp / f"bare_{trial}")])

      if trial % 2 == 0:
        a, b = run_ours(), run_bare()
      else:
        b, a = run_bare(), run_ours()
      ours.append(a)
      bare.append(b)
      ratios.append(a / b)
      print(f"pair {trial}: ckptbench {a:.2f} s, bare script {b:.2f} s, ratio {a / b:.3f}", flush=True)
  print(f"median wall time: ckptbench {statistics.median(ours):.2f} s, bare script {statistics.median(bare):.2f} s")
  print(f"ratio ckptbench / bare, median of {len(ratios)} pairs: {statistics.median(ratios):.3f}"
        f" (range {min(ratios):.3f}-{max(ratios):.3f}; goal <= 1.05)")


if __name__ == "__main__":
  main()
