"""`ckptbench compare BASELINE.json OUT`: judge a finished run against a baseline."""

from __future__ import annotations

import argparse

from ckptbench.stats import DEFAULT_THRESHOLD


def register(subparsers) -> None:
  parser = subparsers.add_parser(
      "compare",
      help="compare a finished run with a baseline file",
      description=(
          "Compares OUT/results.jsonl with a baseline captured by"
          " `ckptbench run --baseline_capture_path`, writes OUT/comparison.json and"
          " prints a table, regressions first. With --fail_on_regression: exit 3 when a headline"
          " metric (time, throughput, peak memory) is worse, 5 when one is inconclusive."
      ),
  )
  parser.add_argument("baseline", metavar="BASELINE.json", help="a captured baseline file")
  parser.add_argument("out", metavar="OUT", help="the output directory of a finished run")
  add_comparison_arguments(parser)
  parser.add_argument("--all", action="store_true", help="show unchanged and neutral rows too")
  parser.set_defaults(handler=_handle)


def add_threshold_argument(parser: argparse.ArgumentParser) -> None:
  """Adds --threshold, the relative change that counts (every command that judges a change)."""
  parser.add_argument(
      "--threshold",
      "--regression_threshold",
      dest="regression_threshold",
      type=_fraction,
      default=DEFAULT_THRESHOLD,
      metavar="FRACTION",
      help=f"relative change that counts, 0.1 = 10%% (default {DEFAULT_THRESHOLD})",
  )


def add_comparison_arguments(parser: argparse.ArgumentParser) -> None:
  """Adds --threshold and --fail_on_regression (run, compare, matrix, bisect; history's gate has the same name)."""
  add_threshold_argument(parser)
  parser.add_argument(
      "--fail_on_regression",
      action="store_true",
      help="exit 0 only when every headline metric is equivalent or better: 3 when one is worse,"
      " 5 when one is inconclusive (more repeats would decide)",
  )
  parser.add_argument(
      "--allow_inconclusive",
      action="store_true",
      help="with --fail_on_regression, let inconclusive headline metrics pass (exit 0 instead of 5)",
  )


def _fraction(text: str) -> float:
  try:
    value = float(text)
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected a number such as 0.1, got {text!r}") from None
  if not 0 < value < 10:
    raise argparse.ArgumentTypeError(f"expected a fraction such as 0.1 (10%), got {text!r}")
  return value


def _handle(args: argparse.Namespace) -> int:
  from ckptbench.analysis import compare_to_baseline  # noqa: PLC0415
  from ckptbench.views import print_comparison  # noqa: PLC0415

  comparison = compare_to_baseline(args.baseline, args.out, threshold=args.regression_threshold)
  print_comparison(comparison, show_all=args.all)
  return comparison.exit_code(args.fail_on_regression, args.allow_inconclusive)
