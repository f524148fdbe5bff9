"""Crashes, interruptions, timeouts, full disks and corrupted data never cost finished results.

Real runs only: subprocesses killed with real signals, a real size-limited
tmpfs, real Orbax checkpoints altered on disk.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import jax
import numpy as np
import pytest
from orbax.checkpoint import v1 as ocp

import ckptbench
from ckptbench.benchmarks.save_restore import SaveRestoreOptions, orbax_context
from ckptbench.config import MeshConfig, load_suite, load_suite_text
from ckptbench.engine import run
from ckptbench.engine.loop._runner import run_suite
from ckptbench.engine._settings import RunSettings
from ckptbench.data import build_mesh
from conftest import REPO

pytestmark = pytest.mark.host_memory("inline", reason=(
    "these tests count a crashed, interrupted or timed-out run's records exactly and kill processes "
    "mid-run; a memory pass would run each planted failure a second time"
))

QUICK = dict(show_progress=False, probe_storage=False, write_views=False)

SLEEPY = """\
suite_name: sleepy
num_repeats: 2
num_warmups: 0
benchmarks:
  - generator: reliability_benchmarks.StubbornBenchmark
    options: {sleep_s: [0.3, 0.31, 0.32]}
"""


def summary_shape(summary: dict) -> list:
  """What must match between an interrupted-and-resumed run and an uninterrupted one."""
  return sorted(
      (b["key"], b["name"], b["runs"], b["failed"], sorted((t, m["n"]) for t, m in b["metrics"].items()))
      for b in summary["benchmarks"]
  )


def start_cli(*args: str) -> subprocess.Popen:
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO / "tests"), env.get("PYTHONPATH", "")])
  return subprocess.Popen(
      [sys.executable, "-m", "ckptbench", *args, "--no-progress", "--no-probe"],
      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
  )  # fmt: skip


def wait_for_records(out: pathlib.Path, count: int, proc: subprocess.Popen, limit_s: float = 60) -> None:
  results = out / "results.jsonl"
  end = time.monotonic() + limit_s
  while time.monotonic() < end:
    if results.exists() and results.read_text().count("\n") >= count:
      return
    assert proc.poll() is None, proc.communicate()
    time.sleep(0.02)
  raise AssertionError(f"no {count} records after {limit_s} s")


@pytest.mark.slow
def test_sigkill_mid_suite_then_resume_gives_the_uninterrupted_summary(tmp_path):
  suite = tmp_path / "sleepy.yaml"
  suite.write_text(SLEEPY)
  out = tmp_path / "out"
  proc = start_cli("run", str(suite), "-o", str(out))
  wait_for_records(out, 2, proc)
  proc.send_signal(signal.SIGKILL)
  proc.communicate()
  assert proc.returncode == -signal.SIGKILL
  finished = (out / "results.jsonl").read_text()
  assert not (out / "summary.json").exists()
  # A kill in the middle of a write leaves a torn last line; resume must cope with it.
  with open(out / "results.jsonl", "a") as f:
    f.write('{"schema_version": 1, "suite": "sleepy", "benchm')

  proc = start_cli("run", str(suite), "-o", str(out), "--resume", "--skip_memory_check")
  stdout, stderr = proc.communicate(timeout=120)
  assert proc.returncode == 0, stderr
  lines = (out / "results.jsonl").read_text().splitlines()
  assert (out / "results.jsonl").read_text().startswith(finished)  # finished runs kept as they were
  records = [json.loads(line) for line in lines if not line.endswith('"benchm')]
  assert len(records) == 6 and len(lines) == 7
  assert sorted((r["key"], r["repeat"]) for r in records) == sorted(
      {(r["key"], r["repeat"]) for r in records}
  )  # no run twice
  resumed = json.loads((out / "summary.json").read_text())

  reference = run_suite(load_suite(suite), RunSettings(output_dir=tmp_path / "ref", **QUICK))
  assert summary_shape(resumed) == summary_shape(reference.summary.to_json())


@pytest.mark.slow
def test_sigint_finishes_the_current_run_writes_the_summary_and_exits_130(tmp_path):
  suite = tmp_path / "sleepy.yaml"
  suite.write_text(SLEEPY.replace("[0.3, 0.31, 0.32]", "[0.5, 0.51, 0.52]"))
  out = tmp_path / "out"
  proc = start_cli("run", str(suite), "-o", str(out))
  wait_for_records(out, 1, proc)
  proc.send_signal(signal.SIGINT)
  stdout, stderr = proc.communicate(timeout=60)
  assert proc.returncode == 130, stderr
  assert "stopping after the current run" in stdout
  assert "Traceback" not in stderr
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  assert 1 <= len(records) < 6 and all(r["error"] is None for r in records)
  summary = json.loads((out / "summary.json").read_text())
  assert summary["interrupted"] is True
  assert sum(b["runs"] for b in summary["benchmarks"]) == len(records)


def test_a_run_past_its_timeout_is_a_failure_and_the_suite_goes_on(tmp_path):
  suite = load_suite_text(textwrap.dedent("""\
      suite_name: timeouts
      timeout_s: 30
      num_repeats: 1
      num_warmups: 0
      benchmarks:
        - generator: reliability_benchmarks.StubbornBenchmark
          options: {sleep_s: [20.0, 0.0], timeout_s: 0.3}
      """), str(tmp_path / "s.yaml"))
  t0 = time.perf_counter()
  outcome = run_suite(suite, RunSettings(output_dir=tmp_path / "out", **QUICK))
  assert time.perf_counter() - t0 < 10
  slow, quick = outcome.records
  assert slow.error.type == "Timeout"
  assert slow.error.message.startswith("the run exceeded timeout_s=0.3 (stopped after 0.")
  assert "time.sleep" in slow.error.traceback  # where it was stopped
  # Measured until stopped; the timer and perf_counter differ by up to a millisecond.
  assert 0.29 <= slow.value("work_0_basics/time_s") < 5
  assert not pathlib.Path(slow.path).exists()  # the partial output is removed
  assert quick.error is None and outcome.exit_code == 1
  assert [(b.runs, b.failed) for b in outcome.summary.benchmarks] == [(1, 1), (1, 0)]


def test_a_base_exception_from_a_benchmark_is_its_failure_and_the_suite_goes_on(tmp_path):
  # DCP's CheckpointException derives from BaseException: it must not escape the runner as a traceback.
  suite = load_suite_text(textwrap.dedent("""\
      suite_name: base_exception
      num_repeats: 1
      num_warmups: 0
      benchmarks:
        - generator: reliability_benchmarks.BaseExceptionBenchmark
          options: {fail: [true, false]}
      """), str(tmp_path / "s.yaml"))
  outcome = run_suite(suite, RunSettings(output_dir=tmp_path / "out", **QUICK))
  failed, passed = outcome.records
  assert failed.error.type == "CheckpointFailure"
  assert failed.error.message == "rank 0 failed to write its shard"
  assert passed.error is None and passed.value("work_0_basics/time_s") > 0
  assert outcome.exit_code == 1
  assert [(b.runs, b.failed) for b in outcome.summary.benchmarks] == [(1, 1), (1, 0)]
  written = [json.loads(line)["error"] for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
  assert [e and e["type"] for e in written] == ["CheckpointFailure", None]


def test_suite_wide_timeout_applies_when_options_give_none(tmp_path):
  suite = load_suite_text(textwrap.dedent("""\
      suite_name: timeouts
      timeout_s: 0.2
      benchmarks: [{generator: reliability_benchmarks.StubbornBenchmark, options: {sleep_s: 20.0}}]
      """), str(tmp_path / "s.yaml"))
  outcome = run_suite(suite, RunSettings(output_dir=tmp_path / "out", **QUICK))
  assert outcome.records[0].error.type == "Timeout"
  assert outcome.records[0].duration_s < 5


def run_on_a_small_disk(
    tmp_path: pathlib.Path, suite: pathlib.Path
) -> tuple[subprocess.CompletedProcess, pathlib.Path]:
  """Runs the CLI with OUT on a 2 MiB tmpfs, mounted in a private mount namespace.

  Unprivileged users get the namespace through a user namespace (`unshare -r`),
  so no root is needed where the kernel allows those. Returns the process and a
  copy of OUT's result files (the tmpfs vanishes with the namespace).
  """
  disk, kept = tmp_path / "disk", tmp_path / "kept"
  disk.mkdir()
  kept.mkdir()
  script = (
      f'mount -t tmpfs -o size=2m tmpfs "{disk}" || exit 99\n'
      f'"{sys.executable}" -m ckptbench run "{suite}" -o "{disk}/out" --no-progress --no-probe --skip_disk_check\n'
      f'code=$?; cp "{disk}/out/results.jsonl" "{disk}/out/summary.json" "{kept}/"\n'
      f'find "{disk}/out" -name "repeat_*" > "{kept}/run_dirs"; exit $code'
  )  # fmt: skip
  user = [] if os.geteuid() == 0 else ["--map-root-user"]
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO / "tests"), env.get("PYTHONPATH", "")])
  try:
    done = subprocess.run(
        ["unshare", "--mount", *user, "sh", "-c", script],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
  except FileNotFoundError:
    pytest.skip("no unshare(1) to make a private mount namespace")
  if done.returncode == 99 or "unshare:" in done.stderr:
    pytest.skip(f"cannot mount a tmpfs here (no user namespaces or privileges): {done.stderr.strip()}")
  return done, kept


@pytest.mark.slow
def test_disk_full_mid_save_is_reported_cleaned_up_and_the_suite_goes_on(tmp_path):
  suite = tmp_path / "full.yaml"
  suite.write_text(textwrap.dedent("""\
      suite_name: full
      num_repeats: 1
      num_warmups: 0
      checkpoint_configs:
        - {spec: {big: {dtype: float32, shape: [1048576]}}, fill: random_bits}
        - {spec: {small: {dtype: float32, shape: [1024]}}}
      benchmarks:
        - generator: save_restore
          options: {use_compression: false, async_enabled: [false, true]}
      """))
  done, kept = run_on_a_small_disk(tmp_path, suite)
  assert done.returncode == 1, done.stderr
  out = tmp_path / "disk" / "out"
  records = [json.loads(line) for line in (kept / "results.jsonl").read_text().splitlines()]
  by_name = {r["benchmark"]: r for r in records}
  assert len(by_name) == 4
  for async_enabled in ("False", "True"):
    name = f"SaveRestoreBenchmark(async_enabled={async_enabled}, spec: big float32[1048576]; fill: random_bits)"
    full = by_name[name]
    assert full["error"]["type"] == "DiskFull", full["error"]
    message = full["error"]["message"]
    assert message.startswith(f"out of disk space in benchmark {name} while writing {out}/"), message
    assert f"the partial checkpoint in {full['path']} was removed" in message
    assert f"FAILED: host 0: DiskFull: out of disk space in benchmark {name}" in done.stdout
    assert by_name[f"SaveRestoreBenchmark(async_enabled={async_enabled}, spec: small float32[1024]; fill: normal)"][
        "error"] is None  # fmt: skip
  # the partial checkpoints were removed at once, the complete ones once measured (checkpoints are not kept)
  assert (kept / "run_dirs").read_text().split() == []
  summary = json.loads((kept / "summary.json").read_text())
  assert sorted((b["runs"], b["failed"]) for b in summary["benchmarks"]) == [(1, 0), (1, 0), (1, 1), (1, 1)]


def _save_and_damage(tmp_path, compression: bool, where: str) -> tuple[dict, pathlib.Path]:
  mesh = build_mesh(MeshConfig(mesh_axes=("x",), ici_parallelism={"x": 8}))
  sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
  rng = np.random.default_rng(0)
  tree = {
      "weights": jax.device_put(rng.standard_normal(8192).astype(np.float32), sharding),
      "bias": jax.device_put(np.arange(16, dtype=np.float32), sharding),
  }
  path = tmp_path / "ckpt"
  with orbax_context(SaveRestoreOptions(use_ocdbt=False, use_compression=compression)):
    ocp.save(path, tree)
  data_file = path / "state" / "weights" / "c" / "0"
  data = bytearray(data_file.read_bytes())
  for i in ([len(data) // 3] if where == "middle" else range(4)):
    data[i] ^= 0xFF
  data_file.write_bytes(data)
  return tree, path


def test_a_flipped_byte_in_raw_data_names_the_array_and_shard(tmp_path):
  tree, path = _save_and_damage(tmp_path, compression=False, where="middle")
  with ckptbench.reading_checkpoint(path):
    restored = ocp.load(path, ckptbench.abstract_pytree(tree))
  with pytest.raises(ckptbench.DataMismatchError) as info:
    ckptbench.verify_pytree(tree, restored)
  message = str(info.value)
  assert message.startswith("restored data differs from saved data in 1 array(s): weights (shard [")
  assert "bias" not in message


# Orbax leaves the other shards' read coroutines un-awaited when one fails to decode.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_damaged_compressed_chunk_names_the_array(tmp_path):
  tree, path = _save_and_damage(tmp_path, compression=True, where="header")
  with pytest.raises(ckptbench.DataMismatchError) as info:
    with ckptbench.reading_checkpoint(path):
      ocp.load(path, ckptbench.abstract_pytree(tree))
  message = str(info.value)
  assert message.startswith(
      f"checkpoint data of array 'weights' cannot be read (corrupted?) at {path}/state/weights/c/0: "
  ), message
  assert message.endswith(f"(checkpoint {path})")
  # A benchmark that loads without reading_checkpoint gets the same description from the runner.
  from ckptbench.engine._failures import unreadable_data_error

  with pytest.raises(Exception) as raw:
    ocp.load(path, ckptbench.abstract_pytree(tree))
  error = unreadable_data_error(raw.value)
  assert error.type == "DataMismatchError"
  assert error.message.startswith("checkpoint data of array 'weights' cannot be read (corrupted?)")


# Orbax leaves the other shards' read coroutines un-awaited when one fails to decode.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_damaged_existing_checkpoint_fails_its_run_naming_the_array(tmp_path):
  _, path = _save_and_damage(tmp_path, compression=True, where="header")
  suite = load_suite_text(textwrap.dedent(f"""\
      suite_name: damaged
      num_repeats: 1
      num_warmups: 0
      checkpoint_config: {{path: {path}}}
      benchmarks: [{{generator: save_restore}}]
      """), str(tmp_path / "s.yaml"))
  outcome = run_suite(suite, RunSettings(output_dir=tmp_path / "out", **QUICK))
  (record,) = outcome.records
  assert record.error.type == "DataMismatchError"
  assert record.error.message.startswith("checkpoint data of array 'weights' cannot be read")


def test_names_that_become_paths_stay_inside_the_output_directory(tmp_path):
  work = tmp_path / "a" / "b"
  work.mkdir(parents=True)
  suite = load_suite_text(textwrap.dedent("""\
      suite_name: ../../../escaped/suite
      num_repeats: 1
      num_warmups: 0
      benchmarks:
        - generator: reliability_benchmarks.StubbornBenchmark
          options: {label: ["../../../up", "/tmp/abs/path", "..", "a/../../b"], enable_trace: true}
      """), str(work / "s.yaml"))
  before = set(tmp_path.rglob("*"))
  out = work / "out"
  outcome = run(suite, RunSettings(output_dir=out, show_progress=False, probe_storage=False))
  assert outcome.exit_code == 0
  created = set(tmp_path.rglob("*")) - before
  outside = [p for p in created if out != p and out not in p.parents]
  assert outside == []
  assert not pathlib.Path("/tmp/abs/path").exists()
  run_dirs = {pathlib.Path(r.path) for r in outcome.records}
  assert len(run_dirs) == 4 and all(p.parent.parent == out for p in run_dirs)
  assert (out / "report.html").exists()
  # The trace directories named after the options were made inside OUT:
  for name in ("StubbornBenchmark_label=______up__up", "StubbornBenchmark_label=_tmp_abs_path__tmp_abs_path"):
    assert (out / "tensorboard" / name).is_dir()


def test_memory_estimate_counts_the_local_shards_of_each_process(tmp_path):
  from ckptbench.engine.memory._fit import estimate, memory_problem
  from ckptbench.engine._sweep import expand
  from ckptbench.distributed import LocalCoordinator

  suite = load_suite_text(textwrap.dedent("""\
      suite_name: m
      checkpoint_config:
        spec: {w: {dtype: float32, shape: [1024, 8], sharding: [x]}, b: {dtype: bfloat16, shape: [8]}}
      mesh_config: {mesh_axes: [x], ici_parallelism: {x: 8}}
      benchmarks: [{generator: save_restore}]
      """), str(tmp_path / "s.yaml"))
  plan = expand(suite, 8)
  alone = estimate(plan.benchmarks[0], process_count=1)
  assert (alone.per_device_bytes, alone.local_devices, alone.local_bytes) == (4096 + 16, 8, 8 * 4112)
  assert estimate(plan.benchmarks[0], process_count=2).local_bytes == 4 * 4112  # half the devices
  assert memory_problem(plan, LocalCoordinator()) is None
