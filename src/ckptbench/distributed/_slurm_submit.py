"""`launch --submit slurm`: submit the sbatch file, follow the job, end with its outcome.

The sbatch file and the job's log are kept in OUT/slurm/, beside the results,
on the filesystem every node shares. Following a job reads its state from the
controller and counts the runs process 0 has recorded in OUT/results.jsonl.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import time
from typing import Callable, Sequence

from ckptbench.distributed._manifests import ClusterJob, slurm_script
from ckptbench.distributed._slurm import SlurmJob, check_slurm, job_state, submit
from ckptbench.errors import EXIT_BENCHMARK_FAILED, CkptbenchError

SLURM_DIR = "slurm"  # under OUT: the sbatch file and each job's log
SCRIPT_NAME = "ckptbench.sbatch"
# srun's line for a task that failed (src/srun/srun_job.c); with --kill-on-bad-exit the first one
# is the task that failed, and the tasks it stopped end by SIGTERM.
_TASK_EXIT = re.compile(r"^srun: error: (\S+): task (\d+): Exited with exit code (\d+)$", re.M)
_RUN_ERROR = re.compile(r"^ckptbench: error: (.*)$", re.M)  # a run's one-line error (cli/_main.py)
_LOG_TAIL_BYTES = 1 << 20
# A controller restarting or too busy to answer is asked again, up to 10 times 5 s apart or more.
_CONTROLLER_RETRIES = 10
_RETRY_S = 5.0


@dataclasses.dataclass(frozen=True)
class Submitted:
  """A job handed to SLURM: its id, the sbatch file kept in OUT and the job's log."""

  job_id: str
  script: pathlib.Path
  log: pathlib.Path


@dataclasses.dataclass(frozen=True)
class SlurmOutcome:
  """How a followed job ended.

  Attributes:
    exit_code: 0 for a job COMPLETED with exit code 0; the batch script's own
      exit code for a FAILED one (the run's, through srun); 1 otherwise
      (cancelled, timed out, preempted, a node failed, unknown).
    job: the job's last known description (None when SLURM no longer knows it).
    message: one line saying how it ended, with its log.
  """

  exit_code: int
  job: SlurmJob | None
  message: str


def submit_job(job: ClusterJob, out_dir: pathlib.Path, sbatch_options: Sequence[str] = ()) -> Submitted:
  """Writes the sbatch file `--emit slurm` would write into OUT/slurm/ and submits it.

  Raises:
    CkptbenchError: sbatch is missing or no controller answers (nothing is
      written then), or sbatch refused the job.
  """
  check_slurm()
  folder = out_dir / SLURM_DIR
  try:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / SCRIPT_NAME
    script.write_text(slurm_script(job))
  except OSError as e:
    raise CkptbenchError(f"cannot write the sbatch file into {folder}: {e.strerror or e}") from None
  job_id = submit(script, log=str(folder / "%j.out"), options=sbatch_options)
  return Submitted(job_id, script, folder / f"{job_id}.out")


def follow_job(
    job_id: str,
    *,
    runs_done: Callable[[], int],
    say: Callable[[str], None],
    poll_s: float,
    log: pathlib.Path | str | None = None,
) -> SlurmOutcome:
  """Follows the job until it ends, saying each change of its state and of the runs recorded.

  Args:
    job_id: the job.
    runs_done: how many runs its results hold so far.
    say: prints one line of progress.
    poll_s: seconds between looks at the job.
    log: the job's log, when the caller knows it (the controller's word wins).

  Raises:
    CkptbenchError: the controller does not know the job when first asked, or
      stops answering (10 times in a row).
  """
  seen: tuple[str, str | None] | None = None
  runs = 0
  job = job_state(job_id)
  if job is None:
    raise CkptbenchError(f"SLURM knows no job {job_id} (scontrol and sacct)")
  while True:
    log = job.log or log
    now = runs_done()
    if job.finished:  # its outcome's line says the rest
      return _outcome(job, now, log)
    if (job.state, job.reason) != seen:
      seen = (job.state, job.reason)
      say(_state_line(job))
    if now != runs:
      runs = now
      say(f"job {job_id}: {_runs(runs)}")
    time.sleep(poll_s)
    last, job = job, _next_state(job, poll_s, say)
    if job is None:
      return SlurmOutcome(EXIT_BENCHMARK_FAILED, last, (
          f"SLURM job {job_id} was {last.state} when it left the controller, and no accounting database"
          f" (sacct) knows how it ended; {_runs(runs_done())}; its log: {log or 'unknown'}"))  # fmt: skip


def _next_state(job: SlurmJob, poll_s: float, say: Callable[[str], None]) -> SlurmJob | None:
  """The job's state now; a controller that does not answer (restarting, busy) is asked again for a while."""
  failures = 0
  while True:
    try:
      return job_state(job.job_id)
    except CkptbenchError as e:
      failures += 1
      if failures == _CONTROLLER_RETRIES:
        raise CkptbenchError(f"following SLURM job {job.job_id}: {e} ({failures} times in a row); the job may"
                             f" still run: ckptbench launch --attach {job.job_id} -o OUT follows it again") from None  # fmt: skip
      say(f"job {job.job_id}: the controller did not answer ({e}); asking again")
      time.sleep(max(poll_s, _RETRY_S))


def _state_line(job: SlurmJob) -> str:
  where = f" on {job.nodes}" if job.nodes and not job.queued else ""
  partition = f" (partition {job.partition})" if job.partition and job.state == "RUNNING" else ""
  reason = f" ({job.reason})" if job.reason and job.state != "RUNNING" else ""
  return f"job {job.job_id} {job.state}{reason}{where}{partition}"


def _runs(runs: int) -> str:
  return f"{runs} run{'s' if runs != 1 else ''} recorded"


def _outcome(job: SlurmJob, runs: int, log: pathlib.Path | str | None) -> SlurmOutcome:
  if job.state == "COMPLETED" and job.exit_code == 0:
    return SlurmOutcome(0, job, f"job {job.job_id} COMPLETED on {job.nodes}: {_runs(runs)}")
  detail = [f"reason {job.reason}"] if job.reason else []
  code = job.exit_code if job.state == "FAILED" and job.exit_code > 0 else EXIT_BENCHMARK_FAILED
  tail = _log_tail(log)
  first = _TASK_EXIT.search(tail) if job.state == "FAILED" else None
  if first:  # the run's own code: srun's is the highest of all, the others' SIGTERM (143) among them
    code = int(first.group(3))
    detail.append(f"exit code {code} from task {first.group(2)} on {first.group(1)}, the first to fail")
  elif job.exit_code:
    detail.append(f"exit code {job.exit_code}")
  if job.signal:
    detail.append(f"signal {job.signal}")
  kept = f"{_runs(runs)} and kept (--resume submits what is missing)" if runs else "no run recorded"
  said = _RUN_ERROR.findall(tail)
  message = (f"SLURM job {job.job_id} {job.state}" + (f" ({', '.join(detail)})" if detail else "")
             + (f"; the run said: {said[-1].strip()}" if said else "")
             + f"; {kept}; its log: {log or 'unknown'}")  # fmt: skip
  return SlurmOutcome(code, job, message)


def _log_tail(log: pathlib.Path | str | None) -> str:
  """The end of the job's log (where srun and the run say why they ended); empty when unreadable."""
  if log is None:
    return ""
  try:
    with open(log, "rb") as f:
      f.seek(max(0, f.seek(0, 2) - _LOG_TAIL_BYTES))
      return f.read().decode(errors="replace")
  except OSError:
    return ""
