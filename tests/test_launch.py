"""Multi-process runs: `ckptbench launch` starts real jax.distributed jobs on simulated CPU devices."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import REPO, run_cli
from rich.console import Console

from ckptbench.distributed._launcher import free_port
from ckptbench.api._records import BenchmarkSummary
from ckptbench.views._console import benchmark_table

pytestmark = pytest.mark.slow


def _suite(tmp_path, name="suite.yaml", *, repeats=2, ocdbt="[true, false]"):
  """The quick-start suite (8-device fsdp mesh) with a tiny array."""
  text = (REPO / "examples" / "quickstart.yaml").read_text()
  text = text.replace("shape: [8192, 8192]", "shape: [64, 32]")
  text = text.replace("suite_name: ", f"num_repeats: {repeats}\nnum_warmups: 0\nsuite_name: ", 1)
  text = text.replace("use_ocdbt: [true, false]", f"use_ocdbt: {ocdbt}")
  assert "[64, 32]" in text and f"num_repeats: {repeats}" in text
  path = tmp_path / name
  path.write_text(text)
  return path


def _records(out):
  return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_two_processes_of_four_devices_run_the_quickstart_suite(tmp_path):
  out = tmp_path / "out"
  local = tmp_path / "local"
  done = run_cli("launch", "-n", "2", str(_suite(tmp_path)), "-o", str(out), "--no-progress",
                 "--local_directory", str(local), timeout=120)  # fmt: skip
  assert done.returncode == 0, done.stdout + done.stderr
  assert "2 processes x 4 CPU devices" in done.stdout
  manifest = json.loads((out / "manifest.json").read_text())
  assert (manifest["process_count"], manifest["device_count"], manifest["local_device_count"]) == (2, 8, 4)
  assert len({h["pid"] for h in manifest["hosts"]}) == 2
  assert sorted(p.name for p in local.iterdir()) == ["host_0", "host_1"]  # host-local scratch stays apart
  assert "[p0]" in set(re.findall(r"^\[p\d\]", done.stdout, re.M))
  # What Gloo prints as the processes connect is in each process's log, not between the results.
  assert "[Gloo]" not in done.stdout and "[Gloo]" in (out / "logs" / "process_1.log").read_text()

  records = _records(out)
  assert {(r["key"], r["repeat"], r["host"]) for r in records} == {
      (k, rep, host) for k in {r["key"] for r in records} for rep in (0, 1) for host in (0, 1)
  }
  assert all(r["num_hosts"] == 2 and r["error"] is None for r in records)
  summary = json.loads((out / "summary.json").read_text())
  assert not summary["skipped_meshes"] and len(summary["benchmarks"]) == 2  # the 8-device mesh ran
  assert all("hosts" in m for b in summary["benchmarks"] for m in b["metrics"].values())
  console = Console(record=True, width=200)
  console.print(benchmark_table(BenchmarkSummary.from_json(summary["benchmarks"][0])))
  lines = console.export_text().splitlines()
  assert "slowest host" in lines[2]
  assert any(" time_s " in line and re.search(r"\(host [01]\) │$", line) for line in lines)

  # The cross-host block of every metric, recomputed from the per-host records.
  for bench in summary["benchmarks"]:
    mine = [r for r in records if r["key"] == bench["key"]]
    for tag, stats in bench["metrics"].items():
      samples = {
          h: [r["metrics"][tag]["value"] for r in mine if r["host"] == h and tag in r["metrics"]] for h in (0, 1)
      }
      measured = [h for h in (0, 1) if samples[h]]
      per_host = [np.mean(samples[h]) for h in measured]
      hosts = stats["hosts"]
      assert hosts["per_host"] == {str(h): pytest.approx(v) for h, v in zip(measured, per_host)}
      assert hosts["n"] == len(measured)
      assert hosts["min"] == pytest.approx(min(per_host)) and hosts["max"] == pytest.approx(max(per_host))
      assert hosts["mean"] == pytest.approx(np.mean(per_host))
      assert hosts["p50"] == pytest.approx(np.median(per_host))
      assert hosts["p99"] == pytest.approx(np.percentile(per_host, 99))
      assert hosts["std"] == pytest.approx(np.std(per_host, ddof=1) if len(per_host) > 1 else 0.0)
      rate = stats["unit"].endswith("/s")
      assert hosts["slowest_host"] == measured[int(np.argmin(per_host) if rate else np.argmax(per_host))]


def test_four_processes_share_one_mesh(tmp_path):
  out = tmp_path / "out"
  suite = _suite(tmp_path, repeats=1, ocdbt="[true]")
  # Launch options may follow the suite file; the rest goes to `ckptbench run`.
  done = run_cli("launch", "-n", "4", str(suite), "-o", str(out), "--no-progress", "--devices_per_process", "2",
                 timeout=150)  # fmt: skip
  assert done.returncode == 0, done.stdout + done.stderr
  records = _records(out)
  assert sorted(r["host"] for r in records) == [0, 1, 2, 3]
  assert all(r["num_hosts"] == 4 and r["error"] is None for r in records)
  hosts = json.loads((out / "summary.json").read_text())["benchmarks"][0]["metrics"]["save_0_basics/time_s"]["hosts"]
  assert hosts["n"] == 4 and hosts["slowest_host"] in range(4)


def test_auto_repeats_under_launch_end_on_the_same_round_everywhere(tmp_path):
  """Rounds until the budget runs out: every process runs the same rounds and exits 0 (a process that
  looked at its own clock while another ran the next round aborted in gloo; tests/test_rounds.py)."""
  out = tmp_path / "out"
  suite = _suite(tmp_path, repeats=2)
  text = suite.read_text().replace("num_repeats: 2", "num_repeats: auto").replace("time_budget_s: 90", "time_budget_s: 4")
  assert "time_budget_s: 4" in text
  suite.write_text(text)
  done = run_cli("launch", "-n", "4", str(suite), "-o", str(out), "--no-progress", "--devices_per_process", "2",
                 timeout=240)  # fmt: skip
  assert done.returncode == 0, done.stdout + done.stderr
  assert json.loads((out / "summary.json").read_text())["repeats"]["mode"] == "auto"
  measured = [r for r in _records(out) if not r["warmup"]]
  rounds = {host: sum(1 for r in measured if r["host"] == host) for host in range(4)}
  assert len(set(rounds.values())) == 1 and rounds[0] >= 2, rounds


def test_killing_one_process_ends_the_launch_naming_it(tmp_path):
  out = tmp_path / "out"
  suite = _suite(tmp_path, repeats=200, ocdbt="[true]")
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])
  launcher = subprocess.Popen(
      [sys.executable, "-m", "ckptbench", "launch", "-n", "2", str(suite), "-o", str(out),
       "--no-progress", "--stop_timeout_s", "1"],
      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
  )  # fmt: skip
  try:
    first = launcher.stdout.readline()
    pids = dict(re.findall(r"p(\d)=(\d+)", first))
    assert set(pids) == {"0", "1"}, first
    deadline = time.monotonic() + 90
    while not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_text():
      assert time.monotonic() < deadline and launcher.poll() is None, "no run finished"
      time.sleep(0.1)
    os.kill(int(pids["1"]), 9)
    killed_at = time.monotonic()
    stdout, stderr = launcher.communicate(timeout=30)
    took = time.monotonic() - killed_at
  finally:
    if launcher.poll() is None:
      launcher.kill()
  assert launcher.returncode != 0
  assert f"process 1 (pid {pids['1']}) was killed by SIGKILL; stopped process 0" in stderr
  assert took < 15, f"the launch took {took:.1f} s to end after the kill"
  with pytest.raises(ProcessLookupError):
    os.kill(int(pids["0"]), 0)  # process 0 is gone too
  assert len(_records(out)) < 400


def test_a_setup_error_on_process_0_stops_every_process_with_it(tmp_path):
  out = tmp_path / "out"
  out.mkdir()
  (out / "results.jsonl").write_text("{}\n")
  done = run_cli("launch", "-n", "2", str(_suite(tmp_path)), "-o", str(out), timeout=120)
  assert done.returncode == 2
  assert "[p0] ckptbench: error: output directory" in done.stdout
  assert "[p1] ckptbench: error: output directory" in done.stdout  # not left waiting
  # Both processes end by themselves with the same error; none has to be stopped.
  assert re.fullmatch(
      r"ckptbench: error: process (\d) \(pid \d+\) exited with code 2; also failed: process (\d) exited with code 2\n",
      done.stderr,
  ), done.stderr


def test_a_worker_that_cannot_reach_the_coordinator_fails_in_one_line(tmp_path):
  env = {
      "JAX_COORDINATOR_ADDRESS": "127.0.0.1",
      "JAX_COORDINATOR_PORT": str(free_port()),
      "JAX_NUM_PROCESSES": "2",
      "JAX_PROCESS_ID": "1",
      "CKPTBENCH_INIT_TIMEOUT_S": "1",
  }
  done = run_cli("run", str(_suite(tmp_path)), "-o", str(tmp_path / "out"), env=env, timeout=60)
  assert done.returncode == 2
  assert done.stderr.startswith("ckptbench: error: cannot reach the jax.distributed coordinator at 127.0.0.1:")
  assert done.stderr.count("\n") == 1
  assert not (tmp_path / "out" / "results.jsonl").exists()  # no silent single-process run


def test_several_processes_without_a_coordinator_is_an_error(tmp_path):
  done = run_cli("run", str(_suite(tmp_path)), "-o", str(tmp_path / "out"), env={"JAX_NUM_PROCESSES": "2"})
  assert done.returncode == 2
  assert "needs JAX_COORDINATOR_ADDRESS, JAX_PROCESS_ID set" in done.stderr


def test_a_mesh_that_the_processes_cannot_share_evenly_is_refused(tmp_path):
  done = run_cli("launch", "-n", "3", str(_suite(tmp_path)), "-o", str(tmp_path / "out"))
  assert done.returncode == 2
  assert "needs 8 devices, which 3 processes cannot share evenly" in done.stderr


DIVERGING = """\
suite_name: diverging
num_repeats: 1
num_warmups: 0
benchmarks:
  - generator: multiprocess_benchmarks.DivergingBenchmark
    options: {raise_on_process: [-1, 1], collective: service}
"""


def _diverge(tmp_path, env):
  """Launches DIVERGING: its second benchmark leaves process 0 in a barrier that process 1 skipped."""
  suite = tmp_path / "suite.yaml"
  suite.write_text(DIVERGING)
  out = tmp_path / "out"
  t0 = time.monotonic()
  done = run_cli("launch", "-n", "2", "--devices_per_process", "1", str(suite), "-o", str(out), "--no-progress",
                 env=env, timeout=90)  # fmt: skip
  took = time.monotonic() - t0
  # The first benchmark's records stay, and OUT reads back.
  assert [(r["options"]["raise_on_process"], r["host"], r["error"]) for r in _records(out)] == [(-1, 0, None), (-1, 1, None)]
  assert run_cli("report", str(out)).returncode == 0
  return done, took


def test_a_process_that_raises_before_a_collective_ends_the_launch_after_the_grace_period(tmp_path):
  done, took = _diverge(tmp_path, {"CKPTBENCH_RUN_GRACE_S": "5"})
  assert done.returncode == 4, done.stdout + done.stderr
  assert (
      "[p1] ckptbench: error: process 1: run 'DivergingBenchmark(raise_on_process=1) repeat 0' was still at the"
      " gather after its run failed (RuntimeError: process 1 fails before the collective) past its limit of 5 s"
      " (CKPTBENCH_RUN_GRACE_S); the processes are likely waiting in different collectives"
  ) in done.stdout
  assert re.fullmatch(
      r"ckptbench: error: process 1 \(pid \d+\) exited with code 4 \(a run passed its limit, likely stuck in a"
      r" collective; see its line above\); stopped process 0\n",
      done.stderr,
  ), done.stderr
  assert took < 40  # 5 s grace, 3 s for process 0 to end by itself, 5 s from SIGTERM to SIGKILL, start-up


def test_a_process_stuck_in_test_fn_past_the_run_limit_ends_the_launch(tmp_path):
  done, took = _diverge(tmp_path, {"CKPTBENCH_RUN_LIMIT_S": "5"})  # process 1 waits the default 60 s grace
  assert done.returncode == 4, done.stdout + done.stderr
  assert (
      "[p0] ckptbench: error: process 0: run 'DivergingBenchmark(raise_on_process=1) repeat 0' was still in"
      " test_fn past its limit of 5 s (no timeout_s: CKPTBENCH_RUN_LIMIT_S)"
  ) in done.stdout
  assert done.stderr.startswith("ckptbench: error: process 0 (pid ")
  assert took < 40


MANAGERS_SUITE = """\
suite_name: managers in two processes
num_repeats: 1
num_warmups: 0
checkpoint_config: {preset: llama-3.1-8b, scale: 0.0001}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 4}}
benchmarks:
  - generator: checkpoint_manager
    options: {num_steps: 3, save_interval_steps: 1, max_to_keep: 2, api: [checkpoint_manager, training_checkpointer]}
  - generator: training_interference
    options: {api: [checkpoint_manager, training_checkpointer, torch_dcp], num_saves: 3, save_interval_steps: 4,
              step_matmul_size: 64, step_matmuls: 4}
"""


def test_async_managers_report_every_processs_commits(tmp_path):
  # Orbax calls post_finalization_callback on its primary process only: the others take the
  # commit from the end of their save thread, which waits for the primary's commit.
  (tmp_path / "s.yaml").write_text(MANAGERS_SUITE)
  out = tmp_path / "out"
  done = run_cli("launch", "-n", "2", str(tmp_path / "s.yaml"), "-o", str(out), "--no-progress", "--no-views",
                 "--no-probe", timeout=240)  # fmt: skip
  assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
  records = _records(out)
  assert len(records) == 8 and all(r["error"] is None for r in records)  # 4 variants x 2 hosts
  for r in records:
    m = r["metrics"]
    durable = [v["value"] for k, v in m.items() if "durable_0_basics/time_s" in k and not k.endswith("_mean")]
    assert durable and all(d > 0 for d in durable), (r["benchmark"], r["host"])
  [unsupported] = json.loads((out / "summary.json").read_text())["unsupported"]
  assert unsupported["options"]["api"] == "torch_dcp" and "one process only" in unsupported["reason"]
