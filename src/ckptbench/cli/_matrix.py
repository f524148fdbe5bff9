"""`ckptbench matrix SUITE --with SPEC --with SPEC -o OUT`: one suite across environments."""

from __future__ import annotations

import argparse
import pathlib

from ckptbench.cli._compare import add_comparison_arguments
from ckptbench.cli._run import add_suite_arguments, add_time_budget_argument, config_path
from ckptbench.errors import CkptbenchError

_SHOWN_VERSIONS = ("orbax-checkpoint", "jax", "tensorstore")


def register(subparsers) -> None:
  p = subparsers.add_parser(
      "matrix",
      help="run a suite in several environments (Orbax/JAX/TensorStore releases) and compare them",
      description=(
          "Builds one isolated environment per --with (uv, cached by the hash of its spec), runs the"
          " suite in each in interleaved rounds (every environment once a round, in a random order), and"
          " judges every environment against the first as `run` judges a sweep: num_repeats: auto (the"
          " default) adds rounds until every headline comparison is decided or the time budget is spent."
          " OUT/<label>/ holds each run, OUT/comparison.json the comparisons. Exit code 1 when an"
          " environment or benchmark failed; with --fail_on_regression 3 on a regression, 5 when a headline"
          " comparison stayed inconclusive."
      ),
  )
  add_suite_arguments(p)
  p.add_argument("--with", dest="with_", action="append", required=True, metavar="REQUIREMENTS",
                 help="one environment's packages, e.g. \"orbax-checkpoint==0.12.7\" (repeat for each)")  # fmt: skip
  p.add_argument("-o", "--output_directory", dest="output_directory", required=True, help="where results go")
  p.add_argument("--overwrite", action="store_true", help="replace an earlier matrix in OUT")
  add_comparison_arguments(p)
  add_time_budget_argument(p)
  p.add_argument("--all", action="store_true", help="show unchanged and neutral rows too")
  p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
  from ckptbench.config import load_suite  # noqa: PLC0415
  from ckptbench.envs import MatrixSettings, parse_with, run_matrix, unique_labels  # noqa: PLC0415
  from ckptbench.views import print_comparison  # noqa: PLC0415
  from ckptbench.results import output_lock  # noqa: PLC0415
  from ckptbench.engine import time_budget  # noqa: PLC0415

  suite_file = pathlib.Path(config_path(args)).resolve()
  suite = load_suite(suite_file, args.overrides)  # a bad suite or --set fails here, before any environment is built
  specs = tuple(unique_labels([parse_with(text) for text in args.with_]))
  settings = MatrixSettings(
      suite_file=suite_file,
      specs=specs,
      output_dir=pathlib.Path(args.output_directory).resolve(),
      overwrite=args.overwrite,
      threshold=args.regression_threshold,
      devices=args.devices,
      time_budget_s=time_budget(suite, args.time_budget_s),
      overrides=tuple(args.overrides),
  )
  with output_lock(settings.output_dir, "matrix"):
    repeats = suite.config.repeats(True)
    outcome = run_matrix(settings, repeats, say=lambda line: print(line, flush=True))
  for env in outcome.environments:
    if env.status == "ok":
      versions = ", ".join(f"{name} {(env.versions or {}).get(name)}" for name in _SHOWN_VERSIONS)
      failed = f"; {env.failed_runs} failed runs" if env.failed_runs else ""
      print(f"{env.label}: {versions}{failed}")
    else:
      print(f"{env.label}: {env.status}")
  for comparison in outcome.comparisons.values():
    print_comparison(comparison, show_all=args.all, repeated_until_decided=repeats == "auto")
  if outcome.reference is None:
    raise CkptbenchError("no environment finished the suite; see the lines above")
  print(f"results: {outcome.output_dir} (report.html: every environment side by side; comparison.json;"
        " each environment's own report.html)")
  return outcome.exit_code(args.fail_on_regression, args.allow_inconclusive)
