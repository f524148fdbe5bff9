"""Hostile files read back: every reader (results, summary, comparison, baseline, history entry and
index, store profile) meets generated damage (bytes that are not UTF-8, values of every wrong type,
non-finite and huge numbers, wrong shapes) and answers with records or one CkptbenchError naming the
file, never another exception; the history gate never exits 0 over an entry it could not judge."""

from __future__ import annotations

import json
import math
import pathlib
import shutil
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_history import _entry, _planted_entries
from views.views_sample import write_sample_out  # tests/views/, a folder of the tests' path

from ckptbench.analysis import capture_baseline, load_baseline
from ckptbench.cli import main
from ckptbench.errors import CkptbenchError
from ckptbench.history import HistoryEntry, HistoryStore
from ckptbench.history._store import INDEX_AFTER
from ckptbench.results import read_outputs, read_records

_FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# Values of every kind a JSON field can hold that a reader must not take for a finite number.
NOT_FINITE = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.floats(min_value=1e151, max_value=1e308),
    st.text(max_size=8), st.none(), st.booleans(),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)  # fmt: skip
ANY_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6,
)


def _damaged(data: bytes, position: int, byte: int) -> bytes:
  position %= len(data)
  return data[:position] + bytes([byte]) + data[position + 1 :]


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> pathlib.Path:
  return write_sample_out(tmp_path_factory.mktemp("sample") / "out")


def _copy(sample: pathlib.Path) -> pathlib.Path:
  target = pathlib.Path(tempfile.mkdtemp(prefix="hostile-")) / "out"
  shutil.copytree(sample, target)
  return target


# -- results.jsonl: a line that is not UTF-8 JSON is skipped and named, as a torn line is
def test_a_0xff_byte_in_results_skips_that_line_and_every_reader_goes_on(sample, caplog):
  out = _copy(sample)
  lines = (out / "results.jsonl").read_bytes().splitlines(keepends=True)
  (out / "results.jsonl").write_bytes(lines[0][:40] + b"\xff" + lines[0][41:] + b"".join(lines[1:]))
  assert len(read_records(out)) == len(lines) - 1
  assert "results.jsonl: skipped 1 line(s) that are not UTF-8 JSON" in caplog.text and "line 1" in caplog.text
  for argv in (["report", str(out)], ["export", str(out), "-o", str(out / "r.csv")]):
    assert main(argv) == 0, argv
  shutil.rmtree(out.parent)


@_FAST
@given(position=st.integers(min_value=0), byte=st.integers(min_value=0, max_value=255))
def test_any_damaged_byte_of_results_reads_or_is_one_error_naming_the_line(sample, position, byte):
  data = _damaged((sample / "results.jsonl").read_bytes(), position, byte)
  out = _copy(sample)
  (out / "results.jsonl").write_bytes(data)
  try:
    records = read_records(out)
    assert all(math.isfinite(v) for r in records for t in r.metrics if (v := r.value(t)) is not None)
  except CkptbenchError as e:
    assert "results.jsonl:" in str(e) and "\n" not in str(e)
  finally:
    shutil.rmtree(out.parent)


@_FAST
@given(field=st.sampled_from(["suite", "repeat", "host", "warmup", "duration_s", "options", "metrics", "notes"]),
       value=ANY_JSON)  # fmt: skip
def test_a_record_field_of_another_type_is_one_error_naming_file_and_line(sample, field, value):
  out = _copy(sample)
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  records[1][field] = value
  (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
  try:
    read_records(out)
  except CkptbenchError as e:
    assert "results.jsonl:2: not a record" in str(e)
  finally:
    shutil.rmtree(out.parent)


# -- summary.json and comparison.json: refused in one line naming file, line and column
@_FAST
@given(name=st.sampled_from(["summary.json", "comparison.json", "manifest.json"]),
       position=st.integers(min_value=0), byte=st.sampled_from([0xFF, 0xC3, 0x80, 0x00, 0x22, 0x7B]))  # fmt: skip
def test_a_damaged_document_reads_or_is_one_error_naming_it(sample, name, position, byte):
  out = _copy(sample)
  (out / name).write_bytes(_damaged((sample / name).read_bytes(), position, byte))
  try:
    read_outputs(out)
  except CkptbenchError as e:
    assert name in str(e) and "\n" not in str(e)
  finally:
    shutil.rmtree(out.parent)


def test_a_0xff_byte_in_summary_names_its_line_and_column(sample, capsys):
  out = _copy(sample)
  (out / "summary.json").write_bytes(b'{"schema_version": 2,\n "suite": "\xff"}')
  assert main(["export", str(out), "-o", str(out / "r.csv")]) == 2
  assert capsys.readouterr().err.strip().endswith("summary.json:2:12: byte 0xff is not UTF-8 text")
  shutil.rmtree(out.parent)


@_FAST
@given(path=st.sampled_from([("benchmarks",), ("verdicts",), ("benchmarks", 0, "metrics"), ("benchmarks", 0, "runs"),
                             ("benchmarks", 0, "metrics", "save_0_basics/time_s", "hosts", "per_host")]),
       value=ANY_JSON)  # fmt: skip
def test_a_summary_of_another_shape_is_one_error(sample, path, value):
  out = _copy(sample)
  doc = json.loads((out / "summary.json").read_text())
  node = doc
  for part in path[:-1]:
    node = node[part]
  node[path[-1]] = value
  (out / "summary.json").write_text(json.dumps(doc))
  try:
    read_outputs(out)
  except CkptbenchError as e:
    assert "summary.json" in str(e) and "\n" not in str(e)
  finally:
    shutil.rmtree(out.parent)


# -- baselines
def _baseline(tmp_path: pathlib.Path, sample: pathlib.Path) -> pathlib.Path:
  return pathlib.Path(capture_baseline(sample, tmp_path / "baselines", label="base"))


def test_baselines_of_another_shape_or_version_are_one_line_naming_the_file(tmp_path, sample):
  path = _baseline(tmp_path, sample)
  doc = json.loads(path.read_text())
  for change, words in (
      ({"benchmarks": [1, 2]}, "benchmarks is list, not an object keyed by benchmark key"),
      ({"schema_version": "1"}, "has schema_version '1', this ckptbench reads 1;"),
  ):
    path.write_text(json.dumps({**doc, **change}))
    with pytest.raises(CkptbenchError, match=words):
      load_baseline(path)
  path.write_bytes(b"\xff" + json.dumps(doc).encode())
  with pytest.raises(CkptbenchError, match=r"base\.json:1:1: byte 0xff is not UTF-8 text"):
    load_baseline(path)


@_FAST
@given(value=NOT_FINITE.filter(lambda v: not (isinstance(v, float) and math.isfinite(v))))
def test_a_baseline_sample_that_is_not_a_finite_number_never_reaches_a_comparison(tmp_path, sample, value):
  path = _baseline(tmp_path, sample)
  doc = json.loads(path.read_text())
  metric = next(iter(next(iter(doc["benchmarks"].values()))["metrics"].values()))
  metric["across_hosts"]["values"][0] = value
  path.write_text(json.dumps(doc))
  with pytest.raises(CkptbenchError, match="not a baseline this ckptbench can read: sample 0 is .*not a finite number"):
    load_baseline(path)


# -- history entries and the gate
def _history(tmp_path: pathlib.Path, entries) -> pathlib.Path:
  hist = tmp_path / "hist"
  store = HistoryStore(hist)
  for entry in entries:
    store.append(entry)
  return hist


def _flat_entries(n: int = 12):
  rng = np.random.default_rng(3)
  return [_entry(i, {"save_0_basics/time_s": 0.1, "load_0_basics/time_s": 0.05}, rng) for i in range(1, n + 1)]


def _newest(hist: pathlib.Path) -> pathlib.Path:
  return sorted((hist / "entries").iterdir())[-1]


@pytest.mark.parametrize("sample_value", ["NaN", "Infinity", "-Infinity", '"fast"', "null", "[1]", "1e308"])
def test_the_gate_never_passes_over_a_newest_entry_it_could_not_judge(tmp_path, capsys, sample_value):
  hist = _history(tmp_path, _flat_entries())
  newest = _newest(hist)
  newest.write_text(newest.read_text().replace('"samples": [', f'"samples": [{sample_value}, ', 1))
  assert main(["history", str(hist)]) == 0  # without the gate: news, not a failure
  argv = ["history", str(hist), "--fail_on_change", "--summary_md", str(tmp_path / "s.md"),
          "--json", str(tmp_path / "h.json")]  # fmt: skip
  assert main(argv) == 5
  out = capsys.readouterr().out
  assert "UNDECIDED: the gate could not judge all of the history" in out
  assert f"skipped an unreadable entry: {newest}: not a ckptbench history entry: point 0 sample 0 is" in out
  assert "**Not judged:**" in (tmp_path / "s.md").read_text()
  (line,) = json.loads((tmp_path / "h.json").read_text())["unjudged"]
  assert line.startswith(f"skipped an unreadable entry: {newest}")


def test_a_planted_step_still_fails_the_gate_beside_an_unreadable_entry(tmp_path, capsys):
  hist = _history(tmp_path, _planted_entries())
  _newest(hist).write_bytes(b"\xff")
  assert main(["history", str(hist), "--fail_on_change"]) == 3
  out = capsys.readouterr().out
  assert "FAIL: worse" in out and "1:1: byte 0xff is not UTF-8 text" in out


def test_a_series_not_tested_fails_the_gate_as_undecided(tmp_path, capsys):
  hist = _history(tmp_path, _flat_entries())
  newest = _newest(hist)
  newest.write_text(newest.read_text().replace('"samples": [', '"samples": [0.0, ', 1))
  assert main(["history", str(hist), "--fail_on_change"]) == 5
  assert "not tested: a sample is not positive" in capsys.readouterr().out


@_FAST
@given(field=st.sampled_from(["median", "low", "high", "samples", "benchmark", "metric", "unit"]), value=ANY_JSON)
def test_a_point_field_of_another_type_or_not_finite_is_refused_naming_the_entry(field, value):
  entry = _flat_entries(1)[0]
  doc = json.loads(entry.to_json())
  doc["points"][0][field] = value
  try:
    read = HistoryEntry.from_json(json.dumps(doc).encode(), "E.json")
  except CkptbenchError as e:
    assert str(e).startswith("E.json") and "\n" not in str(e)
    return
  point = read.points[0]
  assert all(math.isfinite(v) for v in (point.median, point.low, point.high, *point.samples))
  assert all(isinstance(getattr(point, name), str) for name in ("benchmark", "metric", "unit"))


@_FAST
@given(position=st.integers(min_value=0), byte=st.integers(min_value=0, max_value=255))
def test_any_damaged_byte_of_an_entry_reads_or_is_one_error(position, byte):
  data = _damaged(_flat_entries(1)[0].to_json().encode(), position, byte)
  try:
    HistoryEntry.from_json(data, "E.json")
  except CkptbenchError as e:
    assert str(e).startswith("E.json") and "\n" not in str(e)


def test_an_unreadable_index_part_is_skipped_and_its_entries_read_from_entries(tmp_path):
  hist = _history(tmp_path, _flat_entries(INDEX_AFTER + 2))
  assert len(HistoryStore(hist).read()) == INDEX_AFTER + 2  # writes an index part
  (part,) = (hist / "index").iterdir()
  part.write_bytes(b"PAR1\xff\xff")
  history = HistoryStore(hist).read(write_index=False)
  assert len(history) == INDEX_AFTER + 2
  assert len(history.skipped) == 1 and "not a ckptbench history index" in history.skipped[0]


def test_a_history_with_no_readable_entry_is_one_line(tmp_path):
  hist = _history(tmp_path, _flat_entries(2))
  for path in (hist / "entries").iterdir():
    path.write_bytes(b"\xff")
  with pytest.raises(CkptbenchError, match="no entry of the history can be read; .*byte 0xff is not UTF-8 text"):
    HistoryStore(hist).read()


# -- the store profile of `scale`
def test_a_store_profile_of_non_finite_or_wrong_values_is_one_line(tmp_path):
  from ckptbench.engine import store_profile

  path = tmp_path / "store.json"
  for text, words in (('{"latency_s": NaN}', "latency_s is nan, not a finite number"),
                      ('{"latency_s": "1"}', "latency_s is '1', not a finite number"),
                      ('[1]', "not a store profile"), ('{"latency_s": 1,\xff}', "byte 0xff is not UTF-8")):  # fmt: skip
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(CkptbenchError, match=words):
      store_profile(str(path))
