"""`ckptbench goodput OUT --mtbf 6h`: the checkpoint interval that maximises goodput."""

from __future__ import annotations

import argparse
import pathlib

from ckptbench.cli._units import parse_duration


def _count(text: str) -> int:
  if not text.isdigit() or int(text) < 1:
    raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
  return int(text)


def register(subparsers) -> None:
  parser = subparsers.add_parser(
      "goodput",
      help="the checkpoint interval that maximises goodput, from measured save costs",
      description=(
          "From a finished run (or a baseline file) and a failure rate, computes for every"
          " benchmark that measured a save the interval of work between checkpoints that"
          " maximises goodput (exact exponential-failure model, Young/Daly to first order),"
          " the goodput there and at --interval, and writes goodput.json and goodput.html"
          " (a plot of goodput against interval). Recovery time comes from a"
          " preemption_recovery run in the same results or --recovery; when neither exists"
          " the best interval is still given and the goodput values are not. See docs/goodput.md."
      ),
  )
  parser.add_argument("source", metavar="OUT", help="output directory of `ckptbench run`, or a baseline file")
  rate = parser.add_mutually_exclusive_group(required=True)
  rate.add_argument("--mtbf", type=parse_duration, help="mean time between failures of the whole job, e.g. 6h")
  rate.add_argument("--mttf", type=parse_duration,
                    help="mean time to failure of one accelerator (with --accelerators), e.g. 50000h")
  parser.add_argument("--accelerators", type=_count, help="number of accelerators (with --mttf)")
  parser.add_argument("--interval", type=parse_duration, help="the interval of work between saves used now")
  parser.add_argument("--recovery", type=parse_duration,
                      help="restart-and-restore time after a failure (overrides a measured one)")
  parser.add_argument("-o", "--output_directory", "--output_dir", dest="output_dir",
                      help="where goodput.json and goodput.html go (default: OUT,"
                      " or the baseline file's directory)")
  parser.set_defaults(handler=_handle, parser=parser)


def _handle(args: argparse.Namespace) -> int:
  from ckptbench.analysis import plan_goodput  # noqa: PLC0415
  from ckptbench.views import plans_as_text, write_goodput  # noqa: PLC0415

  if args.mttf is not None and args.accelerators is None:
    args.parser.error("--mttf needs --accelerators (the job fails when any of them does)")
  if args.accelerators is not None and args.mttf is None:
    args.parser.error("--accelerators goes with --mttf")
  mtbf = args.mtbf if args.mtbf is not None else args.mttf / args.accelerators
  plans = plan_goodput(args.source, mtbf, interval_s=args.interval, recovery_s=args.recovery)
  source = pathlib.Path(args.source)
  directory = pathlib.Path(args.output_dir) if args.output_dir else (source if source.is_dir() else source.parent)
  print(plans_as_text(plans))
  json_path, html_path = write_goodput(plans, directory)
  print(f"written: {json_path}, {html_path}")
  return 0
