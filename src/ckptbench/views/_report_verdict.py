"""The report's verdict sections: the variants side by side, every run in order, per-host spreads."""

from __future__ import annotations

from ckptbench.api import RecordKind, Tag, sampled_records, timed_runs, warmup_runs
from ckptbench.results import RunOutputs
from ckptbench.views._report_html import FigureIds
from ckptbench.analysis import (
    VerdictTable,
    interval_note,
    judgement,
    median_text,
    outlier_lines,
    outlier_summary,
    ratio_text,
    rules,
    table_legend,
)
from ckptbench.views import _plots
from ckptbench._escape import html_text

_JUDGEMENT_CLASS = {"better": "better", "worse": "worse", "inconclusive": "unsure"}


def verdict_section(verdict: VerdictTable | None) -> str:
  """The console's verdict table, as HTML: a row per metric, a column per variant."""
  if verdict is None:
    return ""
  head = "".join(f"<th>{html_text(v.label)}</th>" for v in verdict.variants)
  rows = []
  for metric in verdict.metrics:
    cells = []
    for variant in verdict.variants:
      cell = verdict.cell(metric.tag, variant.key)
      if cell is None:
        cells.append("<td class=num>-</td>")
        continue
      css = _JUDGEMENT_CLASS.get(judgement(cell.verdict), "")
      ratio = ratio_text(cell, verdict.is_reference(variant.key))
      cells.append(f"<td class=num>{html_text(median_text(cell))}<br><span class='{css}'>{html_text(ratio)}</span></td>")
    rows.append(f"<tr><th>{html_text(metric.label)}</th><td>{html_text(metric.unit)}</td>{''.join(cells)}</tr>")
  parts = [
      f"<h2>verdict</h2><p>reference: <b>{html_text('; '.join(verdict.reference_labels()))}</b></p>",
      f"<table id=verdict><thead><tr><th>metric</th><th>unit</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>",
  ]
  rule_lines = "".join(f"<br>rule: {html_text(rule)}" for rule in rules(verdict))
  legend = "".join(f"<br>{html_text(clause)}" for clause in table_legend(verdict))
  parts.append(f"<p class=note>{html_text(interval_note(verdict))}{legend}{rule_lines}</p>")
  summary = outlier_summary(verdict)
  if summary:
    every = "".join(f"<li>{html_text(line)}</li>" for line in outlier_lines(verdict))
    parts.append(f"<p class=unsure>outlying repeats: {html_text(summary)}</p>"
                 f"<details><summary>every outlying repeat</summary><ul>{every}</ul></details>")
  return "\n".join(parts)


def runs_in_order(outputs: RunOutputs, verdict: VerdictTable, figures: FigureIds) -> str:
  """Each headline time, run by run per variant, warm-ups included: warm-up effects and drift."""
  flagged = {(v.key, m.tag, o.repeat) for v, m, o in verdict.outliers()}
  parts = []
  for metric in verdict.metrics:
    if Tag.parse(metric.tag).namespace != "0_basics":
      continue
    series = {}
    for variant in verdict.variants:
      points = []
      # The timed runs in their order, their warm-ups first (a memory pass's records time nothing).
      runs = [r for r in (*warmup_runs(outputs.results), *timed_runs(outputs.results))
              if r.key == variant.key and not r.failed]  # fmt: skip
      for record in sorted(runs, key=lambda r: (r.kind is RecordKind.TIMED, r.repeat)):
        value = record.value(metric.tag)
        if value is None or record.host != 0:
          continue
        repeat, warmup = record.repeat, record.kind is RecordKind.WARMUP
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


def hosts_section(outputs: RunOutputs, verdict: VerdictTable, figures: FigureIds) -> str:
  """Per host, the headline times over the repeats (several hosts only): stragglers stand out."""
  runs = sampled_records(outputs.results)
  if len({r.host for r in runs}) < 2:
    return ""
  parts = []
  for metric in verdict.metrics:
    if Tag.parse(metric.tag).namespace != "0_basics":
      continue
    by_variant: dict[str, dict[int, list[float]]] = {}
    for variant in verdict.variants:
      for record in runs:
        value = record.value(metric.tag)
        if record.key == variant.key and value is not None:
          by_variant.setdefault(variant.label, {}).setdefault(record.host, []).append(value)
    if by_variant:
      parts.append(_plots.host_distribution(f"{metric.label} per host", metric.unit, by_variant, figures.next()))
  return "<h2>hosts</h2>" + "".join(f"<div class=figure>{p}</div>" for p in parts)
