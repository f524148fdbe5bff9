"""A real two-node SLURM cluster on 127.0.0.1 for the tests: munged, slurmctld and two slurmd.

Debian's slurm-wlm and munge, started as root in a temporary directory (their
configuration, key, state, spool and logs; nothing under /etc/slurm or
/etc/munge), on free ports, stopped and removed afterwards. Both nodes run on
this machine (`slurmd -N NAME`); their names resolve to 127.0.0.1 through a
line added to /etc/hosts for the cluster's life, since an sbatch file finds its
jax.distributed coordinator by its first node's name.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Iterator

from ckptbench.distributed._launcher import free_port

NODES = ("ckptbench-n1", "ckptbench-n2")
_HOSTS = pathlib.Path("/etc/hosts")
_PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "scancel", "squeue", "sinfo")


@dataclasses.dataclass(frozen=True)
class SlurmCluster:
  """A running test cluster: `env` points SLURM's client commands at it."""

  root: pathlib.Path
  env: dict[str, str]

  def client(self, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, env={**os.environ, **self.env}, capture_output=True, text=True, timeout=60)

  def log(self, name: str) -> str:
    path = self.root / "log" / name
    return path.read_text(errors="replace") if path.exists() else ""


def why_no_cluster() -> str | None:
  """Why this machine cannot run the test cluster; None when it can."""
  missing = [p for p in _PROGRAMS if shutil.which(p) is None]
  if missing:
    return f"slurm-wlm and munge are not installed ({', '.join(missing)} not found; apt-get install slurm-wlm munge)"
  if os.geteuid() != 0:
    return "the test SLURM cluster runs its slurmd as root, and this is not root"
  return None


@contextlib.contextmanager
def slurm_cluster() -> Iterator[SlurmCluster]:
  """Starts the cluster, yields it once both nodes are idle, and stops and removes it."""
  # munged refuses a socket whose directories others cannot traverse, as pytest's tmp_path is.
  root = pathlib.Path(tempfile.mkdtemp(prefix="ckptbench-slurm-"))
  root.chmod(0o755)
  daemons: list[subprocess.Popen] = []
  cluster = SlurmCluster(root, {"SLURM_CONF": str(root / "slurm.conf")})
  try:
    for sub in ("munge", "state", "log", "run", *(f"spool/{n}" for n in NODES)):
      (root / sub).mkdir(parents=True)
      (root / sub).chmod(0o755)
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    socket_path = root / "munge" / "munge.socket"
    daemons.append(_start(["munged", "--foreground", f"--key-file={key}", f"--socket={socket_path}",
                           f"--pid-file={root / 'munge' / 'munged.pid'}", f"--log-file={root / 'log' / 'munged.log'}",
                           f"--seed-file={root / 'munge' / 'munged.seed'}"], cluster))  # fmt: skip
    _wait_for(socket_path.exists, 10, "munged's socket", cluster)
    (root / "slurm.conf").write_text(_slurm_conf(root, socket_path))
    daemons.append(_start(["slurmctld", "-D"], cluster))
    daemons.extend(_start(["slurmd", "-D", "-N", node], cluster) for node in NODES)
    with _names_resolve(cluster):
      _wait_for(lambda: _idle_nodes(cluster) == len(NODES), 60, "both nodes idle in sinfo", cluster)
      yield cluster
      _cancel_all(cluster)
  finally:
    for proc in reversed(daemons):
      proc.terminate()
    for proc in reversed(daemons):
      try:
        proc.wait(15)
      except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    shutil.rmtree(root, ignore_errors=True)


def _slurm_conf(root: pathlib.Path, munge_socket: pathlib.Path) -> str:
  host = socket.gethostname().split(".")[0]
  lines = [
      "ClusterName=ckptbench",
      f"SlurmctldHost={host}(127.0.0.1)",
      f"SlurmctldPort={free_port()}",
      f"SlurmdPort={free_port()}",
      "SlurmUser=root",
      "SlurmdUser=root",
      "AuthType=auth/munge",
      "CredType=cred/munge",
      f"AuthInfo=socket={munge_socket}",
      f"StateSaveLocation={root / 'state'}",
      f"SlurmdSpoolDir={root / 'spool' / '%n'}",
      f"SlurmctldPidFile={root / 'run' / 'slurmctld.pid'}",
      f"SlurmdPidFile={root / 'run' / 'slurmd-%n.pid'}",
      f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
      f"SlurmdLogFile={root / 'log' / 'slurmd-%n.log'}",
      "ProctrackType=proctrack/linuxproc",
      "TaskPlugin=task/none",
      "SelectType=select/cons_tres",
      "SelectTypeParameters=CR_CPU",
      "MpiDefault=none",
      "ReturnToService=2",
      # A cancelled job's processes get SIGKILL at once (default: 30 s after SIGTERM, which
      # jax.distributed's preemption notifier catches: the runs would go on meanwhile).
      "KillWait=0",
      *(f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={free_port()} CPUs=1" for n in NODES),
      f"PartitionName=debug Nodes={','.join(NODES)} Default=YES MaxTime=INFINITE State=UP",
  ]
  return "\n".join(lines) + "\n"


def _start(argv: list[str], cluster: SlurmCluster) -> subprocess.Popen:
  return subprocess.Popen(argv, env={**os.environ, **cluster.env}, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=open(cluster.root / "log" / f"{argv[0]}.stderr", "ab"))  # fmt: skip


def _wait_for(ready, timeout_s: float, what: str, cluster: SlurmCluster) -> None:
  deadline = time.monotonic() + timeout_s
  while not ready():
    if time.monotonic() > deadline:
      logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}" for p in (cluster.root / "log").iterdir())
      raise RuntimeError(f"the test SLURM cluster did not come up: no {what} within {timeout_s:.0f} s\n{logs}")
    time.sleep(0.2)


def _idle_nodes(cluster: SlurmCluster) -> int:
  done = cluster.client("sinfo", "-h", "-N", "-o", "%N %T")
  return sum(1 for line in done.stdout.splitlines() if line.split()[1:] == ["idle"])


def _cancel_all(cluster: SlurmCluster) -> None:
  """Cancels what a failed test left queued or running and waits for it to end."""
  cluster.client("scancel", "--user", "root")
  _wait_for(lambda: not cluster.client("squeue", "-h").stdout.strip(), 60, "empty queue", cluster)


@contextlib.contextmanager
def _names_resolve(cluster: SlurmCluster) -> Iterator[None]:
  """The nodes' names resolve to 127.0.0.1 while the cluster runs: a line of its own in /etc/hosts,
  removed after (another cluster's line, from a test session beside this one, stays)."""
  line = f"127.0.0.1 {' '.join(NODES)}  # ckptbench's test SLURM cluster in {cluster.root}\n"
  with open(_HOSTS, "a", encoding="utf-8") as f:  # in place: a container's /etc/hosts is a bind mount
    f.write(line)
  try:
    yield
  finally:
    text = _HOSTS.read_text(encoding="utf-8")
    _HOSTS.write_text(text.replace(line, ""), encoding="utf-8")
