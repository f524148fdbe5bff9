"""The memory pass's rule (stats/_settled.py), its error rates: A/A pairs called worse/better or equivalent,
planted differences missed; by simulation and on real readings.

- `simulate`: readings drawn around a figure with a spread (normal, or Student's t with 3 degrees of
  freedom: the odd far reading), each side stopped by the rule (`MIN_READINGS` readings at least, or
  `--min_readings`: a minimum weighed; the figure within 2.5% or 2 MiB, `MEMORY_READINGS_CAP` at most), then
  the two compared. Cases: the spreads measured here
  (a 1 MiB save's 1.2 MiB +-0.35, a 4 MiB load's 7 +-1, the 128 MiB OCDBT save's 106 +-0.2, the
  non-OCDBT save's 40 +-7, the load's 178 +-8 and +-15); A/A, a planted difference (64 MiB on the
  small figures, 1.5 times the margin on the large) and a true difference exactly at the margin (8 MiB or 10%), where
  `equivalent` is wrong.
- `real`: one run of `--suite` as a memory pass reads it (a fresh process with glibc's mmap threshold
  fixed, engine/memory/_pass_choices.MEMORY_PASS_ENV, host memory inside its runs), `--readings` readings
  of each benchmark in interleaved rounds, and the readings of the process's first run (a warm-up)
  beside them: where that run reads apart from the rest, a pass needs its warm-up. Then, `--orders`
  times: each benchmark's readings shuffled (they are exchangeable after the warm-up) and cut in two
  halves, each stopped by the rule and the halves compared (an A/A pair of real readings); and each
  benchmark against the first, each side a shuffled half stopped by the rule. The default suite: a 1 MiB
  Orbax save and load, a label (a, b) by a planted 64 MiB allocated inside the save (0, 64):
  tests/memory_benchmarks.LabelledSaveLoad.

    .venv/bin/python measurements/memory_rule.py simulate [--count 4000] [--min_readings 3]
    .venv/bin/python measurements/memory_rule.py real [--suite S] [--readings 20] [--orders 2000]
"""

from __future__ import annotations

import argparse
import collections
import os
import pathlib
import random
import subprocess
import sys
import tempfile
from typing import Callable, Iterator, Sequence

import numpy as np

from ckptbench.api import RunRecord, is_host_memory_tag, judged_as, sampled_records, warmup_runs
from ckptbench.engine.memory._pass_choices import MEMORY_PASS_ENV, MEMORY_READINGS_CAP
from ckptbench.results import read_records
from ckptbench.stats import MIN_READINGS, Direction, decide_settled, readings_settled

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from memory_benchmarks import LABELLED_PAIR_SUITE  # noqa: E402  (the pair lives beside the tests)

THRESHOLD, FLOOR = 0.1, 8.0  # the defaults: 10%, and the memory verdicts' 8 MiB
# (name, figure MiB, spread MiB): the spreads measured here (stats/_settled.py)
CASES = [("1 MiB save", 1.2, 0.35), ("4 MiB load", 7.0, 1.0), ("128 MiB OCDBT save", 106.0, 0.2),
         ("128 MiB non-OCDBT save", 40.0, 7.0), ("128 MiB load", 178.0, 8.0), ("128 MiB load, noisier", 178.0, 15.0)]  # fmt: skip


def stopped(readings: Iterator[float], cap: int = MEMORY_READINGS_CAP, least: int = MIN_READINGS) -> list[float]:
  """The readings a memory pass takes of one tag: until settled (`least` at least), `cap` at most."""
  taken: list[float] = []
  for value in readings:
    taken.append(value)
    if readings_settled(taken, least=least) or len(taken) >= cap:
      break
  return taken


def verdicts(pairs: Callable[[], tuple[list[float], list[float]]], count: int) -> tuple[collections.Counter, float]:
  """Verdict counts over `count` pairs of stopped readings, and the mean readings a side."""
  counts, taken = collections.Counter(), []
  for _ in range(count):
    a, b = pairs()
    taken += [len(a), len(b)]
    counts[decide_settled(a, b, Direction.LOWER, threshold=THRESHOLD, floor=FLOOR).verdict.value] += 1
  return counts, float(np.mean(taken))


def _share(counts: collections.Counter, *words: str) -> str:
  return f"{sum(counts[w] for w in words) / sum(counts.values()):.1%}"


def simulate(count: int, least: int) -> None:
  rng = np.random.default_rng(0)

  def draws(figure: float, spread: float, heavy: bool) -> Iterator[float]:
    while True:
      noise = rng.standard_t(3) / np.sqrt(3.0) if heavy else rng.standard_normal()
      yield max(figure + spread * noise, 0.0)  # memory added is never negative

  print(f"{count:,} pairs per case; each side stopped by the rule ({least} readings at least, {MEMORY_READINGS_CAP}"
        " at most)\n")
  print("| figure (MiB, spread) | tails | readings a side (A/A) | A/A `equivalent` | A/A `worse`/`better` |"
        " planted: `worse` | at the margin: `equivalent` |\n|---|---|---|---|---|---|---|")  # fmt: skip
  for name, figure, spread in CASES:
    margin = max(FLOOR, THRESHOLD * figure)
    plant = 64.0 if figure < FLOOR * 2 else 1.5 * margin
    for heavy in (False, True):
      def pair(shift: float) -> Callable[[], tuple[list[float], list[float]]]:
        return lambda: (stopped(draws(figure, spread, heavy), least=least),
                        stopped(draws(figure + shift, spread, heavy), least=least))

      same, taken = verdicts(pair(0.0), count)
      planted, _ = verdicts(pair(plant), count)
      edge, _ = verdicts(pair(margin), count)
      print(f"| {name} ({figure:g} +-{spread:g}) | {'t, 3 d.f.' if heavy else 'normal'} | {taken:.1f} |"
            f" {_share(same, 'equivalent')} | {_share(same, 'worse', 'better')} | +{plant:.3g}: {_share(planted, 'worse')} |"
            f" +{margin:.3g}: {_share(edge, 'equivalent')} |", flush=True)  # fmt: skip


def readings_of(suite: pathlib.Path, readings: int, out: pathlib.Path
                ) -> tuple[dict[tuple[str, str], list[float]], dict[tuple[str, str], float]]:
  """{(benchmark, tag): readings in the order taken} of one pass-like run, and the same tags' readings in the
  process's first run (a warm-up: its first allocations and compilation)."""
  env = {**os.environ, **MEMORY_PASS_ENV, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "tests")])}
  env.pop("XLA_FLAGS", None)
  done = subprocess.run([sys.executable, "-m", "ckptbench", "run", str(suite), "-o", str(out), "--overwrite",
                         "--host_memory", "inline", "--set", f"num_repeats={readings}", "--set",
                         "interleave_repeats=true", "--no_views", "--no_probe", "--no_progress"],
                        env=env, check=False, capture_output=True, text=True)  # fmt: skip
  if done.returncode != 0:
    raise SystemExit(f"the run failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
  records = read_records(out)
  found: dict[tuple[str, str], list[float]] = {}
  for record in sorted(sampled_records(records), key=lambda r: r.repeat):
    for tag, entry in _judged_memory(record).items():
      found.setdefault((record.benchmark, tag), []).append(entry)
  first = warmup_runs(records)[0]  # results.jsonl keeps the order the runs ran in
  return found, {(first.benchmark, tag): value for tag, value in _judged_memory(first).items()}


def _judged_memory(record: RunRecord) -> dict[str, float]:
  return {tag: e.value for tag, e in record.metrics.items() if is_host_memory_tag(tag) and judged_as(tag) is not None}


def real(suite: pathlib.Path | None, readings: int, orders: int) -> None:
  rng = random.Random(0)
  with tempfile.TemporaryDirectory(prefix="ckptbench-memory-rule-") as tmp:
    if suite is None:
      suite = pathlib.Path(tmp) / "labelled.yaml"
      suite.write_text(LABELLED_PAIR_SUITE)
    print(f"{suite.name}: {readings} readings of each benchmark; load average {os.getloadavg()[0]:.1f}", flush=True)
    found, first = readings_of(suite, readings, pathlib.Path(tmp) / "out")
  for (benchmark, tag), values in found.items():
    print(f"  {benchmark} {tag}: {' '.join(f'{v:.1f}' for v in values)}")
  # Why the pass warms up: a run's reading as the process's first run, against its readings after that run.
  for (benchmark, tag), value in first.items():
    later = found[(benchmark, tag)]
    print(f"  the process's first run ({benchmark} {tag}): {value:.1f} MiB; its {len(later)} readings after it"
          f" {min(later):.1f}-{max(later):.1f} (median {np.median(later):.1f})")
  half = readings // 2

  def halves(values: Sequence[float]) -> tuple[list[float], list[float]]:
    order = rng.sample(list(values), len(values))
    return stopped(iter(order[:half])), stopped(iter(order[half:]))

  print(f"\n{orders:,} shuffles each; each side a half of the readings ({half}), stopped by the rule")
  print("| benchmark | tag | against | readings a side | equivalent | worse | better | inconclusive |\n|---|---|---|---|---|---|---|---|")
  tags = sorted({tag for _, tag in found})
  benchmarks = list(dict.fromkeys(b for b, _ in found))
  for tag in tags:
    for benchmark in benchmarks:
      for against in ([benchmark] if benchmark == benchmarks[0] else [benchmark, benchmarks[0]]):
        a_values, b_values = found[(against, tag)], found[(benchmark, tag)]
        if against == benchmark:
          pairs = lambda values=a_values: halves(values)  # noqa: E731  (an A/A pair: two halves of one benchmark)
        else:
          pairs = lambda a=a_values, b=b_values: (halves(a)[0], halves(b)[1])  # noqa: E731
        counts, taken = verdicts(pairs, orders)
        print(f"| {benchmark} | {tag} | {'itself (A/A)' if against == benchmark else against} | {taken:.1f} |"
              f" {_share(counts, 'equivalent')} | {_share(counts, 'worse')} | {_share(counts, 'better')} |"
              f" {_share(counts, 'inconclusive')} |", flush=True)  # fmt: skip


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("what", choices=("simulate", "real"))
  parser.add_argument("--count", type=int, default=4000)
  parser.add_argument("--min_readings", type=int, default=MIN_READINGS,
                      help=f"simulate: the fewest readings before the rule may stop (the rule's: {MIN_READINGS})")
  parser.add_argument("--suite", type=pathlib.Path, default=None)
  parser.add_argument("--readings", type=int, default=20)
  parser.add_argument("--orders", type=int, default=2000)
  args = parser.parse_args()
  if args.what == "simulate":
    simulate(args.count, args.min_readings)
  else:
    real(args.suite, args.readings, args.orders)


if __name__ == "__main__":
  main()
