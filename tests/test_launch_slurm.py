"""`ckptbench launch --submit slurm` on a real two-node slurm-wlm cluster started on 127.0.0.1 (slurm_cluster.py)."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

import pytest
from conftest import REPO, run_cli
from slurm_cluster import NODES, slurm_cluster, why_no_cluster

from ckptbench.distributed._launcher import free_port

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
  reason = why_no_cluster()
  if reason:
    pytest.skip(reason)
  with slurm_cluster() as running:
    yield running


def _suite(tmp_path, repeats: int):
  """The quick-start suite (8-device fsdp mesh, 4 devices per host) with a tiny array, one variant."""
  text = (REPO / "examples" / "quickstart.yaml").read_text()
  text = text.replace("shape: [8192, 8192]", "shape: [64, 32]").replace("use_ocdbt: [true, false]", "use_ocdbt: [true]")
  text = text.replace("suite_name: ", f"num_repeats: {repeats}\nnum_warmups: 0\nsuite_name: ", 1)
  assert "[64, 32]" in text and "[true]" in text
  path = tmp_path / "suite.yaml"
  path.write_text(text)
  return path


def _launch_args(tmp_path, repeats: int, *more: str) -> list[str]:
  return ["launch", "-n", "2", "--submit", "slurm", str(_suite(tmp_path, repeats)), "-o", str(tmp_path / "out"),
          "--port", str(free_port()), "--poll_s", "0.5", *more, "--no-progress"]  # fmt: skip


def _start(args: list[str], cluster) -> subprocess.Popen:
  """`ckptbench ARGS` running, as run_cli would start it."""
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env.update(cluster.env, PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(REPO / "tests")]))
  return subprocess.Popen([sys.executable, "-m", "ckptbench", *args], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def _interrupted_at_a_terminal(args: list[str], cluster, answer: bytes) -> tuple[int, str]:
  """`ckptbench ARGS` on a pseudo-terminal, sent SIGINT once its job runs, given `answer` when it asks."""
  controller, terminal = pty.openpty()
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env.update(cluster.env, PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(REPO / "tests")]))
  proc = subprocess.Popen([sys.executable, "-m", "ckptbench", *args], env=env, stdin=terminal, stdout=terminal,
                          stderr=terminal)  # fmt: skip
  os.close(terminal)
  screen = b""
  try:
    for wanted, then in ((rb"job \d+ RUNNING", lambda: proc.send_signal(signal.SIGINT)),
                         (rb"\[y/N\] ", lambda: os.write(controller, answer))):  # fmt: skip
      while not re.search(wanted, screen):
        assert select.select([controller], [], [], 120)[0], screen.decode(errors="replace")
        try:
          screen += os.read(controller, 65536)
        except OSError:  # EIO: the process closed the terminal before printing what is awaited
          pytest.fail(f"exited {proc.wait(timeout=30)} before {wanted!r}:\n{screen.decode(errors='replace')}")
      then()
    with contextlib.suppress(OSError):  # EIO once the process has closed the terminal
      while select.select([controller], [], [], 30)[0] and (data := os.read(controller, 65536)):
        screen += data
    return proc.wait(timeout=30), screen.decode(errors="replace").replace("\r\n", "\n")
  finally:
    proc.kill()
    os.close(controller)


def _host_records(out, host=0):
  lines = (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []
  return [json.loads(line) for line in lines if f'"host": {host}' in line]


def _wait_until(ready, timeout_s: float, what: str) -> None:
  deadline = time.monotonic() + timeout_s
  while not ready():
    assert time.monotonic() < deadline, f"no {what} within {timeout_s} s"
    time.sleep(0.2)


def test_a_two_host_job_exits_0_with_records_from_both_hosts_and_its_job_in_the_manifest_and_a_failed_one_is_named(cluster, tmp_path):
  args = _launch_args(tmp_path, 2)
  done = run_cli(*args, env=cluster.env, timeout=180)
  assert done.returncode == 0, done.stdout + done.stderr + cluster.log("slurmctld.log")[-3000:]
  job_id = re.search(r"^\[slurm\] submitted SLURM job (\d+) ", done.stdout, re.M).group(1)
  nodes = f"{NODES[0][:-1]}[1-2]"
  assert f"[slurm] job {job_id} RUNNING on {nodes} (partition debug)" in done.stdout
  assert done.stdout.rstrip().endswith(f"[slurm] job {job_id} COMPLETED on {nodes}: 2 runs recorded")
  out = tmp_path / "out"
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  assert sorted((r["repeat"], r["host"]) for r in records) == [(0, 0), (0, 1), (1, 0), (1, 1)]
  assert all(r["num_hosts"] == 2 and r["error"] is None for r in records)
  manifest = json.loads((out / "manifest.json").read_text())
  assert manifest["cluster_job"] == {"scheduler": "slurm", "job_id": job_id, "partition": "debug", "nodes": nodes}
  assert manifest["process_count"] == 2 and manifest["device_count"] == 8
  # The sbatch file kept in OUT is the one --emit writes for the same launch (which reads no suite:
  # --submit gives each host the suite's largest mesh / N CPU devices, as a local launch does).
  emitted = run_cli(*[a for a in args if a not in ("--submit", "slurm")], "--emit", "slurm", "--devices_per_process",
                    "4", "--command", f"{sys.executable} -m ckptbench", env=cluster.env)  # fmt: skip
  assert emitted.returncode == 0, emitted.stderr
  assert (out / "slurm" / "ckptbench.sbatch").read_text() == emitted.stdout
  # Piped progress: a line per round, the last one at the job's last run (views/_progress.py).
  assert re.search(r"^\[2/2\] .*SaveRestoreBenchmark", (out / "slurm" / f"{job_id}.out").read_text(), re.M)

  # Again into the same OUT without --resume: the run refuses, and the job's failure says so.
  before = (out / "results.jsonl").read_text()
  again = run_cli(*args, env=cluster.env, timeout=120)
  failed_id = re.search(r"submitted SLURM job (\d+) ", again.stdout).group(1)
  said = (f"output directory {out} already holds results (results.jsonl, summary.json, manifest.json); pass --resume"
          " to complete them, --overwrite to replace them, or choose another directory")
  # One process fails first; srun stops the other with SIGTERM (its exit code: 143).
  assert again.returncode == 2, again.stdout + again.stderr
  assert re.fullmatch(rf"ckptbench: error: SLURM job {failed_id} FAILED \(reason NonZeroExitCode, exit code 2 from task"
                      rf" [01] on ckptbench-n[12], the first to fail\); the run said: {re.escape(said)}; 2 runs"
                      rf" recorded and kept \(--resume submits what is missing\); its log: {out}/slurm/{failed_id}.out\n",
                      again.stderr)  # fmt: skip
  assert (out / "results.jsonl").read_text() == before


def test_a_job_cancelled_mid_run_is_named_keeps_its_records_and_resume_completes_it(cluster, tmp_path):
  repeats = 60
  args = _launch_args(tmp_path, repeats)
  out = tmp_path / "out"
  launch = _start(args, cluster)
  try:
    _wait_until(lambda: _host_records(out), 120, "first record")
    queue = cluster.client("squeue", "-h", "-o", "%i").stdout.split()
    assert len(queue) == 1, queue
    job_id = queue[0]
    assert cluster.client("scancel", job_id).returncode == 0
    stdout, stderr = launch.communicate(timeout=120)
  finally:
    launch.kill()
  assert launch.returncode == 1, stdout + stderr
  kept = _host_records(out)
  assert 1 <= len(kept) < repeats  # cancelled mid-run: the runs before are on disk
  log = out / "slurm" / f"{job_id}.out"
  assert stderr.strip() == (f"ckptbench: error: SLURM job {job_id} CANCELLED (signal 15); {len(kept)} runs recorded"
                            f" and kept (--resume submits what is missing); its log: {log}")  # fmt: skip
  assert "CANCELLED AT" in log.read_text()
  assert not (out / "summary.json").exists()

  # --resume at a terminal, interrupted: asked, the user cancels it; its runs are kept too.
  code, screen = _interrupted_at_a_terminal([*args, "--resume"], cluster, answer=b"y\n")
  cancelled_id = re.search(r"submitted SLURM job (\d+) ", screen).group(1)
  assert code == 130, screen
  assert f"cancel SLURM job {cancelled_id}? [y/N]" in screen
  assert f"ckptbench: error: cancelled SLURM job {cancelled_id}; the runs recorded in {out} are kept" in screen
  _wait_until(lambda: "CANCELLED" in cluster.client("scontrol", "show", "job", cancelled_id).stdout, 30, "cancel")
  assert _host_records(out)[: len(kept)] == kept

  # --resume, submitted without waiting; followed with --attach, interrupted (no terminal: the job
  # goes on), then followed again to its end.
  submitted = run_cli(*args, "--resume", "--no_wait", env=cluster.env, timeout=60)
  assert submitted.returncode == 0, submitted.stderr
  resumed_id = re.search(r"submitted SLURM job (\d+) ", submitted.stdout).group(1)
  assert f"follow it with: ckptbench launch --attach {resumed_id} -o {out}" in submitted.stdout
  attach = ["launch", "--attach", resumed_id, "-o", str(out), "--poll_s", "0.5"]
  follower = _start(attach, cluster)
  try:
    _wait_until(lambda: f"job {resumed_id} " in cluster.client("squeue", "-h", "-o", "job %i ").stdout, 30, "job")
    time.sleep(1.0)
    follower.send_signal(signal.SIGINT)
    stdout, stderr = follower.communicate(timeout=30)
  finally:
    follower.kill()
  assert follower.returncode == 130, stdout + stderr
  assert stderr.strip() == (f"ckptbench: error: interrupted; SLURM job {resumed_id} keeps running: follow it with"
                            f" `ckptbench launch --attach {resumed_id} -o {out}`, cancel it with `scancel {resumed_id}`")  # fmt: skip
  followed = run_cli(*attach, env=cluster.env, timeout=180)
  assert followed.returncode == 0, followed.stdout + followed.stderr
  assert followed.stdout.rstrip().endswith(f"COMPLETED on {NODES[0][:-1]}[1-2]: {repeats} runs recorded")
  records = _host_records(out)
  assert records[: len(kept)] == kept  # the first cancelled job's records, untouched
  assert sorted(r["repeat"] for r in records) == list(range(repeats))
  assert len(_host_records(out, host=1)) == repeats
  assert json.loads((out / "manifest.json").read_text())["cluster_job"]["job_id"] == resumed_id


def test_without_sbatch_launch_fails_in_one_line_before_writing_anything(tmp_path):
  empty = tmp_path / "bin"
  empty.mkdir()
  done = run_cli(*_launch_args(tmp_path, 1), env={"PATH": str(empty)})
  assert done.returncode == 2
  assert done.stderr.strip() == ("ckptbench: error: sbatch is not on PATH: --submit slurm runs on a machine with"
                                 " SLURM's client commands")  # fmt: skip
  assert not (tmp_path / "out").exists()


def test_without_a_controller_launch_fails_in_one_line_before_writing_anything(tmp_path):
  if why_no_cluster():
    pytest.skip(why_no_cluster())
  conf = tmp_path / "slurm.conf"
  conf.write_text(f"ClusterName=nobody\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort={free_port()}\n")
  done = run_cli(*_launch_args(tmp_path, 1), env={"SLURM_CONF": str(conf)})
  assert done.returncode == 2
  assert re.fullmatch(r"ckptbench: error: no SLURM controller answers \(`scontrol ping`: .* is DOWN\)\n", done.stderr)
  assert not (tmp_path / "out").exists()
