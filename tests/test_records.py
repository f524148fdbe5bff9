"""Typed records: what results.jsonl and summary.json hold round-trips, and a foreign schema is refused."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ckptbench.api import ConditionalRecord, EffectRecord, HostStatistics, InteractionRecord, MetricEntry, MetricStatistics
from ckptbench.api import FloorShareRecord, Verdict, VerdictRecord
from ckptbench.api._records import (
    BenchmarkSummary,
    ErrorRecord,
    NotRun,
    RunRecord,
    SchemaError,
    SkippedMesh,
    SuiteSummary,
)
from ckptbench.errors import CkptbenchError
from ckptbench.results import read_outputs
from ckptbench.results._results import read_records
from ckptbench.results._writers import ResultsFile, SummaryFile
from ckptbench.stats import summarize_benchmarks

RECORD = RunRecord(
    suite="s", benchmark="b", key="0123456789", generator="m.C", options={"x": 1}, varying={"x": 1},
    mesh=None, checkpoint_config={"spec": {}}, repeat=0, warmup=False, host=0, num_hosts=1,
    path="/out/b/repeat_0", started_at="2026-11-22T00:00:00Z", duration_s=1.5,
    metrics={"save_0_basics/time_s": MetricEntry(1.0, "s")},
    error=ErrorRecord("ValueError", "bad", "Traceback ..."),
)  # fmt: skip
PASSED = RunRecord.from_json(RECORD.to_json() | {"error": None})


def _summary() -> SuiteSummary:
  return SuiteSummary(
      suite="s", reference={"x": 1}, interrupted=True, skipped_meshes=[SkippedMesh("fsdp=16", "needs 16 devices")],
      notes=["emulated"], invalid_combinations=[NotRun("m.C", {"x": 2}, "x=2 needs y")],
      benchmarks=summarize_benchmarks([RECORD, RunRecord.from_json(PASSED.to_json() | {"repeat": 1})]),
      repeats={"mode": "auto", "rounds": 8, "looks": 6, "alpha": 0.05, "stopped": "decided"},
      verdicts=[VerdictRecord("save_0_basics/time_s", "k2", {"x": 2}, {"x": 1}, 1.2, 1.1, 1.3, 8,
                              Verdict.WORSE, "the rule")],
      floor={"x": 1},
      floor_shares=[FloorShareRecord("save_0_basics/time_s", "k2", {"x": 2}, {"x": 1}, 0.8, 0.7, 0.9, 0.75, 3, True,
                                     1.25, 1.0)],
  )  # fmt: skip


def test_a_record_round_trips_through_results_jsonl(tmp_path):
  ResultsFile(tmp_path).add([RECORD])
  line = json.loads((tmp_path / "results.jsonl").read_text())
  assert list(line)[0] == "schema_version" and line["error"]["type"] == "ValueError"
  assert read_records(tmp_path) == [RECORD]
  assert RECORD.failed and not PASSED.failed and PASSED.value("save_0_basics/time_s") == 1.0


def test_an_exception_becomes_an_error_record_with_its_traceback():
  try:
    raise KeyError("missing")
  except KeyError as e:
    error = ErrorRecord.from_exception(e)
  assert (error.type, error.message, error.text) == ("KeyError", "'missing'", "KeyError: 'missing'")
  assert "raise KeyError" in error.traceback


def test_another_schema_version_in_results_jsonl_is_refused_with_its_file_and_line(tmp_path):
  with pytest.raises(SchemaError, match="schema_version 2"):
    RunRecord.from_json(RECORD.to_json() | {"schema_version": 2})
  ResultsFile(tmp_path).add([RECORD, PASSED])
  with open(tmp_path / "results.jsonl", "a") as f:
    f.write(json.dumps(RECORD.to_json() | {"schema_version": 2}) + "\n")
  with pytest.raises(CkptbenchError, match=r"results\.jsonl:3: .*schema_version 2; this ckptbench reads 1"):
    read_outputs(tmp_path)


def test_a_summary_entry_is_typed_and_round_trips():
  (summary,) = summarize_benchmarks([PASSED, RunRecord.from_json(PASSED.to_json() | {"repeat": 1})])
  assert isinstance(summary, BenchmarkSummary) and (summary.runs, summary.failed) == (2, 0)
  assert summary.metrics["save_0_basics/time_s"] == MetricStatistics("s", n=2, mean=1.0, std=0.0, min=1.0, max=1.0, median=1.0)
  assert BenchmarkSummary.from_json(summary.to_json()) == summary
  with pytest.raises(SchemaError, match="lacks metrics"):
    BenchmarkSummary.from_json({k: v for k, v in summary.to_json().items() if k != "metrics"})


def test_summary_json_round_trips_in_the_documented_shape(tmp_path):
  summary = _summary()
  SummaryFile(tmp_path).finish(summary, {})
  data = json.loads((tmp_path / "summary.json").read_text())
  assert list(data) == [
      "schema_version", "suite", "reference", "interrupted", "skipped_meshes", "notes",
      "invalid_combinations", "unsupported", "repeats", "verdicts", "effects", "interactions", "floor", "floor_shares",
      "benchmarks",
  ]
  assert data["schema_version"] == 2 and data["verdicts"][0]["verdict"] == "worse"
  assert data["skipped_meshes"] == [{"mesh": "fsdp=16", "reason": "needs 16 devices"}]
  assert data["benchmarks"][0]["errors"] == [{"repeat": 0, "host": 0, "type": "ValueError", "message": "bad"}]
  assert SuiteSummary.from_json(data) == summary
  assert read_outputs(tmp_path).summary == summary
  assert (summary.runs, summary.failed) == (2, 1)


def test_another_schema_version_in_summary_json_is_one_error_naming_the_file(tmp_path):
  (tmp_path / "summary.json").write_text(json.dumps(_summary().to_json() | {"schema_version": 3}))
  with pytest.raises(CkptbenchError, match=r"summary\.json: .*summary schema_version 3; this ckptbench reads 2"):
    read_outputs(tmp_path)


def test_a_version_1_summary_reads_with_no_verdicts_and_a_bad_verdict_is_refused(tmp_path):
  old = {k: v for k, v in _summary().to_json().items() if k not in ("verdicts", "repeats")} | {"schema_version": 1}
  read = SuiteSummary.from_json(old)
  assert read.verdicts == [] and read.schema_version == 1
  bad = _summary().to_json()
  bad["verdicts"][0]["verdict"] = "regressed"
  with pytest.raises(SchemaError, match="none of"):
    SuiteSummary.from_json(bad)
def test_metric_values_keep_the_on_disk_form():
  line = RECORD.to_json()
  assert line["metrics"] == {"save_0_basics/time_s": {"value": 1.0, "unit": "s"}}
  assert RunRecord.from_json(line).metrics["save_0_basics/time_s"] == MetricEntry(1.0, "s")
  entry = BenchmarkSummary.from_json(_summary().to_json()["benchmarks"][0]).metrics["save_0_basics/time_s"]
  assert entry.to_json() == {"unit": "s", "n": 1, "mean": 1.0, "std": 0.0, "min": 1.0, "max": 1.0, "median": 1.0}


def test_cross_host_statistics_round_trip_with_string_host_keys():
  a, b = (RunRecord.from_json(PASSED.to_json() | {"host": h, "num_hosts": 2,
                                                  "metrics": {"t": {"value": v, "unit": "s"}}})
          for h, v in ((0, 1.0), (1, 3.0)))  # fmt: skip
  (summary,) = summarize_benchmarks([a, b])
  hosts = summary.metrics["t"].hosts
  assert isinstance(hosts, HostStatistics) and (hosts.slowest_host, hosts.per_host) == (1, {0: 1.0, 1: 3.0})
  data = summary.metrics["t"].to_json()
  assert data["hosts"]["per_host"] == {"0": 1.0, "1": 3.0}
  assert MetricStatistics.from_json(json.loads(json.dumps(data))) == summary.metrics["t"]


def test_summaries_written_before_typed_values_still_read():
  # Older files: "hosts": null for a multi-host metric without samples; n 0 with no statistics.
  old = {"unit": "s", "n": 0, "hosts": None}
  assert MetricStatistics.from_json(old) == MetricStatistics("s", 0)
  assert MetricStatistics.from_json({"unit": "", "n": 1, "mean": 2, "std": 0, "min": 2, "max": 2, "median": 2}).mean == 2.0
  assert RunRecord.from_json(PASSED.to_json() | {"metrics": {"t": {"value": None, "unit": "s"}}}).value("t") is None
  with pytest.raises(SchemaError, match="statistics of t lacks n"):
    MetricStatistics.from_json({"unit": "s"}, "t")
  with pytest.raises(SchemaError, match="t is not a"):
    RunRecord.from_json(PASSED.to_json() | {"metrics": {"t": 1.0}})


def test_effects_and_interactions_round_trip_through_summary_json(tmp_path):
  effect = EffectRecord(metric="save_0_basics/time_s", factor="use_ocdbt", level=True, reference_level=False,
                        ratio=0.72, low=0.69, high=0.75, verdict=Verdict.BETTER, threshold=0.1, confidence=0.999,
                        rounds=10, combinations=4, possible=4)  # fmt: skip
  interaction = InteractionRecord(
      metric="save_0_basics/time_s", factors=("use_ocdbt", "use_zarr3"), levels={"use_ocdbt": True, "use_zarr3": True},
      reference_levels={"use_ocdbt": False, "use_zarr3": False}, ratio=1.2, low=1.1, high=1.3, verdict=Verdict.WORSE,
      threshold=0.1, confidence=0.998, conditional=(ConditionalRecord("use_ocdbt", True, False, "use_zarr3", True, 0.84,
                                                                      0.81, 0.86),),
  )  # fmt: skip
  summary = dataclasses.replace(_summary(), effects=[effect], interactions=[interaction])
  SummaryFile(tmp_path).finish(summary, {})
  data = json.loads((tmp_path / "summary.json").read_text())
  assert list(data["effects"][0])[:8] == ["metric", "factor", "level", "reference_level", "ratio", "low", "high", "verdict"]
  assert data["interactions"][0]["conditional"][0]["given_level"] is True
  assert read_outputs(tmp_path).summary == summary
