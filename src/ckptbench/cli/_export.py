"""`ckptbench export OUT --format csv|parquet [-o FILE]`: results as a table file."""

from __future__ import annotations

import argparse

from ckptbench.results import FORMATS, export_results


def register(subparsers) -> None:
  parser = subparsers.add_parser(
      "export",
      help="export results.jsonl as CSV or Parquet (one row per run x metric)",
      description="Writes one row per run x metric, with the options as columns: the table"
      " `ckptbench.load_results(OUT)` returns.",
  )
  parser.add_argument("out_dir", metavar="OUT", help="the output directory of `ckptbench run`")
  parser.add_argument("--format", choices=FORMATS, default="csv", help="file format (default csv)")
  parser.add_argument("-o", "--output", help="the file to write (default OUT/results.<format>)")
  parser.set_defaults(handler=run_export)


def run_export(args: argparse.Namespace) -> int:
  print(export_results(args.out_dir, args.format, args.output))
  return 0
