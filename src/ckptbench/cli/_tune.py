"""`ckptbench tune SUITE --objective TAG -o OUT`: the best setting of a suite's grid, by racing it."""

from __future__ import annotations

import argparse
import sys

from ckptbench.cli._compare import add_threshold_argument
from ckptbench.cli._run import add_selection_argument, add_suite_arguments, add_time_budget_argument, config_path
from ckptbench.errors import CkptbenchError


def register(subparsers) -> None:
  p = subparsers.add_parser(
      "tune", help="find the best setting of a suite's grid by racing it",
      description="Race the suite's grid on this machine and storage: every surviving candidate runs once per"
      " round, in a random order; a candidate decided worse than the best by the objective, or past a"
      " constraint, is dropped. Prints the best setting as one line of YAML; OUT/tune.json says the rest.",
  )  # fmt: skip
  add_suite_arguments(p)
  add_selection_argument(p)
  p.add_argument("-o", "--output_directory", dest="output_directory", help="where results go")
  p.add_argument("--objective", required=True, metavar="TAG",
                 help="the tag to make best, e.g. save_0_basics/time_s (a time lower, a throughput higher)")  # fmt: skip
  p.add_argument("--constraint", dest="constraints", action="append", default=[], metavar="'TAG <= VALUE'",
                 help="a limit each candidate must keep, VALUE in the tag's unit, e.g."
                 " 'save_7_memory/host_rss_peak_diff_mib <= 1536'; repeat for several")  # fmt: skip
  add_time_budget_argument(p)
  add_threshold_argument(p)
  p.add_argument("--max_candidates", type=int, default=None, metavar="N",
                 help="a grid with more cells is sampled down to N with Optuna (default 64)")  # fmt: skip
  p.add_argument("--seed", type=int, default=None, help="the sampler's seed (default: fresh, recorded in tune.json)")
  p.add_argument("--checkpoint_root", dest="checkpoint_root",
                 help="where checkpoints go (gs://BUCKET/PREFIX, s3://..., or a directory), as for run")  # fmt: skip
  p.add_argument("--link", help="shape the way to the store, as for run: e.g. 'rtt=20ms,bw=1GB/s'")
  p.add_argument("--overwrite", action="store_true", help="replace results already in OUT")
  p.add_argument("--no_views", dest="views", action="store_false", help="write no TensorBoard or HTML report")
  p.add_argument("--no_probe", dest="probe", action="store_false",
                 help="skip measuring the output directory's storage (no roofline shares)")  # fmt: skip
  p.set_defaults(handler=handle, exit_at_once=True)


def handle(args: argparse.Namespace) -> int:
  config = config_path(args)
  if not args.output_directory:
    raise CkptbenchError("give the output directory: -o OUT (or --output_directory=OUT)")
  if args.max_candidates is not None and args.max_candidates < 2:
    raise CkptbenchError(f"--max_candidates {args.max_candidates}: a race needs 2 or more")
  from ckptbench.engine import MAX_RACED, Constraint, RunSettings, tune  # noqa: PLC0415  (JAX starts later)

  constraints = [Constraint.parse(c) for c in args.constraints]  # a bad one fails before anything runs
  print(f"ckptbench tune {config}: racing for {args.objective} (results in {args.output_directory})", flush=True)
  settings = RunSettings(
      output_dir=args.output_directory, overwrite=args.overwrite, write_views=args.views, argv=tuple(sys.argv),
      overrides=tuple(args.overrides), select=tuple(args.select), devices=args.devices, probe_storage=args.probe,
      capture_library_output=True, regression_threshold=args.regression_threshold, time_budget_s=args.time_budget_s,
      checkpoint_root=args.checkpoint_root, link=args.link,
  )  # fmt: skip
  outcome = tune(config, settings, args.objective, constraints, max_candidates=args.max_candidates or MAX_RACED,
                 seed=args.seed)  # fmt: skip
  if outcome.run.is_writer:
    from ckptbench.views import print_tune  # noqa: PLC0415

    print_tune(outcome.answer, outcome.document, outcome.path)
  return outcome.exit_code
