"""A small output directory in the documented format (docs/ARCHITECTURE.md).

Two sweep points of a save/restore benchmark, three repeats each, one failed
repeat, stage breakdowns, inventory, memory, a roofline in the manifest and a
baseline comparison: everything the output writers show.
"""

from __future__ import annotations

import json
import pathlib
import statistics

import pytest

SUITE = "outputs fixture"
GENERATOR = "ckptbench.benchmarks.save_restore.SaveRestoreBenchmark"
CHECKPOINT = {"spec": {"params": {"dtype": "bfloat16", "shape": [256, 256], "sharding": ["fsdp"]}}}
MESH = {"mesh_axes": ["fsdp"], "ici_parallelism": {"fsdp": 8}}


def _metrics(scale: float, repeat: int) -> dict[str, dict[str, float | str]]:
  jitter = 1.0 + 0.05 * repeat
  save_s = 0.4 * scale * jitter
  load_s = 0.2 * scale * jitter
  gib = 0.125
  return {
      "save_0_basics/time_s": {"value": save_s, "unit": "s"},
      "save_0_basics/host_rss_diff_mib": {"value": 12.0 + repeat, "unit": "MiB"},
      "save_2_save_breakdown/serialize_s": {"value": save_s * 0.6, "unit": "s"},
      "save_2_save_breakdown/metadata_write_s": {"value": save_s * 0.1, "unit": "s"},
      "save_2_save_breakdown/commit_s": {"value": save_s * 0.3, "unit": "s"},
      "save_4_throughput/save_total_gbps": {"value": gib / save_s, "unit": "GiB/s"},
      "save_4_throughput/save_total_gbps_of_disk_write": {"value": gib / save_s / 1.2, "unit": "ratio"},
      "save_5_inventory/total_gib": {"value": gib * scale, "unit": "GiB"},
      "save_5_inventory/file_count": {"value": 12.0 * scale, "unit": "count"},
      "save_7_memory/host_rss_peak_mib": {"value": 900.0 + 10 * repeat, "unit": "MiB"},
      "save_7_memory/device_peak_diff_gb": {"value": 0.0625, "unit": "GiB"},
      "load_0_basics/time_s": {"value": load_s, "unit": "s"},
      "load_3_load_breakdown/read_s": {"value": load_s * 0.7, "unit": "s"},
      "load_3_load_breakdown/deserialize_s": {"value": load_s * 0.3, "unit": "s"},
      "load_4_throughput/load_total_gbps": {"value": gib / load_s, "unit": "GiB/s"},
      "load_7_memory/host_rss_peak_mib": {"value": 950.0, "unit": "MiB"},
  }


def _stats(values: list[float], unit: str) -> dict[str, float | str | int]:
  return {
      "unit": unit,
      "n": len(values),
      "mean": statistics.fmean(values),
      "std": statistics.pstdev(values) if len(values) > 1 else 0.0,
      "min": min(values),
      "max": max(values),
      "median": statistics.median(values),
  }


def write_sample_out(out: pathlib.Path) -> pathlib.Path:
  """Writes results.jsonl, summary.json, manifest.json and comparison.json."""
  out.mkdir(parents=True, exist_ok=True)
  records, benchmarks = [], []
  for ocdbt, scale, key in ((True, 1.0, "3f9a1c0d2e"), (False, 1.5, "77b0e1aa04")):
    name = f"SaveRestore use_ocdbt={ocdbt}"
    options = {"use_ocdbt": ocdbt, "use_zarr3": True, "enable_trace": False, "timeout_s": None}
    runs = []
    for repeat in range(3):
      failed = not ocdbt and repeat == 1
      metrics = _metrics(scale, repeat)
      if failed:  # it measured the save, then the load raised
        metrics = {k: v for k, v in metrics.items() if k.startswith("save_0")}
      runs.append(
          {
              "schema_version": 1, "suite": SUITE, "benchmark": name, "key": key,
              "generator": GENERATOR, "options": options, "varying": {"use_ocdbt": ocdbt},
              "mesh": MESH, "checkpoint_config": CHECKPOINT, "repeat": repeat, "warmup": False,
              "host": 0, "num_hosts": 1, "path": f"{out}/{name}/repeat_{repeat}",
              "started_at": f"2026-11-22T08:0{repeat}:00+00:00", "duration_s": 1.0 + repeat,
              "metrics": metrics,
              "error": {"type": "ValueError", "message": "restored data differs <b>", "traceback":
                        "Traceback (most recent call last):\n  ...\nValueError: restored data differs <b>"}
              if failed else None,
          }
      )
    records.extend(runs)
    ok = [r for r in runs if r["error"] is None]
    tags = sorted({t for r in ok for t in r["metrics"]})
    benchmarks.append(
        {
            "name": name, "key": key, "generator": GENERATOR, "options": options,
            "varying": {"use_ocdbt": ocdbt}, "mesh": MESH, "checkpoint_config": CHECKPOINT,
            "runs": len(runs), "failed": len(runs) - len(ok),
            "errors": [{"repeat": r["repeat"], "host": 0, "type": r["error"]["type"],
                        "message": r["error"]["message"]} for r in runs if r["error"]],
            "metrics": {
                t: _stats([r["metrics"][t]["value"] for r in ok], ok[0]["metrics"][t]["unit"])
                for t in tags
            },
        }
    )
  benchmarks[0]["metrics"]["save_0_basics/time_s"]["hosts"] = {
      "n": 2, "min": 0.4, "mean": 0.42, "max": 0.44, "p50": 0.42, "p99": 0.44, "std": 0.02, "slowest_host": 0,
      "slowest_value": 0.44, "per_host": {"0": 0.44, "1": 0.4},
  }
  (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
  verdicts = [  # as the runner computes them (outputs._decisions), here planted
      {"metric": "save_0_basics/time_s", "benchmark": "77b0e1aa04", "variant": {"use_ocdbt": False},
       "reference": {"use_ocdbt": True}, "ratio": 1.5, "low": 1.4, "high": 1.6, "n": 2, "verdict": "worse",
       "rule": "planted", "repeats_needed": None},
  ]  # fmt: skip
  (out / "summary.json").write_text(
      json.dumps({"schema_version": 2, "suite": SUITE, "benchmarks": benchmarks, "verdicts": verdicts}, indent=1)
  )
  manifest = {
      "schema_version": 1, "suite": SUITE, "ckptbench_version": "0.1.0",
      "versions": {"jax": "0.10.2", "orbax-checkpoint": "0.12.8"},
      "git": {"sha": "abc1234", "dirty": False}, "hostname": "testhost", "process_count": 1,
      "devices": {"platform": "cpu", "count": 8}, "xla_flags": "--xla_force_host_platform_device_count=8",
      "started_at": "2026-11-22T08:00:00+00:00", "finished_at": "2026-11-22T08:01:00+00:00",
      "roofline": {"disk_write_gbps": 1.2, "disk_read_cold_gbps": 1.6, "memcpy_gbps": 12.0},
  }
  (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
  row = {"benchmark": "SaveRestore use_ocdbt=True", "key": "3f9a1c0d2e", "unit": "s", "direction": "lower",
         "headline": True, "n_baseline": 8, "n_current": 8, "level": 0.95, "repeats_needed": None}
  comparison = {
      "schema_version": 2, "baseline_label": "abc1234", "threshold": 0.1, "alpha": 0.05,
      "rule": "Hodges-Lehmann 95.00% interval of the unpaired ratio", "verdicts": [],
      "rows": [
          row | {"metric": "save_0_basics/time_s", "baseline": 0.35, "current": 0.42, "ratio": 1.2,
                 "ci_low": 1.1, "ci_high": 1.3, "verdict": "worse"},
          row | {"metric": "load_0_basics/time_s", "baseline": 0.21, "current": 0.21, "ratio": 1.0,
                 "ci_low": 0.95, "ci_high": 1.05, "verdict": "equivalent"},
      ],
      "only_in_baseline": {"benchmarks": [], "metrics": []}, "only_in_current": {"benchmarks": [], "metrics": []},
      "warnings": [], "unmatched": [],
  }  # fmt: skip
  (out / "comparison.json").write_text(json.dumps(comparison))
  return out


@pytest.fixture
def sample_out(tmp_path: pathlib.Path) -> pathlib.Path:
  """A fresh copy of the sample output directory (import this fixture into a test module)."""
  return write_sample_out(tmp_path / "out")
