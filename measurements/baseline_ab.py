"""A/B: plant a 20% slowdown and count how often the comparison catches it.

A custom benchmark sleeps `base_s` inside its measured block (and, with
`--write_mib`, first writes and fsyncs that much data, for the noise of real
I/O); the "B" code sleeps a controlled extra: the planted fraction of run A's
median block time (`PlantedSlowdown.extra_s`, a class attribute, so the
benchmark key, options and suite stay the same as for a real code change). Each trial runs the suite once as A (the baseline) and
once as B, 5 repeats a side plus one warm-up, and compares at the default
settings (threshold 10%, 95% intervals). Goal: the 20% slowdown of
`work_0_basics/time_s` is called a regression in at least 19 of 20 trials.

Pass several fractions to see the whole picture, e.g. `--extra 0 0.05 0.2`:
0 counts false alarms, 0.05 is below the threshold and must not be called.

Usage:
  PYTHONPATH=src python measurements/baseline_ab.py [--trials 20] [--extra 0.2]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import statistics
import tempfile
import time

from _suite_runs import compare_runs, load, run_once

import ckptbench
from ckptbench.analysis import read_run

METRIC = "work_0_basics/time_s"


@dataclasses.dataclass(frozen=True)
class PlantedOptions(ckptbench.BenchmarkOptions):
  """Options of the planted-slowdown benchmark.

  Attributes:
    base_s: how long the measured block sleeps in the A code.
    write_mib: data written and fsynced inside the block before the sleep.
  """

  base_s: float = 0.2
  write_mib: int = 0


@ckptbench.benchmark_options(PlantedOptions)
class PlantedSlowdown(ckptbench.BenchmarksGenerator):
  """Writes `write_mib`, then sleeps `base_s + extra_s`, inside the measured block `work`."""

  extra_s = 0.0  # the planted slowdown in seconds; the script sets it for the B runs

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    data = os.urandom(context.options.write_mib << 20)
    metrics = ckptbench.Metrics()
    with metrics.measure("work", ["time"]):
      if data:
        with open(context.path / "data.bin", "wb") as f:
          f.write(data)
          f.flush()
          os.fsync(f.fileno())
      time.sleep(context.options.base_s + type(self).extra_s)
    return ckptbench.TestResult(metrics=metrics)


SUITE = """
suite_name: ab
num_repeats: {repeats}
num_warmups: 1
benchmarks:
  - generator: __main__.PlantedSlowdown
    options:
      base_s: {base_s}
      write_mib: {write_mib}
"""


def _median_time(out: pathlib.Path) -> float:
  return statistics.median(r.value(METRIC) for r in read_run(out)[0])


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--trials", type=int, default=20)
  parser.add_argument("--repeats", type=int, default=5)
  parser.add_argument("--base_s", type=float, default=0.2)
  parser.add_argument("--write_mib", type=int, default=0, help="MiB written and fsynced per run")
  parser.add_argument("--extra", type=float, nargs="+", default=[0.2], help="planted slowdowns")
  args = parser.parse_args()
  suite = load(SUITE.format(repeats=args.repeats, base_s=args.base_s, write_mib=args.write_mib))
  t0 = time.perf_counter()
  results = {}
  with tempfile.TemporaryDirectory(prefix="ckptbench-ab-") as tmp:
    work = pathlib.Path(tmp)
    for extra in args.extra:
      verdicts = []
      for trial in range(args.trials):
        PlantedSlowdown.extra_s = 0.0
        a = run_once(suite, work / f"a{trial}")
        PlantedSlowdown.extra_s = extra * _median_time(a)
        b = run_once(suite, work / f"b{trial}")
        row = next(r for r in compare_runs(a, b, work).rows if r.metric == METRIC)
        verdicts.append(row.verdict.value)
        print(
            f"extra {extra:.0%} trial {trial + 1:2d}: {row.verdict.value} (ratio {row.ratio:.3f},"
            f" interval {row.low}-{row.high})",
            flush=True,
        )
      results[extra] = verdicts
  print(
      f"\nA/B with {args.repeats} repeats a side, block = write {args.write_mib} MiB + sleep"
      f" {args.base_s * 1e3:.0f} ms, defaults (10%, 95% intervals):"
  )
  for extra, verdicts in results.items():
    print(f"  planted slowdown {extra:4.0%}: called worse in {verdicts.count('worse')} / {len(verdicts)} trials")
  print("  goal: >= 19 / 20 at 20%; 0 at 0% and 5% (below the threshold)")
  print(f"  wall time {time.perf_counter() - t0:.0f} s (a shared 2-core machine)")


if __name__ == "__main__":
  main()
