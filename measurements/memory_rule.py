"""The memory pass's stopping rule, checked against many readings: how many readings it takes, and how
far its figure lies from the median of them all (stats/_settled.py states the rule and its error).

Each trial runs a suite as a memory pass reads it (a fresh process with glibc's mmap threshold fixed,
engine/_memory_pass_choices.MEMORY_PASS_ENV, host memory measured inside its runs) with `--readings`
readings of every benchmark, taken in interleaved rounds. Each sequence of readings of a judged host-
memory tag is then stopped by the rule in `--orders` random orders of its readings (they are
exchangeable after the warm-up): the figure at the stop (the median of the readings taken) is compared
with the median of all of them. Printed: readings per stop, and the share of stops whose figure lies
within the stated error, over all and per benchmark and tag (the rule's claim: at least 95% in each).

    .venv/bin/python measurements/memory_rule.py [--suite examples/quickstart.yaml] [--trials 4] [--readings 10]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile

from ckptbench.api import is_host_memory_tag, judged_as, sampled_records
from ckptbench.engine.memory._pass_choices import MEMORY_PASS_ENV, MEMORY_READINGS_CAP
from ckptbench.results import read_records
from ckptbench.stats import ERROR_COVERAGE, figure_error, readings_agree

REPO = pathlib.Path(__file__).resolve().parent.parent


def sequences(suite: pathlib.Path, readings: int, out: pathlib.Path) -> dict[tuple[str, str], list[float]]:
  """{(benchmark, tag): readings in the order taken} of one pass-like run."""
  env = {**os.environ, **MEMORY_PASS_ENV, "PYTHONPATH": str(REPO / "src")}
  subprocess.run([sys.executable, "-m", "ckptbench", "run", str(suite), "-o", str(out), "--overwrite",
                  "--host_memory", "inline", "--set", f"num_repeats={readings}", "--no_views", "--no_probe",
                  "--no_progress"], env=env, check=False, capture_output=True)  # fmt: skip
  found: dict[tuple[str, str], list[float]] = {}
  for record in sorted(sampled_records(read_records(out)), key=lambda r: r.repeat):
    for tag, entry in record.metrics.items():
      if is_host_memory_tag(tag) and judged_as(tag) is not None:
        found.setdefault((record.benchmark, tag), []).append(entry.value)
  return found


def stop(readings: list[float]) -> tuple[int, float]:
  """(readings taken, figure) of one tag's sequence under the rule."""
  for n in range(2, min(len(readings), MEMORY_READINGS_CAP) + 1):
    if readings_agree(readings[:n]):
      return n, statistics.median(readings[:n])
  n = min(len(readings), MEMORY_READINGS_CAP)
  return n, statistics.median(readings[:n])


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--suite", type=pathlib.Path, default=REPO / "examples" / "quickstart.yaml")
  parser.add_argument("--trials", type=int, default=4)
  parser.add_argument("--readings", type=int, default=10)
  parser.add_argument("--orders", type=int, default=300)
  args = parser.parse_args()
  rng = random.Random(0)
  taken, within = [], {}
  with tempfile.TemporaryDirectory() as tmp:
    for trial in range(args.trials):
      print(f"trial {trial}: load average {os.getloadavg()[0]:.1f}", flush=True)
      for key, values in sequences(args.suite, args.readings, pathlib.Path(tmp) / f"t{trial}").items():
        print(f"  {key[0]} {key[1]}: {' '.join(f'{v:.1f}' for v in values)}")
        truth = statistics.median(values)
        for _ in range(args.orders):
          order = rng.sample(values, len(values))
          n, figure = stop(order)
          taken.append(n)
          within.setdefault(key, []).append(abs(figure - truth) <= figure_error(figure))
  every = [ok for oks in within.values() for ok in oks]
  print(f"readings per tag until it settles: mean {statistics.mean(taken):.2f}, at the cap {sum(n == MEMORY_READINGS_CAP for n in taken) / len(taken):.0%}")
  print(f"figure within the stated error of the median of all readings: {statistics.mean(every):.1%} of {len(every)}"
        f" stops (the rule states {ERROR_COVERAGE:.0%}; by benchmark and tag:)")
  for (benchmark, tag), oks in sorted(within.items()):
    print(f"  {benchmark} {tag}: {statistics.mean(oks):.1%}")


if __name__ == "__main__":
  main()
