"""`ckptbench compare BASELINE.json OUT`: judge a finished run against a baseline."""

from __future__ import annotations

import argparse

from ckptbench.analysis import compare_to_baseline
from ckptbench.views import print_comparison
from ckptbench.stats import DEFAULT_THRESHOLD


def register(subparsers) -> None:
  parser = subparsers.add_parser(
      "compare",
      help="compare a finished run with a baseline file",
      description=(
          "Compares OUT/results.jsonl with a baseline captured by"
          " `ckptbench run --baseline_capture_path`, writes OUT/comparison.json and"
          " prints a table, regressions first. Exit code 3 with --fail_on_regression"
          " when a headline metric (time, throughput, peak memory) regressed."
      ),
  )
  parser.add_argument("baseline", metavar="BASELINE.json", help="a captured baseline file")
  parser.add_argument("out", metavar="OUT", help="the output directory of a finished run")
  add_comparison_arguments(parser)
  parser.add_argument("--all", action="store_true", help="show unchanged and neutral rows too")
  parser.set_defaults(handler=_handle)


def add_comparison_arguments(parser: argparse.ArgumentParser) -> None:
  """Adds --regression_threshold and --fail_on_regression (shared with `run`)."""
  parser.add_argument(
      "--regression_threshold",
      type=_fraction,
      default=DEFAULT_THRESHOLD,
      metavar="FRACTION",
      help=f"relative change that counts, 0.1 = 10%% (default {DEFAULT_THRESHOLD})",
  )
  parser.add_argument(
      "--fail_on_regression",
      action="store_true",
      help="exit with code 3 when a headline metric regressed",
  )


def _fraction(text: str) -> float:
  try:
    value = float(text)
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected a number such as 0.1, got {text!r}") from None
  if not value >= 0:
    raise argparse.ArgumentTypeError(f"must be >= 0 (0.1 = 10%), got {text!r}")
  return value


def _handle(args: argparse.Namespace) -> int:
  comparison = compare_to_baseline(args.baseline, args.out, threshold=args.regression_threshold)
  print_comparison(comparison, show_all=args.all)
  return comparison.exit_code(args.fail_on_regression)
