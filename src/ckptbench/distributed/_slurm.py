"""SLURM's client commands: submit a batch job, read its state, cancel it.

Everything goes through `sbatch`, `scontrol` and `scancel` (and `sacct` for a
job the controller no longer holds), as a user at a login node would; no SLURM
library is linked. The controller keeps a finished job for `MinJobAge` (300 s
by default); after that only the accounting database (`sacct`) knows it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from typing import Mapping, Sequence

from ckptbench.errors import CkptbenchError

# A client call waits at most this long: an unreachable controller makes `sbatch` retry for minutes.
_CLIENT_TIMEOUT_S = 60.0
_FIELD = re.compile(r"(?:^|\s)([A-Za-z][\w/:]*)=")
# States a job does not leave (https://slurm.schedmd.com/job_state_codes.html).
FINAL_STATES = frozenset({
    "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
    "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT", "REVOKED",
})  # fmt: skip
QUEUED_STATES = frozenset({"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "RESV_DEL_HOLD", "SUSPENDED"})


@dataclasses.dataclass(frozen=True)
class SlurmJob:
  """One batch job as the controller (or the accounting database) describes it.

  Attributes:
    job_id: SLURM's job id.
    state: the base state (`PENDING`, `RUNNING`, `COMPLETED`, `CANCELLED`, ...).
    reason: why it waits or ended (`Resources`, `NonZeroExitCode`, ...); None when SLURM gives none.
    exit_code: the batch script's exit code.
    signal: the signal that ended the batch script (0: none).
    partition: the partition it ran in.
    nodes: its node list in SLURM's form (`n[1-2]`); None before it starts.
    log: the file its output goes to (None when SLURM does not say, as `sacct` does not).
  """

  job_id: str
  state: str
  reason: str | None
  exit_code: int
  signal: int
  partition: str | None
  nodes: str | None
  log: str | None

  @property
  def finished(self) -> bool:
    return self.state in FINAL_STATES

  @property
  def queued(self) -> bool:
    return self.state in QUEUED_STATES


def parse_scontrol_job(text: str) -> SlurmJob:
  """The job in one line of `scontrol show job -o ID`.

  Example:
    >>> job = parse_scontrol_job("JobId=7 JobName=x JobState=FAILED Reason=NonZeroExitCode"
    ...                          " ExitCode=3:0 Partition=debug NodeList=n[1-2] StdOut=/o/7.out")
    >>> job.state, job.reason, job.exit_code, job.nodes, job.log
    ('FAILED', 'NonZeroExitCode', 3, 'n[1-2]', '/o/7.out')
  """
  fields = _fields(text.strip())
  code, _, sig = fields.get("ExitCode", "0:0").partition(":")
  return SlurmJob(
      job_id=fields["JobId"],
      state=fields.get("JobState", "UNKNOWN").split()[0],
      reason=_value(fields.get("Reason")),
      exit_code=int(code or 0),
      signal=int(sig or 0),
      partition=_value(fields.get("Partition")),
      nodes=_value(fields.get("NodeList")),
      log=_value(fields.get("StdOut")),
  )


def _fields(line: str) -> dict[str, str]:
  """`Key=value Key2=value with spaces ...` as a dict (a value runs to the next ` Key=`)."""
  marks = list(_FIELD.finditer(line))
  return {m.group(1): line[m.end() : nxt.start() if nxt else len(line)].strip()
          for m, nxt in zip(marks, [*marks[1:], None])}  # fmt: skip


def _value(text: str | None) -> str | None:
  return None if text in (None, "", "None", "(null)") else text


def _client(args: Sequence[str], env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
  """Runs one client command; a missing program or a hang is a one-line error."""
  try:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=_CLIENT_TIMEOUT_S,
                          env=None if env is None else dict(env), stdin=subprocess.DEVNULL)  # fmt: skip
  except FileNotFoundError:
    raise CkptbenchError(f"{args[0]} is not on PATH: SLURM's client commands are needed here") from None
  except subprocess.TimeoutExpired:
    raise CkptbenchError(f"`{' '.join(args[:3])}` did not answer within {_CLIENT_TIMEOUT_S:.0f} s") from None


def _first_line(done: subprocess.CompletedProcess) -> str:
  lines = [line.strip() for line in (done.stderr + "\n" + done.stdout).splitlines() if line.strip()]
  return lines[0] if lines else f"exit code {done.returncode}"


def check_slurm() -> None:
  """Checks that `sbatch` is here and a controller answers.

  Raises:
    CkptbenchError: `sbatch` is not on PATH, or `scontrol ping` finds no controller up.
  """
  if shutil.which("sbatch") is None:
    raise CkptbenchError("sbatch is not on PATH: --submit slurm runs on a machine with SLURM's client commands")
  done = _client(["scontrol", "ping"])
  if " is UP" not in done.stdout:  # one line per controller: any one up takes jobs
    raise CkptbenchError(f"no SLURM controller answers (`scontrol ping`: {_first_line(done)})")


def submit(script: str | os.PathLike, *, log: str, options: Sequence[str] = ()) -> str:
  """Submits `script` with `sbatch`; its output goes to `log` (`%j`: the job id). Returns the job id.

  Raises:
    CkptbenchError: sbatch refused the job (its first line of error).
  """
  done = _client(["sbatch", "--parsable", f"--output={log}", *options, os.fspath(script)])
  if done.returncode != 0:
    raise CkptbenchError(f"sbatch refused the job: {_first_line(done)}")
  return done.stdout.strip().split(";")[0]  # "ID" or "ID;cluster"


def job_state(job_id: str) -> SlurmJob | None:
  """The job as the controller describes it, else as `sacct` does; None when neither knows it."""
  done = _client(["scontrol", "show", "job", "-o", job_id])
  if done.returncode == 0 and done.stdout.strip():
    return parse_scontrol_job(done.stdout.splitlines()[0])
  if "Invalid job id" not in done.stderr:
    raise CkptbenchError(f"`scontrol show job {job_id}` failed: {_first_line(done)}")
  return _sacct_state(job_id)


def _sacct_state(job_id: str) -> SlurmJob | None:
  """The job from the accounting database (it has no log path); None without one or without the job."""
  if shutil.which("sacct") is None:
    return None
  done = _client(["sacct", "-X", "-n", "-P", "-j", job_id, "-o", "JobID,State,Reason,ExitCode,Partition,NodeList"])
  rows = [line.split("|") for line in done.stdout.splitlines() if line.startswith(f"{job_id}|")]
  if done.returncode != 0 or not rows or len(rows[0]) != 6:
    return None
  _, state, reason, exit_code, partition, nodes = rows[0]
  code, _, sig = exit_code.partition(":")
  return SlurmJob(job_id, state.split()[0], _value(reason), int(code or 0), int(sig or 0),
                  _value(partition), _value(nodes), None)  # fmt: skip


def cancel_job(job_id: str) -> None:
  """Cancels the job (`scancel`).

  Raises:
    CkptbenchError: scancel refused.
  """
  done = _client(["scancel", job_id])
  if done.returncode != 0:
    raise CkptbenchError(f"scancel {job_id} failed: {_first_line(done)}")


def slurm_job_from_env(env: Mapping[str, str]) -> dict[str, str | None] | None:
  """The SLURM job this process runs in (for the manifest), from the variables SLURM sets; None outside one."""
  if not env.get("SLURM_JOB_ID"):
    return None
  return {"scheduler": "slurm", "job_id": env["SLURM_JOB_ID"], "partition": env.get("SLURM_JOB_PARTITION"),
          "nodes": env.get("SLURM_JOB_NODELIST")}  # fmt: skip
