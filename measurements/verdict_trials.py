"""A/B and A/A on a busy machine: do the four-word verdicts decide, and decide right?

Each trial is one `ckptbench.run` of a two-variant sweep at the default
settings (`num_repeats: auto`: interleaved random rounds until decided, until
what is left cannot be decided in the 300 s budget, or until it is spent), with
background load this script starts itself and bounds in time: a CPU hog (a
busy loop) and a disk writer (64 MiB files,
fsynced, in a loop).

- A/B: the `planted` variant really saves more: an extra array of
  `--extra` times the checkpoint's bytes, saved and loaded by Orbax with the
  rest (no sleep anywhere). `--calibrate` measures the save-time ratio several
  extras give here, to pick the one that makes save time 20% slower (twice
  the 10% threshold). Goal: at least 18/20 trials `worse` for its save time,
  none `better`.
- A/A: two variants that differ only by a label (`copy: [0, 1]`). Goal: no
  `better` or `worse` in 20 trials, at least 15/20 `equivalent`.

It prints each trial's verdicts, the counts and the median time to a verdict
(the seconds of rounds until the run stopped, from summary.json `repeats`).

Usage:
  PYTHONPATH=src python measurements/verdict_trials.py --calibrate
  PYTHONPATH=src python measurements/verdict_trials.py [--trials 20] [--extra 4.0] [--no-load]
  PYTHONPATH=src python measurements/verdict_trials.py --only aa --trials 1 --time_budget_s 20  # a smoke test
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import io
import math
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402

import ckptbench  # noqa: E402
from ckptbench.benchmarks.save_restore import SaveRestoreBenchmark, SaveRestoreOptions  # noqa: E402

SAVE, LOAD = "save_0_basics/time_s", "load_0_basics/time_s"


@dataclasses.dataclass(frozen=True)
class PlantedOptions(SaveRestoreOptions):
  """save_restore's options, plus the plant.

  Attributes:
    extra: an extra array saved and loaded with the checkpoint, this fraction of its bytes.
    copy: a label and nothing else (A/A: two names for the same code).
  """

  extra: float | Sequence[float] = 0.0
  copy: int | Sequence[int] = 0


@ckptbench.benchmark_options(PlantedOptions)
class PlantedSave(SaveRestoreBenchmark):
  """save_restore of the suite's array grown by `extra` (more rows): a real difference in bytes saved.

  Every variant takes the same path (a fresh array, built before the timed
  save), so only the bytes differ; a second array would add its own fixed
  cost (at 16 MiB, any second array made the save 1.4x slower).
  """

  _arrays: dict = {}  # (rows, extra) -> the grown array, built once per process

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    (leaf,) = jax.tree_util.tree_leaves(context.pytree)  # the suite's one array
    rows = int(leaf.shape[0] * (1 + context.options.extra)) // 8 * 8  # whole shards on each device
    key = (rows, leaf.shape[1:], str(leaf.sharding))
    if key not in self._arrays:
      data = np.random.default_rng(0).random((rows, *leaf.shape[1:]), dtype=np.float32)  # incompressible
      if len(self._arrays) >= 4:  # a few sizes at a time: memory stays bounded
        self._arrays.clear()
      self._arrays[key] = jax.device_put(data, leaf.sharding)
    context = dataclasses.replace(context, pytree={"params": self._arrays[key]})
    return super().test_fn(context)


SUITE = """
suite_name: {name}
checkpoint_config:
  spec:
    params: {{dtype: float32, shape: [{rows}, 2048], sharding: [fsdp]}}
  fill: random_bits
mesh_config: {{mesh_axes: [fsdp], ici_parallelism: {{fsdp: 4}}}}
benchmarks:
  - generator: __main__.PlantedSave
    options: {{async_enabled: false, use_compression: false, {sweep}}}
"""


@contextlib.contextmanager
def background_load(seconds: float, work: pathlib.Path):
  """A CPU hog and a disk writer, each ending by itself after `seconds`, or as soon as this process
  is gone (killed, its `finally` never run), and stopped on exit."""
  alive = f"time.time() < end and os.getppid() == {os.getpid()}"
  hog = f"import os, time\nend = time.time() + {seconds}\nwhile {alive}: pass\n"
  writer = (
      "import os, time\n"
      f"end = time.time() + {seconds}\nblock = os.urandom(64 << 20)\n"
      f"while {alive}:\n"
      f"  with open({str(work / 'noise.bin')!r}, 'wb') as f:\n"
      "    f.write(block); f.flush(); os.fsync(f.fileno())\n"
  )
  procs = [subprocess.Popen([sys.executable, "-c", code]) for code in (hog, writer)]
  try:
    yield
  finally:
    for proc in procs:
      proc.terminate()
      proc.wait()
    (work / "noise.bin").unlink(missing_ok=True)


def loaded(args, work: pathlib.Path):
  """The background load of one trial (or calibration), bounded by twice its budget and 5 minutes more."""
  budget = args.time_budget_s or 300
  return background_load(2 * budget + 300, work) if args.load else contextlib.nullcontext()


def run_trial(sweep: str, rows: int, out: pathlib.Path, overrides: Sequence[str] = ()) -> ckptbench.RunOutcome:
  text = SUITE.format(name="trial", rows=rows, sweep=sweep)
  suite = ckptbench.load_suite_text(text, file="<verdict_trials>", overrides=overrides)
  with contextlib.redirect_stdout(io.StringIO()):  # the progress lines
    outcome = ckptbench.run(suite, ckptbench.RunSettings(
        output_dir=out, overwrite=True, show_progress=False, remove_repeated_dir=True, probe_storage=False,
        write_views=False, devices=4))  # fmt: skip
  if outcome.exit_code:
    errors = [r.error.text for r in outcome.records if r.error is not None]
    raise SystemExit(f"the trial failed in {out} (exit code {outcome.exit_code}): {errors[:1]}")
  return outcome


def verdict_of(outcome: ckptbench.RunOutcome, metric: str):
  (verdict,) = [v for v in outcome.summary.verdicts if v.metric == metric]
  return verdict


def calibrate(args, work: pathlib.Path) -> None:
  """Save-time ratio of each extra against none, `--rounds` interleaved rounds, under the same load.

  A fixed count, not a trial's adaptive stop: a trial that stops early stops on its largest
  estimates, so its ratio overstates the plant."""
  extras = ", ".join(str(e) for e in [0.0] + args.extras)
  outcome = run_trial(f"extra: [{extras}]", args.rows, work / "calibrate", (f"num_repeats={args.rounds}", "interleave_repeats=true"))
  for metric in (SAVE, LOAD):
    for v in (v for v in outcome.summary.verdicts if v.metric == metric):
      print(f"extra {v.variant['extra']}: {metric} ratio {v.ratio:.3f} [{v.low}, {v.high}] {v.verdict.value}")
  by_round = _rounds_of(outcome.records)
  (reference,) = [b.key for b in outcome.summary.benchmarks if b.options["extra"] == 0.0]
  for bench in outcome.summary.benchmarks:
    print(f"{bench.name}: median save {bench.metrics[SAVE].median:.3f} s, load {bench.metrics[LOAD].median:.3f} s")
    if bench.key == reference:
      continue
    for metric in (SAVE, LOAD):
      logs = [math.log(by_round[r][bench.key][metric] / by_round[r][reference][metric]) for r in sorted(by_round)]
      print(f"  {metric}: per-round log ratio median {statistics.median(logs):+.3f}, sd {statistics.stdev(logs):.3f}")


def _rounds_of(records) -> dict[int, dict[str, dict[str, float]]]:
  """round -> benchmark key -> metric -> value, measured runs only."""
  rounds: dict[int, dict[str, dict[str, float]]] = collections.defaultdict(dict)
  for r in ckptbench.timed_runs(records):
    if r.error is None:
      rounds[r.repeat][r.key] = {m: r.value(m) for m in (SAVE, LOAD)}
  return rounds


def trials(args, work: pathlib.Path, sweep: str, label: str) -> list[tuple[str, str, float, int]]:
  rows = []
  overrides = [f"time_budget_s={args.time_budget_s:g}"] if args.time_budget_s else []
  for i in range(args.trials):
    with loaded(args, work):
      outcome = run_trial(sweep, args.rows, work / f"{label}_{i}", overrides)
    save, load = verdict_of(outcome, SAVE), verdict_of(outcome, LOAD)
    rep = outcome.summary.repeats
    rows.append((save.verdict.value, load.verdict.value, rep["seconds"], rep["rounds"]))
    print(f"{label} trial {i:2d}: save {save.ratio:.3f} [{save.low}, {save.high}] {save.verdict.value:12s}"
          f" load {load.ratio:.3f} {load.verdict.value:12s} {rep['rounds']:2d} rounds {rep['seconds']:6.1f} s"
          f" ({rep['stopped']})", flush=True)  # fmt: skip
  return rows


def report(label: str, rows: list[tuple[str, str, float, int]]) -> None:
  saves = collections.Counter(r[0] for r in rows)
  loads = collections.Counter(r[1] for r in rows)
  print(f"{label}: save time {dict(saves)}; load time {dict(loads)};"
        f" median time to a verdict {statistics.median(r[2] for r in rows):.1f} s,"
        f" median rounds {statistics.median(r[3] for r in rows):g}")  # fmt: skip


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--trials", type=int, default=20)
  parser.add_argument("--extra", type=float, default=4.0, help="planted extra bytes, a fraction of the checkpoint")
  parser.add_argument("--rows", type=int, default=2048, help="checkpoint rows of 2048 float32 (2048: 16 MiB)")
  parser.add_argument("--calibrate", action="store_true", help="measure the save-time ratio of --extras")
  parser.add_argument("--extras", type=float, nargs="+", default=[2.0, 4.0, 6.0])
  parser.add_argument("--rounds", type=int, default=12, help="--calibrate's rounds")
  parser.add_argument("--only", choices=("ab", "aa"), help="run one of the two experiments")
  parser.add_argument("--no-load", dest="load", action="store_false", help="no background load")
  parser.add_argument("--time_budget_s", type=float, help="each trial's budget (default: the default, 300 s); a smoke test")
  args = parser.parse_args()
  with tempfile.TemporaryDirectory(prefix="verdict_trials_") as tmp:
    work = pathlib.Path(tmp)
    t0 = time.perf_counter()
    if args.calibrate:
      with loaded(args, work):
        calibrate(args, work)
      return
    results = {}
    if args.only in (None, "ab"):
      results["A/B"] = trials(args, work, f"extra: [0.0, {args.extra}]", "A/B")
    if args.only in (None, "aa"):
      results["A/A"] = trials(args, work, "copy: [0, 1]", "A/A")
    for label, rows in results.items():
      report(label, rows)
    print(f"wall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
  main()
