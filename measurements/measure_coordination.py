"""Cost of the multi-host coordination that every run pays: barriers and the record gather.

Run: `python measurements/measure_coordination.py [-n PROCESSES] [--iterations N]`. It starts N
processes of one jax.distributed job on this machine (2 simulated CPU devices each) and times,
in each, what the runner does around every run: one barrier before it, one `allgather_json` of
a ~5 KB result record, one barrier after it. Goal: well under 50 ms per run for 2-4 processes,
small beside a checkpoint save. The first round (compilation) is reported apart. Figures on a
busy machine are noisy: the median over N rounds is printed, with the 10th and 90th percentiles.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def _child(iterations: int) -> None:
  from ckptbench.distributed import initialize, make_coordinator  # noqa: PLC0415

  initialize("env")
  coordinator = make_coordinator()
  record = {"host": coordinator.process_index, "metrics": {f"op_{i}_0_basics/time_s": {"value": i * 0.1,
            "unit": "s"} for i in range(100)}}  # fmt: skip
  rounds = []
  for i in range(iterations + 1):
    start = time.perf_counter()
    coordinator.barrier(f"before-{i}")
    gathered = coordinator.allgather_json(record)
    coordinator.barrier(f"after-{i}")
    rounds.append(time.perf_counter() - start)
    assert [g["host"] for g in gathered] == list(range(coordinator.process_count))
  if coordinator.process_index == 0:
    print(json.dumps({"first": rounds[0], "rest": rounds[1:], "bytes": len(json.dumps(record))}))


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("-n", type=int, default=2, help="processes")
  parser.add_argument("--iterations", type=int, default=50)
  parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    _child(args.iterations)
    return
  from ckptbench.distributed._launcher import free_port, process_env  # noqa: PLC0415

  port = free_port()
  procs = [
      subprocess.Popen(
          [sys.executable, __file__, "--child", "--iterations", str(args.iterations)],
          env=process_env(os.environ, process_id=i, num_processes=args.n, port=port, devices_per_process=2),
          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
      )  # fmt: skip
      for i in range(args.n)
  ]
  outputs = [p.communicate(timeout=300)[0] for p in procs]
  if any(p.returncode for p in procs):
    sys.exit(f"a process failed: {[p.returncode for p in procs]}")
  result = json.loads(outputs[0].strip().splitlines()[-1])
  rest = sorted(result["rest"])
  p10, p90 = rest[len(rest) // 10], rest[(len(rest) * 9) // 10]
  print(f"{args.n} processes, barrier + allgather_json({result['bytes']} B) + barrier per run:")
  print(f"  first round (compiles): {result['first'] * 1e3:.1f} ms")
  print(f"  median {statistics.median(rest) * 1e3:.2f} ms  (p10 {p10 * 1e3:.2f}, p90 {p90 * 1e3:.2f})"
        f" over {len(rest)} rounds")  # fmt: skip


if __name__ == "__main__":
  main()
