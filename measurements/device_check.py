"""The accelerator path on one NVIDIA GPU, checked in one go: prints one table (measurements/device_check.sh runs it).

Usage: python measurements/device_check.py [--work DIR] [--cpu]

Checks, each under its own time limit (about 6 minutes in all):
  1. device memory per block: a save/restore of a 1 GiB bf16 array on one GPU; the load's
     `device_peak_diff_gb` must hold the array (JAX's GPU memory stats, sampled every 5 ms);
  2. device-to-host and host-to-device throughput (1 GiB, best of 5) against the storage probe's
     memcpy, and the save's blocking phase (a device-to-host copy) against both;
  3. the quick start on the GPU(s): `ckptbench run quickstart` with its mesh on the GPUs here;
  4. the CUDA PyTorch generator the CPU path records unsupported: Orbax's
     `pytorch_checkpoint_benchmark`, ported (measurements/run_orbax_modules.py);
  5. training interference with a device-resident model (`training_interference`, Orbax's managers).

--cpu runs the same plumbing on CPU devices (where the GPU-only figures are absent), to check the
script itself on a machine without a GPU. Exit 0 when every check passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import ckptbench

_REPO = pathlib.Path(__file__).resolve().parent.parent
_GIB = 1 << 30
_SIZE_SUITE = """suite_name: "device check: 1 GiB bf16 on one device"
num_repeats: 3
num_warmups: 1
checkpoint_config:
  spec:
    params: {{dtype: bfloat16, shape: [{rows}, 16384]}}
  fill: random_bits
benchmarks:
  - generator: save_restore
    options:
      async_enabled: true
      use_ocdbt: true
"""
_TRANSFER = """
import json, time, jax, numpy as np
size = {size}
device = jax.devices()[0]
host = np.ones(size // 4, np.float32)
def best(f, items):
  times = []
  for item in items:
    t = time.perf_counter(); f(item); times.append(time.perf_counter() - t)
  return size / min(times) / (1 << 30)
h2d = best(lambda _: jax.device_put(host, device).block_until_ready(), range(5))
# A fresh device array per copy: an array caches its host copy after the first.
arrays = [jax.device_put(host + i, device) for i in range(5)]
jax.block_until_ready(arrays)
d2h = best(np.asarray, arrays)
print(json.dumps({{"h2d": h2d, "d2h": d2h, "backend": jax.default_backend(),
                  "kind": jax.devices()[0].device_kind, "count": jax.device_count()}}))
"""


class Table:
  """The rows of the one table printed at the end: check, figure, against, verdict."""

  def __init__(self):
    self.rows: list[tuple[str, str, str, str]] = []

  def add(self, check: str, figure: str, against: str, verdict: str) -> None:
    self.rows.append((check, figure, against, verdict))
    print(f"[device_check] {check}: {figure} | {against} | {verdict}", flush=True)

  def print(self) -> None:
    head = ("check", "figure", "against", "verdict")
    widths = [max(len(r[i]) for r in [head, *self.rows]) for i in range(4)]
    for row in [head, tuple("-" * w for w in widths), *self.rows]:
      print(" | ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())

  @property
  def passed(self) -> bool:
    return all(not r[3].startswith("FAIL") for r in self.rows)


def _run(argv: list[str], timeout_s: float, env: dict[str, str]) -> tuple[int, str, str]:
  """Runs a command; returns its exit code (124 past its limit), its standard output and its last lines."""
  try:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=env, cwd=_REPO)
  except subprocess.TimeoutExpired:
    return 124, "", f"past its limit of {timeout_s:.0f} s"
  lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
  return done.returncode, done.stdout, " / ".join(lines[-3:])


def _records(out: pathlib.Path) -> list[ckptbench.RunRecord]:
  path = out / "results.jsonl"
  lines = path.read_text().splitlines() if path.exists() else []
  return [ckptbench.RunRecord.from_json(json.loads(line)) for line in lines]


def _median(records: list[ckptbench.RunRecord], tag: str) -> float | None:
  values = [v for r in ckptbench.sampled_records(records) if (v := r.value(tag)) is not None]
  return statistics.median(values) if values else None


def _ckptbench(*args: str) -> list[str]:
  return [sys.executable, "-m", "ckptbench", *args]


def check_memory_and_transfers(table: Table, work: pathlib.Path, env: dict[str, str], gpu: bool) -> None:
  size = _GIB if gpu else 64 << 20
  suite = work / "size.yaml"
  suite.write_text(_SIZE_SUITE.format(rows=size // 2 // 16384))
  out = work / "size"
  code, _, tail = _run(_ckptbench("run", str(suite), "-o", str(out), "--no-progress", "--no-views"), 150, env)
  records = _records(out)
  if code or not records:
    table.add("device memory per block", "-", "-", f"FAIL: run exited {code}: {tail}")
    return
  load_peak = _median(records, "load_7_memory/device_peak_diff_gb")
  save_peak = _median(records, "save_7_memory/device_peak_diff_gb")
  if load_peak is None:
    verdict = "FAIL: no device memory figures on a GPU" if gpu else "absent on CPU, as documented"
    table.add("device memory per block", "absent", "-", verdict)
  else:
    wanted = size / _GIB
    table.add("device memory per block", f"load {load_peak:.2f} GiB, save {save_peak or 0:.2f} GiB added",
              f"the array: {wanted:.2f} GiB", "ok" if load_peak >= 0.95 * wanted else "FAIL: the load's peak is below the array")  # fmt: skip

  code, stdout, tail = _run([sys.executable, "-c", _TRANSFER.format(size=size)], 120, env)
  if code:
    table.add("device<->host throughput", "-", "-", f"FAIL: {tail}")
    return
  moved = json.loads(stdout.splitlines()[-1])
  code, stdout, _ = _run(_ckptbench("probe", str(work), "--json", "--no_cache"), 120, env)
  memcpy = json.loads(stdout)["memcpy_gbps"] if not code else None
  against = f"probe memcpy {memcpy:.1f} GiB/s" if memcpy else "probe failed"
  for name, key in (("device-to-host", "d2h"), ("host-to-device", "h2d")):
    if not gpu:
      verdict = "no transfer on CPU (the arrays share host memory)"
    else:  # PCIe 3.0 x16 moves about 12 GiB/s; below 1 GiB/s something is wrong
      verdict = "ok" if moved[key] >= 1.0 else "FAIL: below 1 GiB/s"
    table.add(name, f"{moved[key]:.1f} GiB/s", against, verdict)
  blocking = _median(records, "save_4_throughput/save_blocking_gbps")
  if blocking is not None:
    share = f"{blocking / moved['d2h']:.0%} of device-to-host" + (f", {blocking / memcpy:.0%} of memcpy" if memcpy else "")
    table.add("save's blocking phase", f"{blocking:.1f} GiB/s", share, "ok")


def check_quickstart(table: Table, work: pathlib.Path, env: dict[str, str], devices: int) -> None:
  out = work / "quickstart"
  code, _, tail = _run(_ckptbench("run", "quickstart", "-o", str(out), "--no-progress", "--no-views",
                               "--set", f"mesh_config.ici_parallelism.fsdp={devices}"), 180, env)  # fmt: skip
  records = _records(out)
  failed = sum(1 for r in records if r.failed)
  save = _median(records, "save_0_basics/time_s")
  runs = len(ckptbench.timed_runs(records))  # as the report counts them
  figure = f"{runs} runs, save median {save:.3f} s" if save is not None else f"{runs} runs"
  table.add("quick start", figure, f"{devices} device(s)", "ok" if code in (0, 3, 5) and records and not failed
            else f"FAIL: exit {code}, {failed} failed runs: {tail}")  # fmt: skip


def check_pytorch_module(table: Table, env: dict[str, str], gpu: bool) -> None:
  code, _, tail = _run([sys.executable, str(_REPO / "benchmarks" / "run_orbax_modules.py"), "pytorch_checkpoint_benchmark"],
                    150, env)  # fmt: skip
  unsupported = "needs a CUDA device" in tail or "unsupported" in tail
  if gpu:
    verdict = "ok" if code == 0 and not unsupported else f"FAIL: exit {code}: {tail}"
  else:
    verdict = "recorded unsupported on CPU, as documented" if unsupported else f"FAIL: exit {code}: {tail}"
  table.add("CUDA PyTorch generator", "pytorch_checkpoint_benchmark", "ported Orbax module", verdict)


def check_training_interference(table: Table, work: pathlib.Path, env: dict[str, str], devices: int) -> None:
  out = work / "interference"
  code, _, tail = _run(_ckptbench("run", "training_interference", "-o", str(out), "--no-progress", "--no-views",
                               "--set", f"mesh_config.ici_parallelism={{fsdp: {devices}, tensor: 1}}",
                               "--set", "benchmarks[0].options.api=[checkpoint_manager, training_checkpointer]"),
                    180, env)  # fmt: skip
  records = _records(out)
  ratios = [v for r in ckptbench.sampled_records(records)
            if (v := r.value("interference_9_other/step_slowdown_ratio")) is not None]  # fmt: skip
  failed = sum(1 for r in records if r.failed)
  figure = "slowdown " + ", ".join(f"{x:.2f}x" for x in ratios) if ratios else "no slowdown figure"
  table.add("training interference", figure, "steps overlapping a save vs not",
            "ok" if code in (0, 3, 5) and ratios and not failed else f"FAIL: exit {code}, {failed} failed runs: {tail}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--work", help="scratch directory (default: a temporary one, removed after)")
  parser.add_argument("--cpu", action="store_true", help="run the plumbing on CPU devices (no GPU figures)")
  args = parser.parse_args(argv)
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env["CKPTBENCH_HOST_MEMORY"] = "inline"  # one process per run: the check times itself, not the memory pass
  if args.cpu:
    env["JAX_PLATFORMS"] = "cpu"
  else:
    env.pop("JAX_PLATFORMS", None)
  table = Table()
  started = time.monotonic()
  with tempfile.TemporaryDirectory(prefix="ckptbench-device-check-", dir=args.work) as scratch:
    work = pathlib.Path(scratch)
    code, stdout, tail = _run([sys.executable, "-c", "import jax; d = jax.devices(); print(jax.default_backend(),"
                               " len(d), d[0].device_kind)"], 60, env)  # fmt: skip
    backend, count, kind = stdout.strip().splitlines()[-1].split(" ", 2) if not code else ("none", "0", tail)
    gpu = backend == "gpu"
    if not args.cpu and not gpu:
      table.add("JAX backend", backend, "gpu", f"FAIL: JAX sees no GPU ({kind}); install jax[cuda12]")
      table.print()
      return 1
    table.add("JAX backend", f"{backend}: {count} x {kind}", "gpu" if not args.cpu else "cpu (--cpu)", "ok")
    devices = int(count) if gpu else 8
    check_memory_and_transfers(table, work, env, gpu)
    check_quickstart(table, work, env, devices)
    check_pytorch_module(table, env, gpu)
    check_training_interference(table, work, env, devices)
  print(f"\ndevice check: {time.monotonic() - started:.0f} s; command: {shlex.join(sys.argv)}")
  table.print()
  return 0 if table.passed else 1


if __name__ == "__main__":
  sys.exit(main())
