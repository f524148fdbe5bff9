"""A/A: compare a suite with itself and count false regressions.

Runs a small save/restore suite twice per pair (run A becomes the baseline,
run B is compared with it), over `--pairs` independent pairs, in this process,
at the default settings (threshold 10%, 95% intervals, 5 repeats a side, one
warm-up). A pair is a false alarm when any headline metric is called
worse: that is what would fail a CI job with --fail_on_regression.
Goal: at most 1 false alarm in 20 pairs.

`--design alternating` separates the statistics from the machine: each pair
is one run of 2 x repeats, interleaved, whose even repeats form A and odd
repeats B, so slow drift of a shared machine lands on both sides alike.

Usage:
  PYTHONPATH=src python measurements/baseline_aa.py [--pairs 20] [--repeats 5]
      [--design sequential|alternating]
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import tempfile
import time

from _suite_runs import compare_runs, load, run_once

from ckptbench.analysis import read_run

SUITE = """
suite_name: aa
num_repeats: {repeats}
num_warmups: 1
interleave_repeats: true
checkpoint_config:
  spec:
    params: {{dtype: float32, shape: [{shape}, {shape}], sharding: [fsdp]}}
mesh_config:
  mesh_axes: ["fsdp"]
  ici_parallelism: {{"fsdp": 8}}
benchmarks:
  - generator: save_restore
    options:
      use_ocdbt: [true, false]
      async_enabled: false
"""


def split_run(out: pathlib.Path, work: pathlib.Path, pair: int) -> tuple[pathlib.Path, pathlib.Path]:
  """Even repeats of the run in `out` become run A, odd ones run B."""
  records, manifest = read_run(out)
  sides = []
  for name, parity in (("a", 0), ("b", 1)):
    side = work / f"{name}{pair}"
    side.mkdir(parents=True, exist_ok=True)
    kept = [r for r in records if r.repeat % 2 == parity]
    (side / "results.jsonl").write_text("".join(json.dumps(r.to_json()) + "\n" for r in kept))
    (side / "manifest.json").write_text(json.dumps(manifest))
    sides.append(side)
  return sides[0], sides[1]


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--pairs", type=int, default=20)
  parser.add_argument("--repeats", type=int, default=5)
  parser.add_argument("--shape", type=int, default=2048, help="side of the float32 array saved")
  parser.add_argument("--keep", type=pathlib.Path, help="keep the run directories here")
  parser.add_argument("--design", choices=("sequential", "alternating"), default="sequential")
  args = parser.parse_args()
  alternating = args.design == "alternating"
  suite = load(SUITE.format(repeats=args.repeats * (2 if alternating else 1), shape=args.shape))
  false_alarms = 0
  judged = regressed = improved = 0
  by_metric: collections.Counter[str] = collections.Counter()
  t0 = time.perf_counter()
  with tempfile.TemporaryDirectory(prefix="ckptbench-aa-") as tmp:
    work = args.keep or pathlib.Path(tmp)
    for pair in range(args.pairs):
      if alternating:
        a, b = split_run(run_once(suite, work / f"ab{pair}"), work, pair)
      else:
        a = run_once(suite, work / f"a{pair}")
        b = run_once(suite, work / f"b{pair}")
      comparison = compare_runs(a, b, work)
      headline = [r for r in comparison.rows if r.judged and r.verdict.value != "inconclusive"]
      judged += len(headline)
      bad = comparison.headline_regressions
      regressed += len(bad)
      improved += sum(r.verdict.value == "better" for r in headline)
      by_metric.update(f"{r.name} {r.metric} ({r.ratio:.2f}x, interval {r.low}-{r.high})" for r in bad)
      false_alarms += bool(bad)
      times = [r.ratio for r in comparison.rows if r.metric.endswith("0_basics/time_s") and r.ratio]
      print(
          f"pair {pair + 1:2d}: {len(bad)} headline regression(s) of {len(headline)};"
          f" time ratios B/A {min(times):.2f}-{max(times):.2f}",
          flush=True,
      )
  elapsed = time.perf_counter() - t0
  print(
      f"\nA/A ({args.design}) over {args.pairs} pairs, {args.repeats} repeats a side,"
      f" {args.shape}x{args.shape} float32, defaults (10%, 95% intervals):"
  )
  print(f"  pairs with a false headline regression: {false_alarms} / {args.pairs}  (goal <= 1 in 20)")
  print(f"  headline metric comparisons called worse: {regressed} / {judged} decided, better: {improved}")
  for what, n in by_metric.most_common():
    print(f"    {n}x {what}")
  print(f"  wall time {elapsed:.0f} s (a shared 2-core machine: timings are noisy)")


if __name__ == "__main__":
  main()
