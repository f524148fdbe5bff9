"""`ckptbench launch`: run a suite as N processes here, or write a cluster launch file.

    ckptbench launch -n 2 suite.yaml -o OUT [run options...]
    ckptbench launch -n 16 --emit k8s-jobset --image IMG suite.yaml -o OUT > jobset.yaml

Everything after the suite file that is not a `launch` option is handed to
each `ckptbench run` unchanged.
"""

from __future__ import annotations

import argparse
import pathlib
import shlex
import sys

from ckptbench.distributed import launch_local
from ckptbench.distributed import ACCELERATORS, MANIFEST_KINDS, ClusterJob, render_manifest
from ckptbench.errors import CkptbenchError


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
      "--stop_timeout_s", type=float, default=d(5.0),
      help="after a failure, seconds before the others are killed",
  )  # fmt: skip
  parser.add_argument(
      "--emit", choices=MANIFEST_KINDS, default=d(None), help="write a cluster launch file instead"
  )
  parser.add_argument("--emit_to", default=d("-"), help="file for --emit (default: standard output)")
  parser.add_argument("--image", default=d(None), help="--emit: container image")
  parser.add_argument(
      "--command", default=d("python -m ckptbench"), help="--emit: how a host starts ckptbench (shell words)"
  )
  parser.add_argument(
      "--accelerator", choices=ACCELERATORS, default=d("cpu"), help="--emit: device kind per host"
  )
  parser.add_argument("--name", default=d("ckptbench"), help="--emit: job name")


def register(subparsers) -> None:
  parser = subparsers.add_parser(
      "launch",
      help="run a suite as N processes of one JAX job, or write a JobSet / sbatch file",
      description=(
          "Run a suite as N processes of one jax.distributed job on this machine, or write a"
          " Kubernetes JobSet or SLURM sbatch file that runs it on N hosts. Arguments after CONFIG"
          " that are not launch options (or all those after --) go to `ckptbench run`."
      ),
  )
  _add_launch_options(parser, defaults=True)
  parser.add_argument("config", help="suite YAML file")
  parser.add_argument("run_args", nargs=argparse.REMAINDER, help="options for `ckptbench run`")
  parser.set_defaults(handler=_handle)


def split_run_args(args: argparse.Namespace) -> argparse.Namespace:
  """Moves launch options given after the suite file out of `args.run_args`."""
  late = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
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
  if args.num_processes is None:
    raise CkptbenchError("launch needs -n N, the number of processes")
  if args.out is None:
    raise CkptbenchError("launch needs -o OUT, the output directory")
  run_args = [args.config, "-o", args.out, *args.run_args]
  if args.emit:
    job = ClusterJob(
        num_hosts=args.num_processes,
        run_args=tuple(run_args),
        image=args.image,
        command=tuple(shlex.split(args.command)),
        devices_per_host=args.devices_per_process,
        accelerator=args.accelerator,
        name=args.name,
        **({"port": args.port} if args.port else {}),
    )
    text = render_manifest(args.emit, job)
    if args.emit_to == "-":
      sys.stdout.write(text)
    else:
      pathlib.Path(args.emit_to).write_text(text)
      print(f"wrote {args.emit} for {args.num_processes} hosts to {args.emit_to}")
    return 0
  per_process = args.devices_per_process
  if per_process is None:
    from ckptbench.config import load_suite  # noqa: PLC0415

    needed = load_suite(args.config).devices_needed or 1  # a bad suite is reported here, once
    if needed % args.num_processes:
      raise CkptbenchError(
          f"the suite's largest mesh needs {needed} devices, which {args.num_processes} processes "
          "cannot share evenly; pass --devices_per_process"
      )
    per_process = max(1, needed // args.num_processes)
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
