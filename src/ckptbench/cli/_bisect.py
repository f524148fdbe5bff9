"""`ckptbench bisect SUITE --package P --good A --bad B --metric TAG -o OUT`."""

from __future__ import annotations

import argparse
import pathlib

from ckptbench.cli._compare import add_comparison_arguments
from ckptbench.cli._run import add_suite_arguments, add_time_budget_argument, config_path
from ckptbench.errors import EXIT_INCONCLUSIVE


def register(subparsers) -> None:
  p = subparsers.add_parser(
      "bisect",
      help="find the first release of a package where a metric regressed",
      description=(
          "Binary search over the released versions from --good to --bad (as the package index"
          " lists them): at each step a matrix of the good release against the middle one, judged"
          " by the four-word rule on --metric (worse, better, equivalent, inconclusive). An inconclusive"
          " step is measured again with twice the repeats (num_repeats: auto, the default: rounds until the"
          " metric is decided, as `run` and `matrix` do, with twice the time budget); still inconclusive,"
          " bisect stops and says it could not decide (exit 5 with --fail_on_regression). The steps land in"
          " OUT/step_<n>_<version>/ and OUT/bisect.json."
      ),
  )
  add_suite_arguments(p)
  p.add_argument("--package", required=True, help="the package whose releases to search, e.g. orbax-checkpoint")
  p.add_argument("--good", required=True, help="a release where the metric was fine")
  p.add_argument("--bad", required=True, help="a later release where it regressed")
  p.add_argument("--metric", required=True, help="the metric tag, e.g. load_0_basics/time_s")
  p.add_argument("-o", "--output_directory", dest="output_directory", required=True, help="where the steps go")
  add_comparison_arguments(p)
  add_time_budget_argument(p)
  p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
  from ckptbench.config import load_suite  # noqa: PLC0415
  from ckptbench.envs import bisect_versions  # noqa: PLC0415
  from ckptbench.engine import time_budget  # noqa: PLC0415

  suite_file = pathlib.Path(config_path(args)).resolve()
  suite = load_suite(suite_file, args.overrides)  # a bad suite or --set fails here, before any step
  outcome = bisect_versions(
      suite_file, args.package, args.good, args.bad, args.metric,
      pathlib.Path(args.output_directory).resolve(), suite.config.repeats(True),
      threshold=args.regression_threshold, devices=args.devices,
      say=lambda line: print(line, flush=True), time_budget_s=time_budget(suite, args.time_budget_s),
      overrides=tuple(args.overrides),
  )  # fmt: skip
  if outcome.undecided is not None:
    step = outcome.steps[-1]
    print(f"could not decide: {args.package} {outcome.undecided} against {args.good} stayed inconclusive at"
          f" {step.repeats} rounds ({step.detail}); no culprit named. Give the suite more repeats"
          " (--time_budget with num_repeats: auto).")  # fmt: skip
    return EXIT_INCONCLUSIVE if args.fail_on_regression else 0
  if outcome.culprit is None:
    print(f"no regression of {args.metric} from {args.package} {args.good} to {args.bad}"
          f" ({args.bad} equivalent or better)")  # fmt: skip
    return 0
  print(f"culprit: {args.package} {outcome.culprit} (first release where {args.metric} regressed;"
        f" last good {outcome.last_good})")  # fmt: skip
  return 3 if args.fail_on_regression else 0
