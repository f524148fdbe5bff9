"""Calibration: plant a known effect in every metric family through the public API and read it back.

Each family is a benchmark a user could write (a `BenchmarksGenerator` whose `test_fn` measures
blocks with `ckptbench.Metrics`), run with `ckptbench.run`, with the effect planted in one variant:

- time: a sleep of 0.5 s inside `measure("work")`; read `work_0_basics/time_s`.
- bytes: 2,048 extra rows of 1,024 random uint32 (8 MiB) in the array an Orbax save writes; read
  each repeat's difference, with and without them, of Orbax's own `save_5_inventory/save_total_gb`
  and of the checkpoint directory's `checkpoint_5_inventory/total_gb`.
- throughput: 32 MiB written through a TensorStore kvstore (`ckptbench.write_kvstore`) in a block
  held to 1 s; read TensorStore's `write_6_tensorstore/kvstore_bytes_written` over `write_0_basics/time_s`.
- memory: 160 MiB of 4 MiB arrays freed below a live one (heap churn), then 64 MiB allocated and
  touched as 4 MiB arrays inside `measure("alloc")`; read `alloc_7_memory/host_rss_peak_diff_mib`
  twice: from the memory pass (a run's default: the runs again in a fresh process) and measured
  inside the timed runs (`host_memory="inline"`). The other families measure no host memory.
- leak: 8 small Orbax saves, each followed by 8 MiB allocated and kept (or not: the baseline), with
  `ckptbench.host_live_mib()` after each; read `ckptbench.theil_sen_slope` of that series (MiB
  per save). The same 8 steps without a save as well: with nothing kept, their slope's 95%
  interval must contain 0 (with saves it does not: Orbax 0.12.8 keeps a few KiB per save itself).
- requests: 10 extra objects written through a GCS emulator behind the shaped link
  (`--link rtt=0ms`); read each repeat's difference of `write_5_inventory/store_put_count` and
  `store_put_distinct_count`.
- scale laws: synthetic counts following each law, the law found and its prediction at 64 hosts
  from 1, 2, 4 (and 8 from 1, 2, 4), through `scale`'s model (`_calibration_table.law_rows`).

It prints the table (family, planted, measured, ratio, tolerance, pass) and exits 1 when a row
fails: every repeat must lie within its family's stated tolerance (`_calibration_table.TOLERANCES`).

Usage:
  .venv/bin/python measurements/calibration.py [--repeats 5] [--families time bytes ...]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile
import time
from typing import Iterator

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
from _calibration_table import format_table, interval_row, law_rows, paired_differences, row  # noqa: E402

import ckptbench  # noqa: E402

_MIB = 1 << 20
SLEEP_S = 0.5
EXTRA_ROWS, ROW_BYTES = 2048, 1024 * 4
PACED_MIB, PACED_S = 32, 1.0
CHURN_MIB, ALLOC_MIB, CHUNK_MIB = 160, 64, 4
LEAK_MIB, SAVES = 8, 8
EXTRA_OBJECTS, BASE_OBJECTS = 10, 5


@dataclasses.dataclass(frozen=True)
class PlantOptions(ckptbench.BenchmarkOptions):
  """plant: whether this variant carries the planted effect. The families read as a difference
  (`PAIRED`) run both variants; the others read the planted one against its planted value alone,
  and their test_fns plant it always."""

  plant: bool | list[bool] = True


def _save(path, tree) -> None:
  from orbax.checkpoint import v1 as ocp  # noqa: PLC0415

  ocp.save(path, tree)


@ckptbench.benchmark_options(PlantOptions)
class PlantedSleep(ckptbench.BenchmarksGenerator):
  def test_fn(self, context):
    metrics = ckptbench.Metrics()
    with metrics.measure("work"):
      time.sleep(SLEEP_S)
    return ckptbench.TestResult(metrics=metrics)


@ckptbench.benchmark_options(PlantOptions)
class PlantedRows(ckptbench.BenchmarksGenerator):
  def test_fn(self, context):
    rows = 1024 + (EXTRA_ROWS if context.options.plant else 0)
    array = np.random.default_rng(context.repeat_index).integers(0, 2**32, (rows, ROW_BYTES // 4), dtype=np.uint32)
    metrics = ckptbench.Metrics()
    with metrics.measure("save"):
      _save(context.path / "ckpt", {"weights": array})
    return ckptbench.TestResult(metrics=metrics)


@ckptbench.benchmark_options(PlantOptions)
class PacedWrite(ckptbench.BenchmarksGenerator):
  def test_fn(self, context):
    spec = ckptbench.kvstore_spec(context.path / "kv")
    values = [ckptbench.kvstore_payload(i, _MIB) for i in range(PACED_MIB)]
    metrics = ckptbench.Metrics()
    with metrics.measure("write", ["time", "tensorstore"]):
      start = time.monotonic()
      ckptbench.write_kvstore(spec, values, 4)
      time.sleep(max(0.0, PACED_S - (time.monotonic() - start)))
    return ckptbench.TestResult(metrics=metrics)


def _touched(mib: int) -> np.ndarray:
  return np.ones(mib * _MIB // 8)


@ckptbench.benchmark_options(PlantOptions)
class PlantedAllocation(ckptbench.BenchmarksGenerator):
  def test_fn(self, context):
    churn = [_touched(CHUNK_MIB) for _ in range(CHURN_MIB // CHUNK_MIB)]
    live = _touched(CHUNK_MIB)  # above the churn: the heap cannot shrink below it
    del churn
    metrics = ckptbench.Metrics()
    with metrics.measure("alloc"):
      held = [_touched(CHUNK_MIB) for _ in range(ALLOC_MIB // CHUNK_MIB)]
    del held, live
    return ckptbench.TestResult(metrics=metrics)


def _live_slope(metrics: ckptbench.Metrics, op: str, steps: int, step, plant: bool) -> None:
  """Runs `step(i)` `steps` times, each followed by 8 MiB allocated and kept (`plant`) or dropped,
  reading `ckptbench.host_live_mib()` after each; records the series' Theil-Sen slope with its
  95% interval as `<op>_9_other/live_slope_mib_per_save{,_low,_high}`."""
  kept, live = [], []
  for i in range(steps):
    step(i)
    buffer = _touched(LEAK_MIB)
    if plant:
      kept.append(buffer)
    del buffer
    live.append(ckptbench.host_live_mib())
  slope = ckptbench.theil_sen_slope(live)
  for key, value in (("", slope.per_step), ("_low", slope.low), ("_high", slope.high)):
    metrics.record(op, f"9_other/live_slope_mib_per_save{key}", value, "MiB")


@ckptbench.benchmark_options(PlantOptions)
class PlantedLeak(ckptbench.BenchmarksGenerator):
  def test_fn(self, context):
    metrics = ckptbench.Metrics()
    # Orbax 0.12.8 keeps 5-60 KiB of its own per save (tests/test_memory.py, docs/metrics.md), so
    # the leak-free truth is 0 only without saves: the same steps without Orbax read that one.
    def save(i: int) -> None:
      _save(context.path / f"ckpt_{i}", {"step": np.full(1024, i, dtype=np.int32)})

    _live_slope(metrics, "leak", SAVES, save, context.options.plant)
    _live_slope(metrics, "nosave", SAVES, lambda i: None, context.options.plant)
    return ckptbench.TestResult(metrics=metrics)


@ckptbench.benchmark_options(PlantOptions)
class PlantedObjects(ckptbench.BenchmarksGenerator):
  def test_fn(self, context):
    count = BASE_OBJECTS + (EXTRA_OBJECTS if context.options.plant else 0)
    spec = ckptbench.kvstore_spec(str(context.path / "objects"))
    metrics = ckptbench.Metrics()
    with metrics.measure("write"):
      ckptbench.write_kvstore(spec, [ckptbench.kvstore_payload(i, 4096) for i in range(count)], 4)
    return ckptbench.TestResult(metrics=metrics)


SUITE = """
suite_name: calibration {family}
num_repeats: {repeats}
num_warmups: 1
benchmarks:
  - generator: calibration.{generator}
    options:
      plant: {plant}
"""
GENERATORS = {"time": "PlantedSleep", "bytes": "PlantedRows", "throughput": "PacedWrite",
              "memory": "PlantedAllocation", "leak": "PlantedLeak", "requests": "PlantedObjects"}  # fmt: skip
# The families that read a difference between the planted variant and its baseline.
PAIRED = ("bytes", "leak", "requests")


def _run(family: str, repeats: int, out: pathlib.Path, host_memory: str = "off",
         **settings) -> dict[bool, dict[int, ckptbench.RunRecord]]:  # fmt: skip
  """`{plant: {repeat: record}}` of one family's suite: the memory pass's records with `host_memory="pass"`.

  Its generators are this file's classes imported as the module `calibration` (this directory is on
  the path), as a memory pass's fresh process imports them.
  """
  plant = "[false, true]" if family in PAIRED else "true"
  suite = ckptbench.load_suite_text(SUITE.format(family=family, repeats=repeats, generator=GENERATORS[family],
                                                 plant=plant), file=f"<{family}>")  # fmt: skip
  with contextlib.redirect_stdout(io.StringIO()):
    outcome = ckptbench.run(suite, ckptbench.RunSettings(
        output_dir=out / family, overwrite=True, show_progress=False, remove_repeated_dir=True, probe_storage=False,
        write_views=False, host_memory=host_memory, **settings))  # fmt: skip
  if outcome.exit_code:
    raise SystemExit(f"calibration: the {family} suite failed (exit {outcome.exit_code}); see {out / family}")
  by_plant: dict[bool, dict[int, ckptbench.RunRecord]] = {False: {}, True: {}}
  measured_by = ckptbench.RecordKind.MEMORY_PASS if host_memory == "pass" else ckptbench.RecordKind.TIMED
  for r in outcome.records:
    if r.kind is measured_by:  # the records holding host memory
      by_plant[bool(r.options["plant"])][r.repeat] = r
  return by_plant


def _values(records: dict[int, ckptbench.RunRecord], tag: str, scale: float = 1.0) -> dict[int, float]:
  return {i: r.value(tag) * scale for i, r in records.items() if r.value(tag) is not None}


def _family_rows(family: str, runs: dict[bool, dict[int, ckptbench.RunRecord]]) -> list:
  planted, baseline = runs[True], runs[False]
  if family == "time":
    return [row("time", f"sleep {SLEEP_S:g} s, work_0_basics/time_s", "s", SLEEP_S,
                list(_values(planted, "work_0_basics/time_s").values()))]  # fmt: skip
  if family == "bytes":
    mib = EXTRA_ROWS * ROW_BYTES / _MIB
    return [row("bytes", f"{EXTRA_ROWS} extra rows, {tag}", "MiB", mib,
                paired_differences(_values(planted, tag, 1024), _values(baseline, tag, 1024)))
            for tag in ("save_5_inventory/save_total_gb", "checkpoint_5_inventory/total_gb")]  # fmt: skip
  if family == "throughput":
    rates = [r.value("write_6_tensorstore/kvstore_bytes_written") / _MIB / r.value("write_0_basics/time_s")
             for r in planted.values()]  # fmt: skip
    return [row("throughput", f"{PACED_MIB} MiB in {PACED_S:g} s, kvstore_bytes_written / time_s", "MiB/s",
                PACED_MIB / PACED_S, rates)]  # fmt: skip
  if family.startswith("memory, "):  # "memory, memory pass" or "memory, inline"
    tag, way = "alloc_7_memory/host_rss_peak_diff_mib", family.removeprefix("memory, ")
    return [row("memory", f"{ALLOC_MIB} MiB after {CHURN_MIB} MiB of churn, {tag} ({way})", "MiB", ALLOC_MIB,
                list(_values(planted, tag).values()))]  # fmt: skip
  if family == "leak":
    rows = []
    for op, steps in (("leak", "save"), ("nosave", "step without a save")):
      tag = f"{op}_9_other/live_slope_mib_per_save"
      what = f"theil_sen_slope of host_live_mib after each {steps}"
      rows.append(row("leak", f"{LEAK_MIB} MiB kept per {steps}, {what}", "MiB/save", LEAK_MIB,
                      list(_values(planted, tag).values())))  # fmt: skip
      rows.append(row("leak", f"none kept, {what}", "MiB/save", 0.0, list(_values(baseline, tag).values())))
    # Where nothing at all is kept (no Orbax save, which keeps a few KiB of its own) the interval holds 0.
    rows.append(interval_row("leak", "none kept, no save: 95% interval of the slope contains 0", "MiB/save",
                             list(_values(baseline, tag + "_low").values()),
                             list(_values(baseline, tag + "_high").values())))  # fmt: skip
    return rows
  if family == "requests":
    return [row("requests", f"{EXTRA_OBJECTS} extra objects, {tag}", "requests", EXTRA_OBJECTS,
                paired_differences(_values(planted, tag), _values(baseline, tag)))
            for tag in ("write_5_inventory/store_put_count", "write_5_inventory/store_put_distinct_count")]  # fmt: skip
  raise ValueError(f"unknown family {family!r}")


@contextlib.contextmanager
def _gcs_emulator() -> Iterator[str]:
  """A GCS emulator as a user starts one (`ckptbench emulate gcs`, its exports applied); yields its bucket URL."""
  proc = subprocess.Popen([sys.executable, "-m", "ckptbench", "emulate", "gcs"], stdout=subprocess.PIPE, text=True)
  try:
    saved = dict(os.environ)
    for line in iter(proc.stdout.readline, ""):
      if line.startswith("export "):
        key, _, value = line.removeprefix("export ").strip().partition("=")
        os.environ[key] = shlex.split(value)[0] if value else ""
      elif line.startswith("#"):
        yield line.split(", bucket ")[1].split(". ")[0].rstrip(".")
        break
    else:
      raise SystemExit("calibration: `ckptbench emulate gcs` did not start")
  finally:
    os.environ.clear()
    os.environ.update(saved)
    proc.terminate()
    proc.wait(timeout=30)


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--repeats", type=int, default=5)
  parser.add_argument("--families", nargs="+", default=[*GENERATORS, "scale laws"],
                      choices=[*GENERATORS, "scale laws"])  # fmt: skip
  args = parser.parse_args()
  load = os.getloadavg()[0]
  started = time.monotonic()
  rows = []
  with tempfile.TemporaryDirectory(prefix="ckptbench-calibration-") as tmp:
    out = pathlib.Path(tmp)
    for family in args.families:
      if family == "scale laws":
        rows += law_rows()
      elif family == "memory":
        for host_memory, name in (("pass", "memory, memory pass"), ("inline", "memory, inline")):
          rows += _family_rows(name, _run(family, args.repeats, out / host_memory, host_memory=host_memory))
      elif family == "requests":
        with _gcs_emulator() as bucket:
          rows += _family_rows(family, _run(family, args.repeats, out, link="rtt=0ms",
                                            checkpoint_root=f"{bucket}/calibration"))  # fmt: skip
      else:
        rows += _family_rows(family, _run(family, args.repeats, out))
      print(f"[calibration] {family} done at {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
  print(format_table(rows))
  print(f"\n{args.repeats} repeats per family; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after,"
        f" on {os.cpu_count()} cores; {time.monotonic() - started:.0f} s")  # fmt: skip
  failed = [r for r in rows if not r.passes]
  if failed:
    print(f"{len(failed)} of {len(rows)} rows outside their tolerance", file=sys.stderr)
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
