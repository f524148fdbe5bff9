"""`ckptbench report OUT [--view NAME]... [--html FILE]`: the views of finished results."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
  parser = subparsers.add_parser(
      "report",
      help="write the views of a run's output directory (the HTML report, TensorBoard, registered views)",
      description="Writes the registered views from OUT/results.jsonl, summary.json, manifest.json and"
      " comparison.json: by default every default view (the self-contained HTML report, OUT/tensorboard/"
      " and any view registered with ckptbench.views.register_view by the files given with --views_from).",
  )
  parser.add_argument("out_dir", metavar="OUT", help="the output directory of `ckptbench run`")
  parser.add_argument(
      "--view", action="append", metavar="NAME", help="write only this view (repeatable; default: every default view)"
  )
  parser.add_argument("--html", "-o", "--output", dest="output", metavar="FILE",
                      help="write the HTML report to this file instead of OUT/report.html")  # fmt: skip
  parser.add_argument(
      "--views_from", action="append", default=[], metavar="FILE",
      help="a Python file that registers views; imported before the views are written (repeatable)",
  )  # fmt: skip
  # `ckptbench run` starts this command detached and passes the pipe to wait on (see views/_background.py).
  parser.add_argument("--after_parent_fd", type=int, help=argparse.SUPPRESS)
  parser.add_argument("--probe_missing", action="store_true", help=argparse.SUPPRESS)
  parser.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
  from ckptbench import views  # noqa: PLC0415  (the views' libraries are slow to import)
  from ckptbench.results import check_output_dir, output_lock  # noqa: PLC0415

  check_output_dir(args.out_dir)
  if args.after_parent_fd is not None:
    views.wait_for_parent(args.after_parent_fd)
  if args.output and args.view == ["report"] and not args.probe_missing:  # nothing written into OUT
    return _write(args, views)
  # The views process of a run waits for whoever took OUT after the run; a user is refused.
  with output_lock(args.out_dir, "report", wait=args.after_parent_fd is not None, create=False):
    return _write(args, views)


def _write(args: argparse.Namespace, views) -> int:
  if args.probe_missing:
    views.add_missing_probe(args.out_dir)
  views.import_view_sources(args.views_from)
  names = list(args.view or views.default_views())
  if args.output and "report" in names:
    names.remove("report")
    print(f"report: {views.write_report(args.out_dir, args.output)}", flush=True)
  failures = views.write_views(args.out_dir, names)
  for name in names:
    print(f"{name}: {'failed: ' + failures[name] if name in failures else 'written'}", flush=True)
  if args.after_parent_fd is not None:
    print(views.VIEWS_DONE, flush=True)
  return 1 if failures else 0
