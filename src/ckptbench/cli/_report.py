"""`ckptbench report OUT [-o report.html] [--tensorboard]`: the HTML report of finished results."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
  parser = subparsers.add_parser(
      "report",
      help="write the HTML report (and optionally TensorBoard logs) of a run's output directory",
      description="Writes one self-contained HTML file (plots inlined, no network needed) from"
      " OUT/results.jsonl, summary.json, manifest.json and comparison.json.",
  )
  parser.add_argument("out_dir", metavar="OUT", help="the output directory of `ckptbench run`")
  parser.add_argument("-o", "--output", help="the HTML file to write (default OUT/report.html)")
  parser.add_argument(
      "--tensorboard", action="store_true", help="also (re)write OUT/tensorboard/ from the results"
  )
  # `ckptbench run` starts this command detached and passes the pipe to wait on (see outputs/_background.py).
  parser.add_argument("--after_parent_fd", type=int, help=argparse.SUPPRESS)
  parser.add_argument("--probe_missing", action="store_true", help=argparse.SUPPRESS)
  parser.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
  from ckptbench.outputs._lock import output_lock  # noqa: PLC0415

  if args.after_parent_fd is not None:
    from ckptbench.outputs._background import wait_for_parent  # noqa: PLC0415

    wait_for_parent(args.after_parent_fd)
  if args.output and not (args.tensorboard or args.probe_missing):  # nothing written into OUT
    return _write(args)
  # The views process of a run waits for whoever took OUT after the run; a user is refused.
  with output_lock(args.out_dir, "report", wait=args.after_parent_fd is not None, create=False):
    return _write(args)


def _write(args: argparse.Namespace) -> int:
  from ckptbench.outputs import write_report, write_tensorboard  # noqa: PLC0415  (tensorboard is slow to import)

  if args.probe_missing:
    from ckptbench.outputs._background import add_missing_probe  # noqa: PLC0415

    add_missing_probe(args.out_dir)
  path = write_report(args.out_dir, args.output)
  print(f"report: {path}", flush=True)
  if args.tensorboard:
    print(f"tensorboard: {write_tensorboard(args.out_dir)}", flush=True)
  if args.after_parent_fd is not None:
    from ckptbench.outputs._background import VIEWS_DONE  # noqa: PLC0415

    print(VIEWS_DONE, flush=True)
  return 0
