"""`tune` and the effects on a planted sweep beside a neighbour that comes and goes, for real.

The sweep is tests/planted_effects_benchmarks.py's (`use_ocdbt` x `use_zarr3` x `concurrent_gb` 1/4/8: 12
cells, each a sleep of its planted time, the best 0.56 of the reference), with 12% log-normal noise and a
2.5x burst in 1 run of 20 planted on every run. Beside it runs a neighbour: six busy loops, all on for a
few seconds, then all off for a few (`--on_s`, `--off_s`), for as long as the script runs.

It runs `ckptbench.tune` `--tunes` times, then `ckptbench.run` deciding on effects (`decide_on="effects"`),
and prints what tune.json and summary.json say: each tune's answer, its ratio to the reference with the
interval, and its runs against the grid's; each main effect against its plant, with its verdict; and the
load average before and after each.

Usage:
  PYTHONPATH=src python measurements/tune_acceptance.py [--tunes 3] [--on_s 3] [--off_s 3] [--work /tmp/tune_acceptance]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys

import ckptbench
from ckptbench.config import load_suite_text

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
from planted_effects_benchmarks import BEST, planted_time  # noqa: E402  (the plant lives beside the tests)

LEVELS = {"use_ocdbt": [False, True], "use_zarr3": [False, True], "concurrent_gb": [1, 4, 8]}
NOISE = {"noise": 0.12, "burst_every": 20, "base_s": 0.2}
SUITE = """\
suite_name: planted_noisy
num_repeats: auto
interleave_repeats: true
time_budget_s: {budget}
checkpoint_config: {{spec: {{params: {{dtype: float32, shape: [8], sharding: [fsdp]}}}}}}
mesh_config: {{mesh_axes: [fsdp], ici_parallelism: {{fsdp: 8}}}}
benchmarks:
  - generator: planted_effects_benchmarks.PlantedSleepBenchmark
    options: {options}
"""


@contextlib.contextmanager
def neighbour(on_s: float, off_s: float, loops: int = 6):
  """`loops` busy loops, all on for `on_s`, then all off for `off_s`, over and over; each ends by itself once this
  process is gone, and all are stopped on exit."""
  code = (f"import os, time\nwhile os.getppid() == {os.getpid()}:\n"
          f"  end = time.time() + {on_s}\n  while time.time() < end: pass\n  time.sleep({off_s})\n")  # fmt: skip
  procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(loops)]
  try:
    yield
  finally:
    for proc in procs:
      proc.terminate()
      proc.wait()


def _suite(work: pathlib.Path, budget: int):
  options = json.dumps({**LEVELS, **NOISE}).replace('"', "")
  return load_suite_text(SUITE.format(options=options, budget=budget), str(work / "suite.yaml"))


def _settings(out: pathlib.Path, **more) -> ckptbench.RunSettings:
  # The plant is a sleep: no checkpoint to flush, no memory to measure, no storage to probe.
  return ckptbench.RunSettings(output_dir=out, show_progress=False, probe_storage=False, write_views=False,
                               host_memory="off", flush_between_runs=False, **more)  # fmt: skip


def _interval(low: float | None, high: float | None) -> str:
  return "[no interval]" if low is None or high is None else f"[{low:.3g}-{high:.3g}]"


def _load() -> str:
  return "/".join(f"{v:.1f}" for v in os.getloadavg())


def _planted_main(factor: str, level) -> float:
  """The plant's main effect: the level's ratio averaged (log scale) over every other factor's levels."""
  others = {k: v for k, v in LEVELS.items() if k != factor}
  logs = []
  for combo in itertools.product(*others.values()):
    cell = dict(zip(others, combo))
    logs.append(math.log(planted_time(**{**cell, factor: level}) / planted_time(**{**cell, factor: LEVELS[factor][0]})))
  return math.exp(sum(logs) / len(logs))


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--tunes", type=int, default=3)
  parser.add_argument("--on_s", type=float, default=3.0)
  parser.add_argument("--off_s", type=float, default=3.0)
  parser.add_argument("--effects_budget_s", type=int, default=400)
  parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/tune_acceptance"))
  args = parser.parse_args()
  shutil.rmtree(args.work, ignore_errors=True)
  args.work.mkdir(parents=True)
  planted_ratio = planted_time(**BEST) / planted_time()
  print(f"planted best {BEST}, {planted_ratio:.3g}x the reference; noise {NOISE}; neighbour: six busy loops,"
        f" {args.on_s:g} s on, {args.off_s:g} s off")  # fmt: skip
  try:
    with neighbour(args.on_s, args.off_s):
      for k in range(args.tunes):
        before = _load()
        outcome = ckptbench.tune(_suite(args.work, 300), _settings(args.work / f"tune{k}"), "save_0_basics/time_s")
        best = outcome.document["best"]
        held = best["ratio_low"] is not None and best["ratio_low"] <= planted_ratio <= best["ratio_high"]
        print(f"tune {k + 1}: {outcome.answer} ({'the planted best' if best['options'] == BEST else 'NOT the best'});"
              f" ratio {best['ratio_to_reference']:.3g} {_interval(best['ratio_low'], best['ratio_high'])} over"
              f" {best['ratio_rounds']} paired rounds ({'holds' if held else 'MISSES'} {planted_ratio:.3g});"
              f" {outcome.document['runs_measured']} runs where the grid needs"
              f" {outcome.document['grid_runs_at_same_repeats']}; stopped: {outcome.document['stopped']};"
              f" load {before} -> {_load()}")  # fmt: skip
      before = _load()
      ckptbench.run(_suite(args.work, args.effects_budget_s), _settings(args.work / "effects", decide_on="effects"))
      summary = json.loads((args.work / "effects" / "summary.json").read_text())
      print(f"effects: {summary['repeats']['rounds']} rounds, stopped: {summary['repeats']['stopped']};"
            f" load {before} -> {_load()}")
      for e in summary["effects"]:
        if e["metric"] == "save_0_basics/time_s":
          plant = _planted_main(e["factor"], e["level"])
          print(f"  {e['factor']}={e['level']}: {e['ratio']:.3g} {_interval(e['low'], e['high'])} {e['verdict']}"
                f" against the plant {plant:.3g} ({100 * (e['ratio'] / plant - 1):+.1f}%)")
      for i in summary["interactions"]:
        if i["metric"] == "save_0_basics/time_s":
          print(f"  {' x '.join(f'{k}={v}' for k, v in i['levels'].items())}: {i['ratio']:.3g} {i['verdict']}")
  finally:
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
  main()
