"""Wall time of the quick-start suite under ckptbench vs a bare script doing the same work.

Both run as fresh processes (so both pay for importing JAX and Orbax), alternating,
several times; the figure is the ratio of the medians. Goal: at most 1.10. Printed
twice: with `--no-views` (measuring, recording, summarising: what the harness adds to
the work) and with the default TensorBoard and HTML report written at the end.

    .venv/bin/python benchmarks/quickstart_overhead.py [--trials 5]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "examples" / "quickstart.yaml"

# The same saves and loads as examples/quickstart.yaml: an 8192x8192 bf16 array over
# 8 devices, use_ocdbt true/false, 3 repeats, async save then load then compare.
BARE = r"""
import os, sys, pathlib, shutil
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
for use_ocdbt in (True, False):
  for repeat in range(3):
    path = out / f"{use_ocdbt}" / f"repeat_{repeat}" / "ckpt"
    ctx = ocp.Context()
    ctx.array.saving.use_ocdbt = use_ocdbt
    with ctx:
      ocp.save_async(path, tree).result()
      restored = ocp.load(path, abstract)
    for a, b in zip(tree["params"].addressable_shards, restored["params"].addressable_shards):
      assert np.array_equal(np.asarray(a.data).view(np.uint8), np.asarray(b.data).view(np.uint8))
"""


def timed(cmd: list[str]) -> float:
  t0 = time.perf_counter()
  subprocess.run(cmd, check=True, capture_output=True, env={k: v for k, v in os.environ.items() if k != "XLA_FLAGS"})
  return time.perf_counter() - t0


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--trials", type=int, default=5)
  args = parser.parse_args()
  ours, no_views, bare = [], [], []
  run = [sys.executable, "-m", "ckptbench", "run", str(QUICKSTART), "--no-progress"]
  with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    for trial in range(args.trials):
      ours.append(timed(run + ["-o", str(tmp / f"ckptbench_{trial}")]))
      no_views.append(timed(run + ["-o", str(tmp / f"no_views_{trial}"), "--no-views"]))
      bare.append(timed([sys.executable, "-c", BARE, str(tmp / f"bare_{trial}")]))
      print(f"trial {trial}: ckptbench {ours[-1]:.2f} s, ckptbench --no-views {no_views[-1]:.2f} s,"
            f" bare script {bare[-1]:.2f} s", flush=True)
  m_bare = statistics.median(bare)
  print(f"median wall time of the bare script: {m_bare:.2f} s")
  for label, times in (("ckptbench --no-views", no_views), ("ckptbench (with TensorBoard + HTML report)", ours)):
    m = statistics.median(times)
    print(f"{label}: {m:.2f} s, ratio to bare {m / m_bare:.3f} (goal <= 1.10)")


if __name__ == "__main__":
  main()
