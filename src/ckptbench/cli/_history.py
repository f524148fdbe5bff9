"""`ckptbench history HIST [--json F] [--html F] [--summary_md F] [--bmf F] [--pyperf F] [--github_action_benchmark F]
[--fail_on_regression] [-k P]...`
and `ckptbench history add HIST OUT... [--label L]`: a history of runs and its change points."""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from ckptbench._escape import terminal_text
from ckptbench.cli._compare import add_threshold_argument
from ckptbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION, CkptbenchError


def register(subparsers) -> None:
  parser = subparsers.add_parser(
      "history",
      help="a history of runs: series, change points, a page and a CI gate over time (docs/history.md)",
      description="`ckptbench history HIST` prints, per suite, machine, benchmark variant and headline metric,"
      " the series of run medians and its confirmed changes; `ckptbench history add HIST OUT...` adds finished"
      " runs. HIST is a directory, gs://bucket/prefix or s3://bucket/prefix.",
  )
  parser.add_argument("words", nargs="+", metavar="HIST | add HIST OUT...",
                      help="the history to read, or `add`, the history and the output directories to add")  # fmt: skip
  parser.add_argument("--label", help="with add: the label of the added run (default: its git commit, else its time)")
  parser.add_argument("--json", metavar="FILE", help="write the series and changes as JSON")
  parser.add_argument("--html", metavar="FILE", help="write the page: a chart per series (self-contained)")
  parser.add_argument("--summary_md", metavar="FILE", help="write a Markdown summary (a CI job summary)")
  parser.add_argument("--bmf", metavar="FILE", help="write the newest run in Bencher Metric Format JSON")
  parser.add_argument("--pyperf", metavar="FILE", help="write the newest run as a pyperf file (its times and sizes)")
  parser.add_argument("--github_action_benchmark", metavar="FILE",
                      help="write the newest run as github-action-benchmark's customSmallerIsBetter list")  # fmt: skip
  parser.add_argument("--bigger_is_better", action="store_true",
                      help="with --github_action_benchmark: its bigger-is-better metrics (customBiggerIsBetter)")  # fmt: skip
  parser.add_argument("--fail_on_regression", "--fail_on_change", action="store_true",
                      help="exit 3 when a headline metric's newest run is worse than its segment on arrival, or its"
                      " newest segment is worse than the one before it; 5 when an entry could not be read or a series"
                      " not tested")  # fmt: skip
  add_threshold_argument(parser)
  parser.add_argument("-k", dest="select", action="append", default=[], metavar="PATTERN",
                      help="only series whose benchmark or metric matches (a glob, else a substring; repeatable)")  # fmt: skip
  parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
  if args.words[0] == "add":
    return _add(args)
  if len(args.words) != 1:
    raise CkptbenchError(f"history takes one HIST (or `add HIST OUT...`); got {' '.join(args.words)}")
  if args.label is not None:
    raise CkptbenchError("--label names a run being added: ckptbench history add HIST OUT --label L")
  if args.bigger_is_better and not args.github_action_benchmark:
    raise CkptbenchError("--bigger_is_better chooses the direction of --github_action_benchmark FILE, which was not given")
  return _show(args)


def _add(args: argparse.Namespace) -> int:
  from ckptbench.history import HistoryStore, entry_from_outputs  # noqa: PLC0415

  if len(args.words) < 3:
    raise CkptbenchError("give the history and at least one output directory: ckptbench history add HIST OUT...")
  hist, outs = args.words[1], args.words[2:]
  if args.label is not None and len(outs) > 1:
    raise CkptbenchError(f"--label names one run; {len(outs)} output directories were given")
  store = HistoryStore(hist)
  entries = [entry_from_outputs(out, args.label) for out in outs]  # every OUT checked before any is added
  for out, entry in zip(outs, entries):
    print(f"{out}: added as {entry.label} ({store.append(entry)})")
  return EXIT_OK


def _show(args: argparse.Namespace) -> int:
  from ckptbench import history  # noqa: PLC0415

  store = history.HistoryStore(args.words[0])
  entries = store.read()
  cache = history.load_cache(store)
  series = history.analyse(entries, select=args.select, threshold=args.regression_threshold, cache=cache)
  failing = history.gate(series)
  unjudged = history.unjudged(entries, series)
  _print(series, entries, failing, unjudged, args.fail_on_regression)
  if args.json:
    _write(args.json, json.dumps(history.history_document(series, entries, unjudged), indent=1))
  if args.summary_md:
    _write(args.summary_md, history.summary_markdown(series, entries, failing, unjudged))
  if args.bmf:
    _write(args.bmf, json.dumps(history.bencher_metric_format(entries[-1]), indent=1))
  if args.pyperf:
    print("\n".join(history.write_entry_pyperf(entries[-1], pathlib.Path(args.pyperf)).lines("pyperf")))
  if args.github_action_benchmark:
    from ckptbench.results import GITHUB_ACTION_TOOLS  # noqa: PLC0415

    done = history.write_entry_github_action_benchmark(entries[-1], pathlib.Path(args.github_action_benchmark), args.bigger_is_better)
    print("\n".join(done.lines(f"github-action-benchmark (tool: {GITHUB_ACTION_TOOLS[args.bigger_is_better]})")))
  if args.html:
    from ckptbench.views import write_history_page  # noqa: PLC0415

    print(f"page: {write_history_page(series, entries, failing, args.html, unjudged)}")
  try:
    history.save_cache(store, cache)
  except (OSError, CkptbenchError) as e:  # the answer stands; the next read computes again
    print(f"warning: the analysis was not kept in {args.words[0]} (the next read computes it again): {e}", file=sys.stderr)
  if args.fail_on_regression and failing:
    return EXIT_REGRESSION
  # What the gate could not judge is never a pass: an unread entry may hold the regression.
  return EXIT_INCONCLUSIVE if args.fail_on_regression and unjudged else EXIT_OK


def _print(series, entries, failing, unjudged, gating: bool) -> None:
  from ckptbench.history import arrival_text, change_text, failing_text, gate_passed  # noqa: PLC0415

  newest = entries[-1]
  print(terminal_text(f"history: {len(entries)} runs, {len(series)} series (newest {newest.label}, {newest.time})"))
  for s in series:
    marks = {c.index: ("!" if c.direction == "worse" else "+") for c in s.changes}
    marks.update({a.index: "?" for a in s.flagged if a.state == "pending"})
    values = " ".join(f"{marks.get(i, '')}{m:.4g}" for i, m in enumerate(s.medians[-20:], start=max(0, len(s.medians) - 20)))
    print(terminal_text(f"  {s.suite} | {s.benchmark} | {s.metric} [{s.unit}] on {s.machine}: {values}"
                        + (f" ({s.note})" if s.note else "")))  # fmt: skip
    for c in s.changes:
      print(terminal_text(f"    change: {change_text(c)}"))
    for a in s.flagged:
      print(terminal_text(f"    on arrival: {arrival_text(a)}"))
  if failing:
    print(("FAIL: " if gating else "") + "worse (the newest run against its segment, or the newest segment against the one before):")
    for f in failing:
      print(terminal_text(f"  {failing_text(f)}"))
  elif not unjudged:
    print(gate_passed(series))
  if unjudged:
    print(("UNDECIDED: " if gating and not failing else "") + "the gate could not judge all of the history:")
    for line in unjudged:
      print(terminal_text(f"  {line}"))


def _write(path: str, text: str) -> None:
  target = pathlib.Path(path)
  try:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
  except OSError as e:
    raise CkptbenchError(f"cannot write {target}: {e.strerror or e}") from None
  print(f"written: {target}")
