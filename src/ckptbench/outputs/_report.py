"""The HTML report: one self-contained file (plotly.js inlined, no network).

Sections: the verdict (the same table as the console: variants side by side,
ratios to the reference, main effects, outlying repeats), the baseline
comparison (when OUT/comparison.json exists), every run in order per variant
(warm-ups and drift), per-host distributions (stragglers), per generator the
time and throughput of every operation with the storage/memory limits, the
save and load stage breakdowns, memory and the checkpoint inventory, the
failures with their errors, and the manifest.
"""

from __future__ import annotations

import collections
import datetime
import html
import json
import math
import pathlib
import re
from typing import Any, Iterable, Mapping

from ckptbench.outputs import _plots
from ckptbench.api._tags import Tag, is_rate_unit
from ckptbench.outputs._read import RunOutputs, error_text, metric_value, read_outputs
from ckptbench.outputs._verdict import (
    BETTER,
    LARGE,
    LEGEND,
    TOO_FEW,
    WORSE,
    VerdictTable,
    build_verdict,
    interval_note,
    judgement,
    median_text,
    outlier_lines,
    ratio_text,
)

REPORT_FILE = "report.html"
_BREAKDOWNS = {"2_save_breakdown": "save stage breakdown", "3_load_breakdown": "load stage breakdown"}
_GIB = float(1 << 30)
_RATE = re.compile(r"(/s|_per_s|_s|bps)$")


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
  figures = _FigureIds()
  verdict = build_verdict(outputs.results, (outputs.summary or {}).get("reference"))
  body = [_overview(outputs), _verdict(verdict, outputs.suite), _comparison(outputs.comparison)]
  if verdict is not None:
    body.append(_runs_in_order(outputs, verdict, figures))
    body.append(_hosts(outputs, verdict, figures))
  by_generator: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
  for bench in outputs.benchmarks:
    by_generator[str(bench.get("generator", ""))].append(bench)
  limits = roofline_limits(outputs)
  notes = _limit_notes(outputs)
  for generator, benches in by_generator.items():
    body.append(_generator_section(generator, benches, limits, notes, figures))
  if not outputs.benchmarks:
    body.append("<p class=note>summary.json is missing: no statistics to plot.</p>")
  body.append(_failures(outputs))
  body.append(_manifest(outputs.manifest))
  title = html.escape(f"ckptbench: {outputs.suite}")
  return (
      "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
      f"<meta name=viewport content='width=device-width'><title>{title}</title>"
      f"<style>{_CSS}</style><script>{_plots.plotly_js()}</script></head><body>\n<h1>{title}</h1>\n"
      + "\n".join(part for part in body if part)
      + "\n</body></html>\n"
  )


_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1400px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
h3{margin-bottom:.3em}table{border-collapse:collapse;margin:.5em 0;font-size:.88em}
td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em;max-height:30em}
.figure{margin:.6em 0}#verdict td{white-space:nowrap}.better{color:#1b7f3a}.worse{color:#b00020;font-weight:bold}
.unsure{color:#a86b00}
.fail{color:#b00020}.ok{color:#1b7f3a}.note{color:#666}
tr.regressed td{background:#fde8e8}tr.improved td{background:#e8f7ec}
"""


def _esc(value: Any) -> str:
  return html.escape(str(value), quote=True)


def _num(value: Any) -> str:
  number = metric_value(value)
  if number is None:
    return "" if value is None else _esc(value)
  return f"{number:.4g}"


def _table(header: Iterable[str], rows: Iterable[Iterable[Any]], numeric_from: int = 1, row_class=None) -> str:
  head = "".join(f"<th>{_esc(h)}</th>" for h in header)
  lines = []
  for i, row in enumerate(rows):
    cells = "".join(
        f"<td class=num>{_num(c)}</td>" if j >= numeric_from and metric_value(c) is not None
        else f"<td>{_esc(c) if c is not None else ''}</td>"
        for j, c in enumerate(row)
    )
    cls = f" class='{_esc(row_class(i))}'" if row_class else ""
    lines.append(f"<tr{cls}>{cells}</tr>")
  return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"


def _overview(outputs: RunOutputs) -> str:
  runs = outputs.measured_runs()
  failed = sum(1 for r in runs if r.get("error"))
  benches = outputs.benchmarks
  if not runs and benches:  # summary only
    total = sum(int(b.get("runs") or 0) for b in benches)
    failed = sum(int(b.get("failed") or 0) for b in benches)
  else:
    total = len(runs)
  n_bench = len(benches) or len({r.get("benchmark") for r in runs})
  status = f"<span class=fail>{failed} failed</span>" if failed else "<span class=ok>0 failed</span>"
  generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
  notes = []
  summary = outputs.summary or {}
  if summary.get("interrupted"):
    notes.append("<p class=fail>the run was interrupted: some runs are missing.</p>")
  for skipped in summary.get("skipped_meshes") or []:
    notes.append(f"<p class=note>skipped mesh {_esc(skipped.get('mesh'))}: {_esc(skipped.get('reason'))}</p>")
  for invalid in (summary.get("invalid_combinations") or []) + (summary.get("unsupported") or []):
    notes.append(
        f"<p class=note>not run ({_esc(invalid.get('reason'))}): {_esc(invalid.get('generator'))}"
        f" {_esc(json.dumps(invalid.get('options'), default=str))}</p>"
    )
  return (
      f"<p>{n_bench} benchmarks, {total} runs, {total - failed} passed, {status}."
      f" Output directory <code>{_esc(outputs.out_dir)}</code>; report generated {generated}.</p>"
      + "".join(notes)
  )


def _label(bench: dict[str, Any]) -> str:
  varying = bench.get("varying") or {}
  if varying:
    return ", ".join(f"{k}={v}" for k, v in varying.items())
  return str(bench.get("name") or bench.get("key") or "?")


def _labels(benches: list[dict[str, Any]]) -> list[str]:
  labels = [_label(b) for b in benches]
  counts = collections.Counter(labels)
  return [f"{l} [{b.get('key', i)}]" if counts[l] > 1 else l for i, (l, b) in enumerate(zip(labels, benches))]


def _stats(bench: dict[str, Any], tag: str) -> dict[str, Any]:
  stats = (bench.get("metrics") or {}).get(tag)
  return stats if isinstance(stats, dict) else {}


def _series(benches: list[dict[str, Any]], tag: str) -> tuple[list[float], list[float]]:
  means, stds = [], []
  for bench in benches:
    stats = _stats(bench, tag)
    mean, std = metric_value(stats.get("mean")), metric_value(stats.get("std"))
    means.append(math.nan if mean is None else mean)
    stds.append(0.0 if std is None or math.isnan(std) else std)
  return means, stds


def _tags(benches: list[dict[str, Any]]) -> dict[str, str]:
  """Every tag of these benchmarks with its unit, in a stable order."""
  units: dict[str, str] = {}
  for bench in benches:
    for tag, stats in (bench.get("metrics") or {}).items():
      if isinstance(stats, dict):
        units.setdefault(tag, str(stats.get("unit") or ""))
  return units  # first-seen order: operations appear in the order they ran


def roofline_limits(outputs: RunOutputs) -> dict[str, float]:
  """The measured storage and memory limits in GiB/s, by name; empty when unknown.

  Read from `manifest["roofline"]` (or `summary["roofline"]`): numbers, or
  `{"value": v, "unit": u}` entries, possibly nested. Entries in bytes/s or
  MiB/s are converted; entries whose unit is unknown are taken as GiB/s.
  """
  roofline = None
  for source in (outputs.manifest, outputs.summary):
    if isinstance(source, dict) and isinstance(source.get("roofline"), dict):
      roofline = source["roofline"]
      break
  limits: dict[str, float] = {}

  def visit(name: str, value: Any) -> None:
    if isinstance(value, dict) and "value" in value:
      number = metric_value(value)
      if number is not None:
        scaled = _to_gib_per_s(number, str(value.get("unit") or name))
        if scaled is not None:
          limits[name] = scaled
    elif isinstance(value, dict):
      for key, sub in value.items():
        visit(f"{name}/{key}" if name else str(key), sub)
    else:
      number = metric_value(value)
      scaled = None if number is None else _to_gib_per_s(number, name)
      if scaled is not None:
        limits[name] = scaled

  if roofline:
    visit("", roofline)
  return limits


def _to_gib_per_s(value: float, unit_or_name: str) -> float | None:
  text = unit_or_name.lower()
  if not _RATE.search(text):
    return None  # not a rate (e.g. a probe size or a timestamp)
  if "mib" in text or "mb" in text:
    return value / 1024.0
  if "gib" in text or "gb" in text:
    return value
  if "byte" in text or text.endswith("b/s"):
    return value / _GIB
  return value


def _limits_for(op: str, throughput_tags: Iterable[str], limits: Mapping[str, float]) -> dict[str, float]:
  """The limits that bound an operation: disk write for saves, reads (and memcpy) for loads."""
  text = (op + " " + " ".join(throughput_tags)).lower()
  wanted = []
  if any(w in text for w in ("save", "write")):
    wanted.append("write")
  if any(w in text for w in ("load", "restore", "read")):
    wanted.extend(("read", "memcpy", "memory"))
  return {name: value for name, value in limits.items() if any(w in name.lower() for w in wanted)}


class _FigureIds:
  """Stable ids for the figures' divs (fig1, fig2, ...): the same results give the same page."""

  def __init__(self):
    self.count = 0

  def next(self) -> str:
    self.count += 1
    return f"fig{self.count}"


_JUDGEMENT_CLASS = {BETTER: "better", WORSE: "worse", LARGE: "unsure", TOO_FEW: "unsure"}


def _verdict(table: VerdictTable | None, suite: str) -> str:
  """The console's verdict table, as HTML: a row per metric, a column per variant."""
  if table is None:
    return ""
  by_key = {v.key: v for v in table.variants}
  head = "".join(f"<th>{_esc(v.label)}</th>" for v in table.variants)
  rows = []
  for metric in table.metrics:
    cells = []
    for variant in table.variants:
      cell = table.cell(metric.tag, variant.key)
      if cell is None:
        cells.append("<td class=num>-</td>")
        continue
      css = _JUDGEMENT_CLASS.get(judgement(cell.comparison), "")
      cells.append(f"<td class=num>{_esc(median_text(cell))}<br><span class='{css}'>{_esc(ratio_text(cell))}</span></td>")
    rows.append(f"<tr><th>{_esc(metric.label)}</th><td>{_esc(metric.unit)}</td>{''.join(cells)}</tr>")
  parts = [
      f"<h2>verdict</h2><p>reference: <b>{_esc(by_key[table.reference].label)}</b></p>",
      f"<table id=verdict><thead><tr><th>metric</th><th>unit</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>",
  ]
  if table.effects:
    metrics = table.metrics
    effect_rows = [
        [f"{e.axis}={e.level} vs {e.reference_level}", e.pairs]
        + [f"{e.ratios[m.tag]:.2f}x" if m.tag in e.ratios else "-" for m in metrics]
        for e in table.effects
    ]
    parts.append("<h3>main effect of each option</h3><p class=note>geometric mean of the ratios between"
                 " variants that differ in this option alone</p>")
    parts.append(_table(["option", "pairs"] + [m.label for m in metrics], effect_rows))
  parts.append(f"<p class=note>{_esc(interval_note(table))}<br>{_esc(LEGEND)}</p>")
  outliers = outlier_lines(table)
  if outliers:
    parts.append("<p class=unsure>outlying repeats:</p><ul>" + "".join(f"<li>{_esc(l)}</li>" for l in outliers) + "</ul>")
  return "\n".join(parts)


def _runs_in_order(outputs: RunOutputs, table: VerdictTable, figures: _FigureIds) -> str:
  """Each headline time, run by run per variant, warm-ups included: warm-up effects and drift."""
  flagged = {(v.key, m.tag, o.repeat) for v, m, o in table.outliers()}
  parts = []
  for metric in table.metrics:
    if Tag.parse(metric.tag).namespace != "0_basics":
      continue
    series = {}
    for variant in table.variants:
      points = []
      runs = [r for r in outputs.results if r.get("key") == variant.key and not r.get("error")]
      for record in sorted(runs, key=lambda r: (not r.get("warmup"), int(r.get("repeat") or 0))):
        value = metric_value((record.get("metrics") or {}).get(metric.tag))
        if value is None or int(record.get("host") or 0) != 0:
          continue
        warmup, repeat = bool(record.get("warmup")), int(record.get("repeat") or 0)
        kind = "warm-up" if warmup else "outlier" if (variant.key, metric.tag, repeat) in flagged else "repeat"
        points.append(_plots.RunPoint(f"w{repeat}" if warmup else str(repeat), value, kind))
      if points:
        series[variant.label] = points
    if series:
      parts.append(_plots.repeat_series(f"{metric.label}, run by run (host 0)", metric.unit, series, figures.next()))
  if not parts:
    return ""
  return ("<h2>runs in order</h2><p class=note>open circles: warm-ups (not counted); crosses: outlying repeats."
          " A first repeat far above the others is a warm-up effect; a trend across repeats is drift.</p>"
          + "".join(f"<div class=figure>{p}</div>" for p in parts))


def _hosts(outputs: RunOutputs, table: VerdictTable, figures: _FigureIds) -> str:
  """Per host, the headline times over the repeats (several hosts only): stragglers stand out."""
  runs = [r for r in outputs.measured_runs() if not r.get("error")]
  if len({int(r.get("host") or 0) for r in runs}) < 2:
    return ""
  parts = []
  for metric in table.metrics:
    if Tag.parse(metric.tag).namespace != "0_basics":
      continue
    by_variant: dict[str, dict[int, list[float]]] = {}
    for variant in table.variants:
      for record in runs:
        value = metric_value((record.get("metrics") or {}).get(metric.tag))
        if record.get("key") == variant.key and value is not None:
          by_variant.setdefault(variant.label, {}).setdefault(int(record.get("host") or 0), []).append(value)
    if by_variant:
      parts.append(_plots.host_distribution(f"{metric.label} per host", metric.unit, by_variant, figures.next()))
  return "<h2>hosts</h2>" + "".join(f"<div class=figure>{p}</div>" for p in parts)


def _limit_notes(outputs: RunOutputs) -> dict[str, str]:
  """Per roofline limit, when it was probed and how steady the probe was (shown beside its line)."""
  probe = (outputs.manifest or {}).get("roofline")
  if not isinstance(probe, dict):
    return {}
  when = str(probe.get("measured_at") or "date unknown").replace("T", " ")[:16]
  spread = probe.get("spread") if isinstance(probe.get("spread"), dict) else {}
  repeats = probe.get("repeats")
  notes = {}
  for name in roofline_limits(outputs):
    base = name.removesuffix("_gbps")
    detail = f"spread {spread[base]:.0%} over {repeats} probes" if base in spread else "spread unknown"
    notes[name] = f"probed {when}, {detail}"
  return notes


def _band(benches: list[dict[str, Any]], tag: str) -> tuple[list[float], list[float], list[float]]:
  """Medians and ranges (min, max) of a tag across the variants; NaN where absent."""
  medians, lows, highs = [], [], []
  for bench in benches:
    stats = _stats(bench, tag)
    median = metric_value(stats.get("median"))
    if median is None:
      median = metric_value(stats.get("mean"))
    median = math.nan if median is None else median
    low, high = metric_value(stats.get("min")), metric_value(stats.get("max"))
    medians.append(median)
    lows.append(median if low is None else low)
    highs.append(median if high is None else high)
  return medians, lows, highs


def _generator_section(
    generator: str,
    benches: list[dict[str, Any]],
    limits: Mapping[str, float],
    notes: Mapping[str, str],
    figures: _FigureIds,
) -> str:
  labels = _labels(benches)
  tags = _tags(benches)
  ops: dict[str, list[str]] = collections.defaultdict(list)
  for tag in tags:
    ops[Tag.parse(tag).op].append(tag)
  parts = [f"<h2>{_esc(generator.rsplit('.', 1)[-1] or 'benchmarks')}</h2>",
           f"<p class=note>generator <code>{_esc(generator)}</code>; {len(benches)} sweep points</p>"]
  panels = []
  for op, op_tags in ops.items():
    time_tag = f"{op}_0_basics/time_s"
    if time_tag in op_tags:
      panels.append(_plots.Panel(f"{op}: time", "s", {"median (range)": _band(benches, time_tag)}))
    # The operation's own bandwidth (as in the verdict): not its halves' copies, not save_blocking_gbps.
    own = next((t for t in op_tags if Tag.parse(t).namespace == "4_throughput" and t.endswith("_total_gbps")
                and not op.endswith(("_blocking", "_background")) and is_rate_unit(tags[t])), None)  # fmt: skip
    if own is not None:
      op_limits = [_plots.Limit(n, v, notes.get(n, "")) for n, v in _limits_for(op, [own], limits).items()]
      panels.append(_plots.Panel(f"{op}: throughput", tags[own], {"median (range)": _band(benches, own)},
                                 op_limits if tags[own] == "GiB/s" else []))  # fmt: skip
  if panels:
    parts.append("<h3>time and throughput per operation</h3>")
    parts.append(f"<div class=figure>{_plots.panel_grid(labels, panels, figures.next())}</div>")
  for namespace, title in _BREAKDOWNS.items():
    for op, op_tags in ops.items():
      stage_tags = [t for t in op_tags if Tag.parse(t).namespace == namespace and tags[t] == "s"
                    and not _is_enclosing_stage(Tag.parse(t).metric)]
      if stage_tags:
        stages = {Tag.parse(t).metric: [0.0 if math.isnan(m) else m for m in _series(benches, t)[0]]
                  for t in stage_tags}
        figure = _plots.stacked_figure(f"{op}: {title}", labels, stages, "s", figures.next())
        parts.append(f"<h3>{_esc(op)}: {_esc(title)}</h3><div class=figure>{figure}</div>")
  parts.append(_memory(benches, labels, tags, figures))
  parts.append(_inventory(benches, labels, tags))
  parts.append(_all_metrics(benches, tags))
  return "\n".join(p for p in parts if p)


def _is_enclosing_stage(metric: str) -> bool:
  """Totals and "since the last save" span the other stages: stacking them would count twice."""
  return "total" in metric or metric.startswith("since_last")


def _memory(benches: list[dict[str, Any]], labels: list[str], tags: Mapping[str, str], figures: _FigureIds) -> str:
  memory = [t for t in tags if Tag.parse(t).namespace == "7_memory"]
  if not memory:
    return ""
  # The plot shows peaks (absolute host peak, device peaks); the table shows every memory metric.
  plotted = [t for t in memory if tags[t] in ("MiB", "GiB") and "peak" in t and ("device" in t or "diff" not in t)]
  parts = ["<h3>memory</h3>"]
  if plotted:
    unit = tags[plotted[0]]
    panel = _plots.Panel("peak memory (host, device)", unit, {t: _band(benches, t) for t in plotted if tags[t] == unit})
    parts.append(f"<div class=figure>{_plots.panel_grid(labels, [panel], figures.next(), ncols=1)}</div>")
  parts.append(_metric_rows(benches, labels, tags, memory))
  return "".join(parts)


def _metric_rows(
    benches: list[dict[str, Any]], labels: list[str], tags: Mapping[str, str], metrics: list[str]
) -> str:
  """A table with a row per metric and a column per sweep point (means)."""
  rows = [[t, tags[t]] + [_series([b], t)[0][0] for b in benches] for t in metrics]
  return _table(["metric", "unit"] + labels, rows, numeric_from=2)


def _inventory(benches: list[dict[str, Any]], labels: list[str], tags: Mapping[str, str]) -> str:
  inventory = [t for t in tags if Tag.parse(t).namespace == "5_inventory"]
  if not inventory:
    return ""
  return "<h3>checkpoint inventory</h3>" + _metric_rows(benches, labels, tags, inventory)


def _all_metrics(benches: list[dict[str, Any]], tags: Mapping[str, str]) -> str:
  parts = ["<details><summary>all metrics (mean ± std, min, max, n)</summary>"]
  for bench in benches:
    rows = []
    for tag in tags:
      stats = _stats(bench, tag)
      if stats:
        rows.append([tag, stats.get("mean"), stats.get("std"), stats.get("min"), stats.get("max"),
                     stats.get("n"), stats.get("unit", "")])
    parts.append(f"<h4>{_esc(bench.get('name', ''))}</h4>")
    parts.append(_table(["metric", "mean", "std", "min", "max", "n", "unit"], rows))
  parts.append("</details>")
  return "\n".join(parts)


def _failures(outputs: RunOutputs) -> str:
  failed = [r for r in outputs.measured_runs() if r.get("error")]
  if not failed:
    errors = [(b.get("name"), e) for b in outputs.benchmarks for e in b.get("errors") or []]
    if not errors:
      return "<h2>failures</h2><p class=ok>none</p>"
    rows = [[name, e.get("repeat"), e.get("host"), error_text(e)] for name, e in errors]
    return "<h2>failures</h2>" + _table(["benchmark", "repeat", "host", "error"], rows, numeric_from=9)
  parts = ["<h2 class=fail>failures</h2>"]
  for record in failed:
    error = record.get("error")
    trace = error.get("traceback") if isinstance(error, dict) else None
    parts.append(
        f"<h4>{_esc(record.get('benchmark', ''))}, repeat {_esc(record.get('repeat'))},"
        f" host {_esc(record.get('host', 0))}</h4><p class=fail><code>{_esc(error_text(error))}</code></p>"
    )
    if trace:
      parts.append(f"<details><summary>traceback</summary><pre>{_esc(trace)}</pre></details>")
  return "\n".join(parts)


_VERDICT_ORDER = {"regressed": 0, "improved": 1, "unchanged": 2}


def _comparison(rows: list[dict[str, Any]] | None) -> str:
  if not rows:
    return ""
  rows = sorted(rows, key=lambda r: (_VERDICT_ORDER.get(str(r.get("verdict")), 3), str(r.get("benchmark"))))
  columns = ["benchmark", "metric", "baseline", "current", "ratio", "ci_low", "ci_high", "p_value", "verdict"]
  body = [[row.get(c) for c in columns] for row in rows]
  regressed = sum(1 for r in rows if r.get("verdict") == "regressed")
  note = f"<p class=fail>{regressed} regressed</p>" if regressed else "<p class=ok>no regression</p>"
  table = _table(columns, body, numeric_from=2, row_class=lambda i: str(rows[i].get("verdict", "")))
  return "<h2>baseline comparison</h2>" + note + table


def _manifest(manifest: dict[str, Any] | None) -> str:
  if not manifest:
    return "<h2>manifest</h2><p class=note>manifest.json is missing</p>"
  rows = []
  for key, value in manifest.items():
    if isinstance(value, (dict, list)):
      text = json.dumps(value, indent=1, sort_keys=True, default=str)
      cell = f"<pre>{_esc(text)}</pre>" if len(text) > 80 else f"<code>{_esc(json.dumps(value, default=str))}</code>"
    else:
      cell = _esc(value)
    rows.append(f"<tr><th>{_esc(key)}</th><td>{cell}</td></tr>")
  return "<h2>manifest</h2><table><tbody>" + "".join(rows) + "</tbody></table>"
