"""Is `libraries`' floor true? `plain`'s save throughput against `dd ... conv=fsync` of the same bytes.

The shipped example's data (a 128 MiB bf16 array over fsdp=8: 8 shards of 16 MiB) is saved by the
`libraries` built-in's `plain` (`ckptbench run`, one subprocess per round: each shard's bytes
os.write'n and fsync'd to a file of its own, all shards at once); then the same bytes go through
`dd if=SOURCE of=FILE bs=16M count=1 conv=fsync`, one dd per shard, all at once (as `plain`
writes them) and one after another (for context), each source file random and in the page cache.
Rounds alternate the two so drift touches both; the ratio is of the medians.

Usage:
  .venv/bin/python measurements/libraries_floor.py [--dir DIR] [--rounds 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SHARDS, SHARD_MIB = 8, 16
SUITE = """\
suite_name: libraries floor
num_repeats: {repeats}
num_warmups: 1
checkpoint_config:
  spec:
    params: {{dtype: bfloat16, shape: [8192, 8192], sharding: [fsdp]}}
  fill: normal
mesh_config: {{mesh_axes: [fsdp], ici_parallelism: {{fsdp: {shards}}}}}
benchmarks:
  - generator: libraries
    options: {{library: plain}}
"""
_GIB = float(1 << 30)


def plain_gbps(directory: pathlib.Path, repeats: int) -> list[float]:
  """`plain`'s save throughput (GiB/s) in each repeat of one `ckptbench run`."""
  suite = directory / "floor.yaml"
  suite.write_text(SUITE.format(repeats=repeats, shards=SHARDS))
  out = directory / "out"
  shutil.rmtree(out, ignore_errors=True)
  command = [sys.executable, "-m", "ckptbench", "run", str(suite), "-o", str(out), "--host_memory", "off", "--no_probe"]
  subprocess.run(command, check=True, capture_output=True, text=True)
  values = []
  for line in (out / "results.jsonl").read_text().splitlines():
    record = json.loads(line)
    if not record["warmup"] and record.get("kind", "timed") == "timed":
      values.append(record["metrics"]["save_4_throughput/save_total_gbps"]["value"])
  shutil.rmtree(out)
  return values


def dd_gbps(sources: list[pathlib.Path], directory: pathlib.Path, at_once: bool) -> float:
  """GiB/s of one dd per shard (conv=fsync), all at once or one after another."""
  targets = [directory / f"dd_{i}" for i in range(len(sources))]
  commands = [["dd", f"if={s}", f"of={t}", f"bs={SHARD_MIB}M", "count=1", "conv=fsync", "status=none"]
              for s, t in zip(sources, targets)]  # fmt: skip
  start = time.perf_counter()
  if at_once:
    for process in [subprocess.Popen(c) for c in commands]:
      if process.wait():
        raise SystemExit(f"dd failed: {process.args}")
  else:
    for command in commands:
      subprocess.run(command, check=True)
  seconds = time.perf_counter() - start
  for target in targets:
    target.unlink()
  return len(sources) * SHARD_MIB / 1024 / seconds


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--dir", default=None, help="where the files go (default: a temporary directory)")
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--repeats", type=int, default=3, help="plain saves and dd runs per round")
  args = parser.parse_args()
  directory = pathlib.Path(args.dir or tempfile.mkdtemp(prefix="libraries_floor_"))
  directory.mkdir(parents=True, exist_ok=True)
  sources = []
  for i in range(SHARDS):  # random, so no layer below can compress or deduplicate them; read once: cached
    source = directory / f"source_{i}"
    source.write_bytes(os.urandom(SHARD_MIB << 20))
    source.read_bytes()
    sources.append(source)
  plain, at_once, one_by_one = [], [], []
  for _ in range(args.rounds):
    plain += plain_gbps(directory, args.repeats)
    at_once += [dd_gbps(sources, directory, True) for _ in range(args.repeats)]
    one_by_one += [dd_gbps(sources, directory, False) for _ in range(args.repeats)]
  for source in sources:
    source.unlink()
  median = statistics.median
  print(f"{SHARDS} shards of {SHARD_MIB} MiB, {args.rounds} rounds x {args.repeats} repeats, in {directory}")
  print(f"plain (libraries built-in)      {median(plain):.3f} GiB/s  [{min(plain):.3f}-{max(plain):.3f}]")
  print(f"dd conv=fsync, all at once      {median(at_once):.3f} GiB/s  [{min(at_once):.3f}-{max(at_once):.3f}]")
  print(f"dd conv=fsync, one after other  {median(one_by_one):.3f} GiB/s  [{min(one_by_one):.3f}-{max(one_by_one):.3f}]")
  print(f"plain / dd (all at once)        {median(plain) / median(at_once):.2f}x")
  print(f"plain / dd (one after other)    {median(plain) / median(one_by_one):.2f}x")


if __name__ == "__main__":
  main()
