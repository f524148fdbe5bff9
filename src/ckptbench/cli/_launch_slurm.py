"""`ckptbench launch --submit slurm` and `--attach JOBID`: a SLURM job followed from the terminal."""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import TYPE_CHECKING

from ckptbench.errors import EXIT_INTERRUPTED

if TYPE_CHECKING:
  from ckptbench.distributed import ClusterJob


def submit_and_follow(job: ClusterJob, args: argparse.Namespace) -> int:
  """Submits `job`'s sbatch file (kept in OUT/slurm/) and, unless --no_wait, follows it to its end."""
  from ckptbench.distributed import submit_job  # noqa: PLC0415

  out = pathlib.Path(args.out).resolve()
  options = [f"--{name}={value}" for name in ("partition", "time", "account") if (value := getattr(args, name))]
  submitted = submit_job(job, out, options)
  _say(f"submitted SLURM job {submitted.job_id} ({submitted.script}); its log: {submitted.log}")
  if args.no_wait:
    _say(f"follow it with: ckptbench launch --attach {submitted.job_id} -o {out}")
    return 0
  return _follow(submitted.job_id, out, args.poll_s, submitted.log)


def attach(job_id: str, out: pathlib.Path, poll_s: float) -> int:
  """Follows a job submitted earlier, whose results go to `out`."""
  return _follow(job_id, out, poll_s, None)


def _say(line: str) -> None:
  print(f"[slurm] {line}", flush=True)


def _follow(job_id: str, out: pathlib.Path, poll_s: float, log: pathlib.Path | None) -> int:
  from ckptbench.distributed import follow_job  # noqa: PLC0415
  from ckptbench.api import timed_runs  # noqa: PLC0415
  from ckptbench.results import read_records  # noqa: PLC0415

  def runs_done() -> int:  # the timed runs; process 0 writes every host's record of a run at once
    return sum(1 for record in timed_runs(read_records(out)) if record.host == 0)

  try:
    outcome = follow_job(job_id, runs_done=runs_done, say=_say, poll_s=poll_s, log=log)
  except KeyboardInterrupt:
    return _interrupted(job_id, out)
  if outcome.exit_code:
    print(f"ckptbench: error: {outcome.message}", file=sys.stderr)
  else:
    _say(outcome.message)
  return outcome.exit_code


def _interrupted(job_id: str, out: pathlib.Path) -> int:
  """Ctrl-C while following: at a terminal, asks whether to cancel the job; elsewhere leaves it running."""
  from ckptbench.distributed import cancel_job  # noqa: PLC0415

  if sys.stdin.isatty():
    try:
      answer = input(f"\ncancel SLURM job {job_id}? [y/N] ")
    except (EOFError, KeyboardInterrupt):
      answer = ""
    if answer.strip().lower() in ("y", "yes"):
      cancel_job(job_id)
      print(f"ckptbench: error: cancelled SLURM job {job_id}; the runs recorded in {out} are kept"
            " (--resume submits what is missing)", file=sys.stderr)  # fmt: skip
      return EXIT_INTERRUPTED
  print(f"ckptbench: error: interrupted; SLURM job {job_id} keeps running: follow it with"
        f" `ckptbench launch --attach {job_id} -o {out}`, cancel it with `scancel {job_id}`", file=sys.stderr)  # fmt: skip
  return EXIT_INTERRUPTED
