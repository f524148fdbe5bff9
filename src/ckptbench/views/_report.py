"""The HTML report: one self-contained file (plotly.js inlined, no network).

Sections: the verdict (the same table as the console: variants side by side,
ratios to the reference, main effects, outlying repeats), the baseline
comparison (when OUT/comparison.json exists), every run in order per variant
(warm-ups and drift), per-host distributions (stragglers), per generator the
time and throughput of every operation with the storage/memory limits, the
save and load stage breakdowns, memory and the checkpoint inventory, the
failures with their errors, and the manifest. This module lays out the page;
`_report_verdict`, `_report_generators` and `_report_roofline` write sections.
"""

from __future__ import annotations

import collections
import datetime
import json
import pathlib
from typing import Any

from ckptbench.api import BenchmarkSummary, RecordKind, RunRecord, measured_records, memory_pass_records, timed_runs
from ckptbench.results import Comparison
from ckptbench.results import RunOutputs, read_outputs
from ckptbench.views._report_generators import generator_section
from ckptbench.views._report_html import CSS, FigureIds, table
from ckptbench.views._report_roofline import limit_notes, roofline_limits
from ckptbench.views._report_verdict import hosts_section, runs_in_order, verdict_section
from ckptbench.views._effects_view import effects_section
from ckptbench.views._floor_view import floor_section
from ckptbench.analysis import build_verdict
from ckptbench.stats import Verdict
from ckptbench.views import _plots
from ckptbench._escape import html_text

REPORT_FILE = "report.html"


def write_report(out_dir: str | pathlib.Path, output: str | pathlib.Path | None = None) -> pathlib.Path:
  """Writes the HTML report of a run's output directory.

  Args:
    out_dir: the output directory of a run (results.jsonl, summary.json, ...).
    output: where to write; default OUT/report.html.

  Returns:
    The path of the report.

  Raises:
    CkptbenchError: when `out_dir` holds no results.

  Example:
    >>> path = write_report("out/quickstart")
  """
  outputs = read_outputs(out_dir)
  path = pathlib.Path(output) if output is not None else outputs.out_dir / REPORT_FILE
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(render_report(outputs), encoding="utf-8")
  return path


def render_report(outputs: RunOutputs) -> str:
  """The report page as HTML text."""
  figures = FigureIds()
  verdict = build_verdict(outputs.results, outputs.reference, outputs.summary.verdicts if outputs.summary else ())
  body = [_overview(outputs), verdict_section(verdict), effects_section(outputs.summary),
          floor_section(outputs.summary, figures), _comparison(outputs.comparison)]
  if verdict is not None:
    body.append(runs_in_order(outputs, verdict, figures))
    body.append(hosts_section(outputs, verdict, figures))
  by_generator: dict[str, list[BenchmarkSummary]] = collections.defaultdict(list)
  for bench in outputs.benchmarks:
    by_generator[bench.generator or ""].append(bench)
  limits = roofline_limits(outputs)
  notes = limit_notes(outputs)
  for generator, benches in by_generator.items():
    body.append(generator_section(generator, benches, limits, notes, figures))
  if not outputs.benchmarks:
    body.append("<p class=note>summary.json is missing: no statistics to plot.</p>")
  body.append(_failures(outputs))
  body.append(_manifest(outputs.manifest))
  title = html_text(f"ckptbench: {outputs.suite}")
  return (
      "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
      f"<meta name=viewport content='width=device-width'><title>{title}</title>"
      f"<style>{CSS}</style><script>{_plots.plotly_js()}</script></head><body>\n<h1>{title}</h1>\n"
      + "\n".join(part for part in body if part)
      + "\n</body></html>\n"
  )


def _overview(outputs: RunOutputs) -> str:
  runs = timed_runs(outputs.results)
  failed = sum(1 for r in runs if r.failed)
  memory_pass_failed = sum(1 for r in memory_pass_records(outputs.results) if r.failed)
  benches = outputs.benchmarks
  if not runs and outputs.summary is not None:  # summary only
    total, failed = outputs.summary.runs, outputs.summary.failed
  else:
    total = len(runs)
  n_bench = len(benches) or len({r.benchmark for r in runs})
  status = f"<span class=fail>{failed} failed</span>" if failed else "<span class=ok>0 failed</span>"
  if memory_pass_failed:
    status += f", <span class=fail>{memory_pass_failed} memory pass run(s) failed</span>"
  generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
  notes = []
  summary = outputs.summary
  if summary is not None and summary.interrupted:
    notes.append("<p class=fail>the run was interrupted: some runs are missing.</p>")
  for skipped in [] if summary is None else summary.skipped_meshes:
    notes.append(f"<p class=note>skipped mesh {html_text(skipped.mesh)}: {html_text(skipped.reason)}</p>")
  for not_run in [] if summary is None else summary.invalid_combinations + summary.unsupported:
    notes.append(
        f"<p class=note>not run ({html_text(not_run.reason)}): {html_text(not_run.generator)}"
        f" {html_text(json.dumps(not_run.options, default=str))}</p>"
    )
  return (
      f"<p>{n_bench} benchmarks, {total} runs, {total - failed} passed, {status}."
      f" Output directory <code>{html_text(outputs.out_dir)}</code>; report generated {generated}.</p>"
      + "".join(notes)
  )


def _which_run(record: RunRecord) -> str:
  if record.kind is RecordKind.MEMORY_PASS:
    return f"the memory pass's repeat {record.repeat}"
  return f"repeat {record.repeat}, host {record.host}"


def _failures(outputs: RunOutputs) -> str:
  failed = [r for r in measured_records(outputs.results) if r.failed]
  if not failed:
    errors = [(b.name, e) for b in outputs.benchmarks for e in b.errors]
    if not errors:
      return "<h2>failures</h2><p class=ok>none</p>"
    rows = [[name, e.repeat, e.host, e.text] for name, e in errors]
    return "<h2>failures</h2>" + table(["benchmark", "repeat", "host", "error"], rows, numeric_from=9)
  parts = ["<h2 class=fail>failures</h2>"]
  for record in failed:
    parts.append(
        f"<h4>{html_text(record.benchmark)}, {html_text(_which_run(record))}</h4>"
        f"<p class=fail><code>{html_text(record.error.text)}</code></p>"
    )
    if record.error.traceback:
      parts.append(f"<details><summary>traceback</summary><pre>{html_text(record.error.traceback)}</pre></details>")
  return "\n".join(parts)


_VERDICT_ORDER = {Verdict.WORSE: 0, Verdict.INCONCLUSIVE: 1, Verdict.BETTER: 2, Verdict.EQUIVALENT: 3}
_COMPARISON_COLUMNS = ("benchmark", "metric", "baseline", "current", "ratio", "low", "high", "verdict")


def _comparison(comparison: Comparison | None) -> str:
  if comparison is not None and comparison.refused is not None:
    return f"<h2>baseline comparison</h2><p class=fail>{html_text(comparison.refused)}</p>"
  if comparison is None or not comparison.rows:
    return ""
  rows = sorted(comparison.rows, key=lambda r: (_VERDICT_ORDER.get(r.verdict, 3), r.name or r.benchmark))
  body = [[row.name or row.benchmark, row.metric, row.reference_median, row.current_median, row.ratio, row.low, row.high,
           row.verdict.value] for row in rows]  # fmt: skip
  regressed, unsure = len(comparison.headline_regressions), len(comparison.headline_inconclusive)
  if regressed:
    note = f"<p class=fail>{regressed} headline metric(s) worse</p>"
  elif comparison.no_regression:
    note = "<p class=ok>no regression: every headline metric equivalent or better</p>"
  else:
    note = f"<p class=unsure>{unsure} headline metric(s) inconclusive: more repeats would decide</p>"
  note += f"<p class=note>{html_text(comparison.rule)}</p>"
  table_html = table(_COMPARISON_COLUMNS, body, numeric_from=2, row_class=lambda i: rows[i].verdict.value)
  return "<h2>baseline comparison</h2>" + note + table_html


def _manifest(manifest: dict[str, Any] | None) -> str:
  if not manifest:
    return "<h2>manifest</h2><p class=note>manifest.json is missing</p>"
  rows = []
  for key, value in manifest.items():
    if isinstance(value, (dict, list)):
      text = json.dumps(value, indent=1, sort_keys=True, default=str)
      cell = f"<pre>{html_text(text)}</pre>" if len(text) > 80 else f"<code>{html_text(json.dumps(value, default=str))}</code>"
    else:
      cell = html_text(value)
    rows.append(f"<tr><th>{html_text(key)}</th><td>{cell}</td></tr>")
  return "<h2>manifest</h2><table><tbody>" + "".join(rows) + "</tbody></table>"
