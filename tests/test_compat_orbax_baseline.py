"""compat.orbax's baseline: Orbax's baseline files, through ckptbench's locations, and its raw comparison."""

from __future__ import annotations

import json

import pytest

import ckptbench
from ckptbench.compat.orbax.core import baseline as baseline_lib


def _baseline(sha: str = "abc1234", **overrides) -> baseline_lib.Baseline:
  fields = dict(
      benchmark_name="MyBench", captured_at="2026-05-26T10:00:00Z", captured_at_sha=sha, fixture="/tmp/fixture",
      config={"async_enabled": True},
      metrics={"save_0_basics/time_s": {"mean": 2.0, "max": 3.0}, "load_0_basics/time_s": {"mean": 4.0}},
  )  # fmt: skip
  fields.update(overrides)
  return baseline_lib.Baseline(**fields)


def test_a_baseline_round_trips_sorted_with_float_metrics_and_refuses_another_schema():
  original = _baseline(digests={"w": "ab" * 32}, manifest={"backend": "cpu"})
  payload = json.loads(original.to_json())
  assert list(payload)[0] == "benchmark_name" and payload["schema_version"] == 1
  assert baseline_lib.Baseline.from_json(original.to_json()) == original
  payload["metrics"]["save_0_basics/time_s"]["mean"] = 3
  assert isinstance(baseline_lib.Baseline.from_json(json.dumps(payload)).metrics["save_0_basics/time_s"]["mean"], float)
  payload["schema_version"] = 99
  with pytest.raises(ValueError, match="schema_version 99 != supported 1"):
    baseline_lib.Baseline.from_json(json.dumps(payload))
  minimal = _baseline()
  assert (minimal.digests, minimal.inventory, minimal.manifest) == ({}, {}, {})


def test_the_recorder_writes_sha_named_files_the_comparer_reads(tmp_path):
  recorder = baseline_lib.BaselineRecorder(tmp_path / "new" / "dir")
  written = recorder.write(_baseline(sha="xyz9999"))
  assert written.name == "xyz9999.json" and written.exists()
  assert baseline_lib.BaselineComparer(written).load() == _baseline(sha="xyz9999")
  assert recorder.write(_baseline(sha="")).name == "unknown.json"
  assert sorted(p.name for p in written.parent.iterdir()) == ["unknown.json", "xyz9999.json"]  # no temporary left
  with pytest.raises(ckptbench.CkptbenchError, match="does not exist"):
    baseline_lib.BaselineComparer(tmp_path / "absent.json").load()


def test_the_comparison_is_baseline_over_current_of_one_statistic(tmp_path):
  comparer = baseline_lib.BaselineComparer(baseline_lib.BaselineRecorder(tmp_path).write(_baseline()))
  report = comparer.compare({"save_0_basics/time_s": {"mean": 1.0, "max": 1.0}, "new": {"mean": 5.0}})
  (delta,) = report.deltas
  assert (delta.key, delta.baseline, delta.current, delta.delta_abs, delta.ratio) == ("save_0_basics/time_s", 2.0, 1.0, -1.0, 2.0)
  assert report.missing_in_current == ["load_0_basics/time_s"] and report.missing_in_baseline == ["new"]
  assert comparer.compare({"save_0_basics/time_s": {"max": 1.5}}, stat="max").deltas[0].ratio == 2.0
  assert comparer.compare({"save_0_basics/time_s": {"max": 1.5}}).deltas == []  # no mean on the run's side
  assert comparer.compare({"load_0_basics/time_s": {"mean": 0.0}}).deltas[0].ratio is None


def test_a_baseline_of_another_backend_is_not_compared():
  assert baseline_lib.backend_mismatch(_baseline(manifest={"backend": "tpu"}), "cpu") == "baseline ran on tpu, this run on cpu"
  assert baseline_lib.backend_mismatch(_baseline(manifest={"backend": "cpu"}), "cpu") is None
  assert baseline_lib.backend_mismatch(_baseline(), "cpu") is None  # recorded before backends were
