"""`ckptbench export OUT [--csv FILE] [--parquet FILE]`: results as a table file."""

from __future__ import annotations

import argparse

from ckptbench.results import FORMATS


def register(subparsers) -> None:
  parser = subparsers.add_parser(
      "export",
      help="export results.jsonl as CSV or Parquet (one row per run x metric)",
      description="Writes one row per run x metric, with the options as columns: the table"
      " `ckptbench.load_results(OUT)` returns. With no file named, OUT/results.csv.",
  )
  parser.add_argument("out_dir", metavar="OUT", help="the output directory of `ckptbench run`")
  for fmt in FORMATS:
    parser.add_argument(f"--{fmt}", metavar="FILE", help=f"write the table as {fmt.upper()} to FILE")
  parser.add_argument("--format", choices=FORMATS, default="csv",
                      help="with no file named, write OUT/results.<format> (default csv)")  # fmt: skip
  parser.add_argument("-o", "--output", help=argparse.SUPPRESS)  # the old name of the file --format writes
  parser.add_argument("--include_warmups", dest="include_warmups", action="store_true",
                      help="also the warm-up runs (left out by default, as summary.json leaves them out)")
  parser.set_defaults(handler=run_export)


def run_export(args: argparse.Namespace) -> int:
  from ckptbench.results import export_results  # noqa: PLC0415

  named = [(fmt, getattr(args, fmt)) for fmt in FORMATS if getattr(args, fmt)]
  if args.output or not named:
    named.append((args.format, args.output))
  for fmt, path in named:
    print(export_results(args.out_dir, fmt, path, include_warmups=args.include_warmups))
  return 0
