"""mlperf_storage: write N, drop caches, read N, with real Orbax (and real processes)."""

from __future__ import annotations

import json

import pytest

import ckptbench
from builtin_support import corrupt_before, errors, flip_chunks, ok_metrics, run_text
from conftest import run_cli

DATA = """\
suite_name: m
checkpoint_config:
  preset: llama-3.1-8b
  scale: 0.00001
  include_optimizer_state: true
mesh_config: {mesh_axes: [fsdp, tensor], ici_parallelism: {fsdp: 4, tensor: 2}}
"""


def test_mlperf_storage_reports_dlio_fields_from_the_slowest_process(tmp_path):
  outcome = run_text(tmp_path, DATA, """\
      benchmarks:
        - generator: mlperf_storage
          options: {num_checkpoints_write: 3, num_checkpoints_read: 2}
      """)
  [m] = ok_metrics(outcome)
  assert m["mlperf_9_other/num_checkpoints_write"].value == 3
  assert m["mlperf_9_other/num_checkpoints_read"].value == 2
  assert m["checkpoint_write_0_basics/count"].value == 3
  size = m["mlperf_9_other/checkpoint_size_GB"].value
  assert size > 0
  # One process: the slowest process's duration is this process's block (within timing overhead).
  mean_write = m["mlperf_9_other/save_checkpoint_duration_mean_seconds"].value
  assert mean_write == pytest.approx(m["checkpoint_write_0_basics/time_s_mean"].value, rel=0.2)
  rate = m["mlperf_9_other/save_checkpoint_io_mean_GB_per_second"].value
  assert rate >= size / (3 * mean_write) * 0.99  # a mean of rates is at least the rate of the mean
  assert m["mlperf_9_other/load_checkpoint_io_mean_GB_per_second"].value > 0
  assert sum(v.value for k, v in m.items() if k.startswith("checkpoint_read_0_basics/cold_cache_")) == 1
  assert m["mlperf_9_other/reads_by_other_process"].value == 0


def _entered(record: ckptbench.RunRecord, block: str) -> int:
  """How many times the run entered the measured `block` (a count is recorded from 2 on)."""
  if record.value(f"{block}_0_basics/time_s") is None:
    return 0
  return int(record.value(f"{block}_0_basics/count") or 1)


WARMED = """\
      num_warmups: 1
      benchmarks:
        - generator: mlperf_storage
          options: {num_checkpoints_write: 3, num_checkpoints_read: 2}
      """


def test_a_warmup_measuring_no_host_memory_writes_and_reads_one_checkpoint(tmp_path):
  outcome = run_text(tmp_path, DATA, WARMED, host_memory="off")
  [warmup] = ckptbench.warmup_runs(outcome.records)
  [timed] = ckptbench.timed_runs(outcome.records)
  assert not warmup.failed and not timed.failed
  for record, written, read in ((warmup, 1, 1), (timed, 3, 2)):
    assert record.value("mlperf_9_other/num_checkpoints_write") == written
    assert record.value("mlperf_9_other/num_checkpoints_read") == read
    assert _entered(record, "checkpoint_write") == written
    assert _entered(record, "checkpoint_read") == read
    assert _entered(record, "verify") == read  # every read checked, in the warm-up too
  # The warm-up evicts before its read as the method does, and its record says what it did.
  assert sum(v.value for k, v in warmup.metrics.items() if k.startswith("checkpoint_read_0_basics/cold_cache_")) == 1
  assert warmup.notes == ["warm-up: 1 checkpoint(s) written and 1 read; the counted runs write 3 and read 2"]
  assert timed.notes == []


def test_a_warmup_measuring_host_memory_does_the_whole_method(tmp_path):
  # A process's read peak grows over its first reads: the reading after a light warm-up would read low.
  outcome = run_text(tmp_path, DATA, WARMED, host_memory="inline")
  [warmup] = ckptbench.warmup_runs(outcome.records)
  assert not warmup.failed and warmup.notes == []
  assert (_entered(warmup, "checkpoint_write"), _entered(warmup, "checkpoint_read")) == (3, 2)


def test_mlperf_storage_check_fails_on_corrupted_chunks(tmp_path):
  # Blocks with the default collectors: 2 writes, then the first read.
  with corrupt_before(3, lambda: flip_chunks(tmp_path / "out")):
    outcome = run_text(tmp_path, DATA, """\
        benchmarks:
          - generator: mlperf_storage
            options: {num_checkpoints_write: 2, num_checkpoints_read: 1, use_ocdbt: false,
                      use_compression: false}
        """)
  assert [t for t, _ in errors(outcome)] == ["DataMismatchError"]


@pytest.mark.slow
def test_mlperf_storage_two_processes_read_what_the_other_wrote(tmp_path):
  suite = tmp_path / "suite.yaml"
  suite.write_text(DATA + """\
benchmarks:
  - generator: mlperf_storage
    options: {num_checkpoints_write: 2, num_checkpoints_read: 2}
""")
  out = tmp_path / "out"
  done = run_cli("launch", "-n", "2", str(suite), "-o", str(out), "--no-progress", timeout=180)
  assert done.returncode == 0, done.stdout + done.stderr
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  assert all(r["warmup"] for r in records[:2])  # the first run on the mesh warms up, on both hosts
  records = [r for r in records if not r["warmup"]]
  assert sorted(r["host"] for r in records) == [0, 1] and not any(r["error"] for r in records)
  for r in records:
    m = r["metrics"]
    assert m["mlperf_9_other/num_processes"]["value"] == 2
    assert m["mlperf_9_other/reads_by_other_process"]["value"] == 1
  # Both processes report the same (slowest-process) durations.
  durations = {r["metrics"]["mlperf_9_other/save_checkpoint_duration_mean_seconds"]["value"] for r in records}
  assert len(durations) == 1
