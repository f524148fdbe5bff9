"""GiB/s on each emulated store, OCDBT on and off, at rtt 0 and 20 ms; Orbax (gcs) and DCP (s3)
as a share of the store's own kvstore roofline.

Starts gcp-storage-emulator and moto_server on 127.0.0.1, runs one suite per store and link
setting through `ckptbench run` (a subprocess each), and prints medians over the repeats.
Emulator figures describe the emulator on this machine, not the cloud (docs/storage.md).

Usage:
  .venv/bin/python measurements/storage_rtt.py [--mib 64] [--repeats 3] [--rtts 0,20]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

from ckptbench.storage import running_emulator

SUITE = """\
suite_name: storage rtt {kind}
num_repeats: {repeats}
checkpoint_config:
  spec:
    params: {{dtype: float32, shape: [{rows}, 1024], sharding: [fsdp]}}
  fill: random_bits
mesh_config: {{mesh_axes: [fsdp], ici_parallelism: {{fsdp: 4}}}}
benchmarks:
  - generator: storage
    options: {{object_count: 16, object_size_mib: {object_mib}, use_ocdbt: [false, true], concurrency: 16}}
  - generator: {library}
"""
_ORBAX = "save_restore\n    options: {use_ocdbt: [false, true], use_compression: false, async_enabled: false}"
_DCP = "pytorch\n    options: {library: dcp}"


def _median(records, generator, varying, tag):
  values = [r["metrics"][tag]["value"] for r in records if r["generator"].endswith(generator)
            and all(r["varying"].get(k) == v for k, v in varying.items()) and tag in r["metrics"]]
  return statistics.median(values) if values else float("nan")


def main() -> None:
  parser = argparse.ArgumentParser()
  parser.add_argument("--mib", type=int, default=64, help="checkpoint size (MiB)")
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--rtts", default="0,20", help="rtt values in ms")
  args = parser.parse_args()
  rows = args.mib * 256  # float32 x 1024 columns
  print(f"{'store':5} {'rtt':>5} {'ocdbt':>5} {'kv write':>9} {'kv read':>8} {'lib':5} {'save':>7}"
        f" {'load':>7} {'save/kv':>7} {'load/kv':>7}   (GiB/s; shares of the same-rtt kvstore figure)")
  for kind, library in (("gcs", _ORBAX), ("s3", _DCP)):
    with running_emulator(kind) as emulator, tempfile.TemporaryDirectory() as tmp:
      suite = pathlib.Path(tmp) / "suite.yaml"
      suite.write_text(SUITE.format(kind=kind, repeats=args.repeats, rows=rows, library=library,
                                    object_mib=args.mib / 16))
      for rtt in args.rtts.split(","):
        out = pathlib.Path(tmp) / f"out_{rtt}"
        link = ["--link", f"rtt={rtt}ms"] if float(rtt) else []
        env = {**os.environ, **emulator.env}
        done = subprocess.run(
            [sys.executable, "-m", "ckptbench", "run", str(suite), "-o", str(out), "--checkpoint_root",
             f"{emulator.url}/rtt{rtt}", "--no-views", "--no-probe", "--no-progress", *link],
            env=env, capture_output=True, text=True, timeout=1800)
        if done.returncode:
          print(done.stderr[-2000:])
          continue
        records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
        for ocdbt in (False, True):
          kv_w = _median(records, "StorageBenchmark", {"use_ocdbt": ocdbt}, "write_4_throughput/store_write_gbps")
          kv_r = _median(records, "StorageBenchmark", {"use_ocdbt": ocdbt}, "read_4_throughput/store_read_gbps")
          if kind == "gcs":
            lib, varying = "orbax", {"use_ocdbt": ocdbt}
            gen = "SaveRestoreBenchmark"
          else:  # DCP has no OCDBT: its figures sit on the kvstore-without-OCDBT row only
            lib, varying, gen = "dcp", {}, "PyTorchBenchmark"
            if ocdbt:
              print(f"{kind:5} {rtt:>5} {str(ocdbt):>5} {kv_w:9.3f} {kv_r:8.3f}")
              continue
          if kind == "gcs":
            save = _median(records, gen, varying, "save_4_throughput/save_total_gbps")
            load = _median(records, gen, varying, "load_4_throughput/load_total_gbps")
          else:  # DCP reports no bytes of its own: the checkpoint's bytes over the block time
            size = args.mib / 1024
            save = size / _median(records, gen, varying, "save_0_basics/time_s")
            load = size / _median(records, gen, varying, "load_0_basics/time_s")
          print(f"{kind:5} {rtt:>5} {str(ocdbt):>5} {kv_w:9.3f} {kv_r:8.3f} {lib:5} {save:7.3f} {load:7.3f}"
                f" {save / kv_w:7.2f} {load / kv_r:7.2f}")


if __name__ == "__main__":
  main()
