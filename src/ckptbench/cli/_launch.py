"""`ckptbench launch`: run a suite as N processes here, write a cluster launch file, or submit it.

    ckptbench launch -n 2 suite.yaml -o OUT [run options...]
    ckptbench launch -n 16 --emit k8s-jobset --image IMG suite.yaml -o OUT > jobset.yaml
    ckptbench launch -n 4 --submit slurm --partition P suite.yaml -o /shared/OUT
    ckptbench launch --attach JOBID -o /shared/OUT

Everything after the suite file that is not a `launch` option is handed to
each `ckptbench run` unchanged.
"""

from __future__ import annotations

import argparse
import pathlib
import shlex
import sys
from typing import TYPE_CHECKING

from ckptbench.distributed import ACCELERATORS, MANIFEST_KINDS, SUBMIT_KINDS
from ckptbench.cli._examples import suite_file
from ckptbench.cli._launch_slurm import attach, submit_and_follow
from ckptbench.cli._parser import Parser
from ckptbench.cli._units import parse_duration
from ckptbench.errors import CkptbenchError

if TYPE_CHECKING:
  from ckptbench.distributed import ClusterJob


def _add_launch_options(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
  """The options `launch` keeps for itself; given anywhere on the line."""
  d = (lambda v: v) if defaults else (lambda v: argparse.SUPPRESS)
  parser.add_argument("-n", "--num_processes", type=int, default=d(None), help="processes (hosts) to run")
  parser.add_argument("-o", "--output_directory", "--out", dest="out", default=d(None),
                      help="output directory (passed to each run)")  # fmt: skip
  parser.add_argument(
      "--devices_per_process",
      type=int,
      default=d(None),
      help="devices per process (default: the largest mesh of the suite / N); on a cluster, per host",
  )
  parser.add_argument(
      "--port", type=int, default=d(None), help="coordinator port (default: a free one; 8476 on clusters)"
  )
  parser.add_argument(
      "--stop_timeout", "--stop_timeout_s", dest="stop_timeout_s", type=parse_duration, default=d(5.0),
      help="after a failure, how long before the others are killed (default 5s)",
  )  # fmt: skip
  parser.add_argument(
      "--emit", choices=MANIFEST_KINDS, default=d(None), help="write a cluster launch file instead"
  )
  parser.add_argument("--emit_to", default=d("-"), help="file for --emit (default: standard output)")
  parser.add_argument("--image", default=d(None), help="--emit/--submit: container image")
  parser.add_argument(
      "--command", default=d(None),
      help="--emit/--submit: how a host starts ckptbench, shell words (default: `python -m ckptbench`;"
      " with --submit, this Python's own)",
  )  # fmt: skip
  parser.add_argument(
      "--accelerator", choices=ACCELERATORS, default=d("cpu"), help="--emit/--submit: device kind per host"
  )
  parser.add_argument("--name", default=d("ckptbench"), help="--emit/--submit: job name")
  parser.add_argument("--submit", choices=SUBMIT_KINDS, default=d(None),
                      help="submit the cluster launch file, follow the job and exit with its exit code")  # fmt: skip
  for flag, what in (("--partition", "partition"), ("--time", "time limit (SLURM's forms: MM, HH:MM:SS, D-HH)"),
                     ("--account", "account")):  # fmt: skip
    parser.add_argument(flag, default=d(None), help=f"--submit: the job's {what}")
  parser.add_argument("--no_wait", action="store_true", default=d(False), help="--submit: return once submitted")
  parser.add_argument("--attach", metavar="JOBID", default=d(None), help="follow a submitted job (with -o OUT)")
  parser.add_argument("--poll_interval", "--poll_s", dest="poll_s", type=parse_duration, default=d(5.0),
                      help="--submit/--attach: the time between looks at the job (default 5s)")  # fmt: skip


def register(subparsers) -> None:
  parser = subparsers.add_parser(
      "launch",
      help="run a suite as N processes of one JAX job, write a JobSet / sbatch file, or submit it to SLURM",
      description=(
          "Run a suite as N processes of one jax.distributed job on this machine, write a"
          " Kubernetes JobSet or SLURM sbatch file that runs it on N hosts, or submit that sbatch file"
          " and follow the job (--submit slurm; --attach JOBID later). Arguments after CONFIG"
          " that are not launch options (or all those after --) go to `ckptbench run`."
      ),
  )
  _add_launch_options(parser, defaults=True)
  parser.add_argument("config", nargs="?", help="suite YAML file")
  parser.add_argument("run_args", nargs=argparse.REMAINDER, help="options for `ckptbench run`")
  parser.set_defaults(handler=_handle)


def split_run_args(args: argparse.Namespace) -> argparse.Namespace:
  """Moves launch options given after the suite file out of `args.run_args`."""
  late = Parser(add_help=False, strict=False)
  _add_launch_options(late, defaults=False)
  mine = args.run_args
  theirs: list[str] = []
  if "--" in mine:  # everything after "--" goes to `ckptbench run` untouched
    cut = mine.index("--")
    mine, theirs = mine[:cut], mine[cut + 1 :]
  found, rest = late.parse_known_args(mine)
  merged = argparse.Namespace(**{**vars(args), **vars(found)})
  merged.run_args = rest + theirs
  return merged


def _handle(args: argparse.Namespace) -> int:
  args = split_run_args(args)
  if args.out is None:
    raise CkptbenchError("launch needs -o OUT, the output directory")
  _check_submit_options(args)
  if args.attach:
    return attach(args.attach, pathlib.Path(args.out).resolve(), args.poll_s)
  if args.config is None:
    raise CkptbenchError("launch needs the suite file: ckptbench launch SUITE -n N -o OUT")
  args.config = suite_file(args.config)
  if args.num_processes is None:
    raise CkptbenchError("launch needs -n N, the number of processes")
  if args.submit:
    return submit_and_follow(_cluster_job(args, _devices_per_process(args)), args)
  if args.emit:
    return _emit(args)
  return _launch_here(args, [args.config, "-o", args.out, *args.run_args])


def _check_submit_options(args: argparse.Namespace) -> None:
  """Refuses options that the launch asked for would not apply."""
  if args.emit and args.submit:
    raise CkptbenchError("give one of --emit (write the launch file) and --submit (submit it)")
  if args.attach and (args.config or args.submit or args.emit or args.num_processes):
    raise CkptbenchError(
        "--attach follows a job already submitted: it takes -o OUT (and --poll_interval), no suite, -n, --submit or --emit"
    )
  if not args.submit:
    given = [f"--{n}" for n in ("partition", "time", "account", "no_wait") if getattr(args, n)]
    if given:
      raise CkptbenchError(f"{', '.join(given)} only appl{'ies' if len(given) == 1 else 'y'} with --submit slurm")


def _cluster_job(args: argparse.Namespace, devices_per_host: int | None) -> ClusterJob:
  """The job of a cluster launch file; its paths are absolute, as its hosts start elsewhere."""
  from ckptbench.distributed import ClusterJob  # noqa: PLC0415
  from ckptbench.storage import is_store_url  # noqa: PLC0415

  if is_store_url(args.out) and args.submit:
    raise CkptbenchError(f"--submit needs -o on a filesystem that every node shares, not the bucket {args.out}")
  out = args.out if is_store_url(args.out) else str(pathlib.Path(args.out).resolve())
  command = args.command or ("python -m ckptbench" if args.emit else shlex.join([sys.executable, "-m", "ckptbench"]))
  return ClusterJob(
      num_hosts=args.num_processes,
      run_args=(str(pathlib.Path(args.config).resolve()), "-o", out, *args.run_args),
      image=args.image,
      command=tuple(shlex.split(command)),
      devices_per_host=devices_per_host,
      accelerator=args.accelerator,
      name=args.name,
      **({"port": args.port} if args.port else {}),
  )


def _emit(args: argparse.Namespace) -> int:
  """Writes the cluster launch file."""
  from ckptbench.distributed import render_manifest  # noqa: PLC0415

  job = _cluster_job(args, args.devices_per_process)
  text = render_manifest(args.emit, job)
  if args.emit_to == "-":
    sys.stdout.write(text)
  else:
    pathlib.Path(args.emit_to).write_text(text)
    print(f"wrote {args.emit} for {args.num_processes} hosts to {args.emit_to}")
  return 0


def _devices_per_process(args: argparse.Namespace) -> int:
  """--devices_per_process, else the suite's largest mesh shared evenly by the processes."""
  if args.devices_per_process is not None:
    return args.devices_per_process
  from ckptbench.config import load_suite  # noqa: PLC0415

  needed = load_suite(args.config).devices_needed or 1  # a bad suite is reported here, once
  if needed % args.num_processes:
    raise CkptbenchError(
        f"the suite's largest mesh needs {needed} devices, which {args.num_processes} processes "
        "cannot share evenly; pass --devices_per_process"
    )
  return max(1, needed // args.num_processes)


def _launch_here(args: argparse.Namespace, run_args: list[str]) -> int:
  """N processes of one job on this machine."""
  from ckptbench.distributed import launch_local  # noqa: PLC0415

  per_process = _devices_per_process(args)
  try:
    outcome = launch_local(
        args.num_processes,
        run_args,
        devices_per_process=per_process,
        port=args.port,
        stop_timeout_s=args.stop_timeout_s,
    )
  except KeyboardInterrupt:
    print("ckptbench: error: launch interrupted; stopped every process", file=sys.stderr)
    return 130
  if outcome.exit_code:
    print(f"ckptbench: error: {outcome.message}", file=sys.stderr)
  return outcome.exit_code
