"""`ckptbench export OUT [--format F]` or `ckptbench export OUT --<format> FILE...`: results as a
table file (CSV, Parquet), or a benchmark x metric's repeats as another tool's file (pyperf,
github-action-benchmark)."""

from __future__ import annotations

import argparse

from ckptbench.errors import CkptbenchError
from ckptbench.results import BENCHMARK_FORMATS, FORMATS

_ALL_FORMATS = FORMATS + BENCHMARK_FORMATS


def _file_flag(fmt: str) -> str:
  return fmt.replace("-", "_")


def register(subparsers) -> None:
  parser = subparsers.add_parser(
      "export",
      help="export results as CSV or Parquet (a row per run x metric), or for pyperf or github-action-benchmark",
      description="Writes one row per run x metric, with the options as columns: the table"
      " `ckptbench.load_results(OUT)` returns; or each benchmark x metric's repeats as a pyperf file"
      " (`python -m pyperf stats FILE`, `compare_to A B`) or a github-action-benchmark list (docs/outputs.md)."
      " What pyperf or github-action-benchmark cannot hold is left out and named.",
  )
  parser.add_argument("out_dir", metavar="OUT", help="the output directory of `ckptbench run`")
  parser.add_argument("--format", choices=_ALL_FORMATS, default=None, help="file format (default csv)")
  # `-o` names an output directory everywhere else; the file of --format is its older, unshown name.
  parser.add_argument("-o", "--output", help=argparse.SUPPRESS)
  for fmt in _ALL_FORMATS:
    parser.add_argument(f"--{_file_flag(fmt)}", metavar="FILE", help=f"write the {fmt} file FILE (repeatable across formats)")
  parser.add_argument("--include_warmups", dest="include_warmups", action="store_true",
                      help="CSV and Parquet: also the warm-up runs (left out by default, as summary.json leaves them"
                      " out; pyperf's file always has them as warm-ups)")  # fmt: skip
  parser.add_argument("--bigger_is_better", action="store_true",
                      help="github-action-benchmark: the bigger-is-better metrics (its customBiggerIsBetter tool)"
                      " rather than the smaller-is-better ones")  # fmt: skip
  parser.set_defaults(handler=run_export)


def _requests(args: argparse.Namespace) -> list[tuple[str, str | None]]:
  """(format, file) pairs asked for: the file flags, else --format (and -o, its file's older name)."""
  named = [(fmt, getattr(args, _file_flag(fmt))) for fmt in _ALL_FORMATS if getattr(args, _file_flag(fmt))]
  if named and (args.format or args.output):
    raise CkptbenchError("give --format or files named by format (--csv FILE, --pyperf FILE ...), not both")
  requests = named or [(args.format or "csv", args.output)]
  formats = {fmt for fmt, _ in requests}
  if args.include_warmups and not formats & set(FORMATS):
    raise CkptbenchError("--include_warmups adds the warm-up runs to a CSV or Parquet table; no table was asked for")
  if args.bigger_is_better and "github-action-benchmark" not in formats:
    raise CkptbenchError("--bigger_is_better chooses a github-action-benchmark file's direction; none was asked for")
  return requests


def run_export(args: argparse.Namespace) -> int:
  from ckptbench.results import GITHUB_ACTION_TOOLS, export_benchmarks, export_results  # noqa: PLC0415

  for fmt, output in _requests(args):
    if fmt in FORMATS:
      print(export_results(args.out_dir, fmt, output, include_warmups=args.include_warmups))
      continue
    bigger = args.bigger_is_better and fmt == "github-action-benchmark"
    done = export_benchmarks(args.out_dir, fmt, output, bigger_is_better=bigger)
    tool = f"{fmt} (tool: {GITHUB_ACTION_TOOLS[args.bigger_is_better]})" if fmt == "github-action-benchmark" else fmt
    print("\n".join(done.lines(tool)))
  return 0
