"""Typed records: what results.jsonl holds round-trips, and a foreign schema is refused."""

from __future__ import annotations

import json

import pytest

from ckptbench.api._records import ErrorRecord, RunRecord, SchemaError
from ckptbench.errors import CkptbenchError
from ckptbench.outputs._results import ResultsWriter, read_records

RECORD = RunRecord(
    suite="s", benchmark="b", key="0123456789", generator="m.C", options={"x": 1}, varying={"x": 1},
    mesh=None, checkpoint_config={"spec": {}}, repeat=0, warmup=False, host=0, num_hosts=1,
    path="/out/b/repeat_0", started_at="2026-11-22T00:00:00Z", duration_s=1.5,
    metrics={"save_0_basics/time_s": {"value": 1.0, "unit": "s"}},
    error=ErrorRecord("ValueError", "bad", "Traceback ..."),
)  # fmt: skip


def test_a_record_round_trips_through_results_jsonl(tmp_path):
  ResultsWriter(tmp_path).append([RECORD.to_json()])
  line = json.loads((tmp_path / "results.jsonl").read_text())
  assert list(line)[0] == "schema_version" and line["error"]["type"] == "ValueError"
  assert read_records(tmp_path) == [RECORD]
  assert RECORD.failed and not RunRecord.from_json(RECORD.to_json() | {"error": None}).failed


def test_an_exception_becomes_an_error_record_with_its_traceback():
  try:
    raise KeyError("missing")
  except KeyError as e:
    error = ErrorRecord.from_exception(e)
  assert (error.type, error.message) == ("KeyError", "'missing'")
  assert "raise KeyError" in error.traceback


def test_another_schema_version_is_refused_by_name(tmp_path):
  with pytest.raises(SchemaError, match="schema_version 2"):
    RunRecord.from_json(RECORD.to_json() | {"schema_version": 2})
  ResultsWriter(tmp_path).append([RECORD.to_json() | {"schema_version": 2}])
  with pytest.raises(CkptbenchError, match="record 1 cannot be resumed"):
    read_records(tmp_path)


def test_a_summary_entry_is_typed_and_round_trips():
  from ckptbench.api._records import BenchmarkSummary
  from ckptbench.stats import summarize_benchmarks

  measured = RunRecord.from_json(RECORD.to_json() | {"error": None}).to_json()
  (summary,) = summarize_benchmarks([measured, measured | {"repeat": 1}])
  assert isinstance(summary, BenchmarkSummary) and (summary.runs, summary.failed) == (2, 0)
  assert summary.metrics["save_0_basics/time_s"]["n"] == 2
  assert BenchmarkSummary.from_json(summary.to_json()) == summary
  with pytest.raises(SchemaError, match="lacks metrics"):
    BenchmarkSummary.from_json({k: v for k, v in summary.to_json().items() if k != "metrics"})
