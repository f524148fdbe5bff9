"""The history page: one plotly chart per series (suite, machine, benchmark variant, headline
metric): run medians with their intervals, confirmed changes marked with their label, ratio and
what else changed, runs flagged worse on arrival marked by their state (pending, confirmed,
withdrawn), runs whose environment changed shaded; a filter box; plotly.js inlined, so the page
reads offline; each chart is drawn when scrolled near (10,000 runs x 11 series took 18 s to draw
at once). Above the charts, the gate's answer, every flagged run and every change in words."""

from __future__ import annotations

import pathlib
from typing import Sequence

from ckptbench.history import Arrival, Change, HistoryEntry, Series, arrival_text, change_text, failing_text, gate_passed
from ckptbench.views._plots import COLORS, LAZY_PLOTS_JS, figure_html, plotly_js
from ckptbench._escape import html_text

_WEBGL_FROM = 2000  # points: SVG draws a few thousand error bars slowly, WebGL does not
_WORSE, _BETTER, _SHADE = "#c44e52", "#55a868", "rgba(221,132,82,0.18)"
# A run flagged worse on arrival: its marker by what the changes found since made of it.
_FLAG_MARKERS = {
    "pending": {"symbol": "triangle-up", "color": "#dd8452", "line": {"width": 1, "color": "#dd8452"}},
    "confirmed": {"symbol": "triangle-up", "color": _WORSE, "line": {"width": 1, "color": _WORSE}},
    "withdrawn": {"symbol": "triangle-up-open", "color": "#8c8c8c", "line": {"width": 1, "color": "#8c8c8c"}},
}


def _figure(s: Series, index: int) -> str:
  x = list(range(len(s.medians)))
  hover = [f"{label}<br>{time}" for label, time in zip(s.labels, s.times)]
  trace = {
      "type": "scattergl" if len(x) >= _WEBGL_FROM else "scatter", "mode": "lines+markers",
      "x": x, "y": list(s.medians), "text": hover, "name": s.metric,
      "marker": {"color": COLORS[0], "size": 6}, "line": {"color": COLORS[0], "width": 1},
      "error_y": {"type": "data", "symmetric": False, "array": [h - m for h, m in zip(s.highs, s.medians)],
                  "arrayminus": [m - lo for m, lo in zip(s.medians, s.lows)], "color": "#8c8c8c"},
      "hovertemplate": "%{text}<br>%{y:.4g} " + s.unit + "<extra></extra>",
  }  # fmt: skip
  traces = [trace]
  for state, marker in _FLAG_MARKERS.items():
    flagged = [a for a in s.flagged if a.state == state]
    if flagged:
      traces.append({
          "type": "scatter", "mode": "markers", "name": f"worse on arrival, {state}",
          "x": [a.index for a in flagged], "y": [s.highs[a.index] for a in flagged],
          "text": [html_text(f"{a.label}: worse on arrival ({a.ratio:.2f}x"
                             f"{'' if a.runs == 1 else f' with the {a.runs - 1} run(s) before it'}), {state}")
                   for a in flagged],
          "marker": {**marker, "size": 11}, "hovertemplate": "%{text}<extra></extra>",
      })  # fmt: skip
  shapes, annotations = [], []
  for i, changed in s.environment_changes:
    shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": i - 0.5, "x1": i + 0.5, "y0": 0, "y1": 1,
                   "fillcolor": _SHADE, "line": {"width": 0}, "layer": "below"})  # fmt: skip
    annotations.append({"x": i, "y": 0, "xref": "x", "yref": "paper", "yanchor": "bottom", "showarrow": False,
                        "text": html_text("; ".join(changed))[:80], "font": {"size": 9, "color": "#937860"}})  # fmt: skip
  for c in s.changes:
    color = _WORSE if c.direction == "worse" else _BETTER
    shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": c.index - 0.5, "x1": c.index - 0.5,
                   "y0": 0, "y1": 1, "line": {"color": color, "width": 2, "dash": "dash"}})  # fmt: skip
    text = f"{c.direction} from {c.label}: {c.ratio:.2f}x" + (f" ({'; '.join(c.also_changed)})" if c.also_changed else "")
    annotations.append({"x": c.index - 0.5, "y": 1, "xref": "x", "yref": "paper", "yanchor": "bottom",
                        "showarrow": False, "text": html_text(text), "font": {"color": color, "size": 11}})  # fmt: skip
  layout = {
      "title": {"text": html_text(f"{s.benchmark} · {s.metric}"), "font": {"size": 13}},
      "xaxis": {"tickvals": x if len(x) <= 30 else None, "ticktext": list(s.labels) if len(x) <= 30 else None,
                "title": {"text": "run"}, "gridcolor": "#ebf0f8"},
      "yaxis": {"title": {"text": html_text(s.unit)}, "gridcolor": "#ebf0f8", "rangemode": "tozero"},
      "shapes": shapes, "annotations": annotations, "showlegend": False, "margin": {"t": 70},
  }  # fmt: skip
  return figure_html(traces, layout, f"history-{index}", 360, lazy=True)


def _items(texts: Sequence[str], css: str) -> str:
  return "".join(f"<li class='{css}'>{html_text(t)}</li>" for t in texts)


def history_page(
    series: Sequence[Series], entries: Sequence[HistoryEntry], failing: Sequence[Arrival | Change],
    unjudged: Sequence[str] = (),
) -> str:
  """The whole page as one HTML document; `unjudged`: what the gate could not judge (`history.unjudged`)."""
  newest = entries[-1]
  if failing:
    gate = f"<p id='gate' class='fail'>worse:</p><ul>{_items([failing_text(f) for f in failing], 'fail')}</ul>"
  elif unjudged:
    gate = "<p id='gate' class='fail'>undecided: the gate could not judge all of the history</p>"
  else:
    gate = f"<p id='gate' class='ok'>{html_text(gate_passed(series))}</p>"
  if unjudged:
    gate += f"<ul id='unjudged'>{_items(unjudged, 'fail')}</ul>"
  changes = [change_text(c) for s in series for c in s.changes]
  listed = f"<h2>Changes</h2><ul id='changes'>{_items(changes, 'change')}</ul>" if changes else "<p>No change in any series.</p>"
  flagged = [a for s in series for a in s.flagged]
  if flagged:
    listed = (f"<h2>Worse on arrival</h2><ul id='flagged'>"
              + "".join(f"<li class='{a.state}'>{html_text(arrival_text(a))}</li>" for a in flagged) + "</ul>" + listed)  # fmt: skip
  sections = []
  for i, s in enumerate(series):
    name = " ".join((s.suite, s.benchmark, s.metric, s.machine))
    note = f"<p class='note'>{html_text(s.note)}</p>" if s.note else ""
    sections.append(f"<section class='series' data-name='{html_text(name.lower())}'>"
                    f"<h3>{html_text(s.suite)} · {html_text(s.machine)}</h3>{note}{_figure(s, i)}</section>")  # fmt: skip
  return (
      "<!doctype html><meta charset='utf-8'><title>ckptbench history</title>"
      "<style>body{font-family:sans-serif;margin:2em}.fail,.confirmed{color:#c44e52}.ok{color:#55a868}"
      ".pending{color:#dd8452}.withdrawn{color:#8c8c8c}"
      "h3{font-size:13px;color:#555;margin:1.5em 0 0}#filter{width:30em;padding:4px}</style>"
      f"<script>{plotly_js()}</script>"
      f"<h1>History: {len(entries)} runs, {len(series)} series</h1>"
      f"<p>Newest run {html_text(newest.label)} ({html_text(newest.time)}). Points are run medians with"
      " their intervals; dashed lines mark confirmed changes (red worse, green better) at the first run after"
      " them; triangles mark runs worse than their segment on arrival (orange pending, red confirmed by a change,"
      " open grey withdrawn); shaded runs changed environment (versions, host). How changes are found and runs"
      " judged: docs/history.md.</p>"
      + gate + listed
      + "<p><input id='filter' placeholder='filter: benchmark, metric, suite or machine'></p>"
      + "".join(sections)
      + LAZY_PLOTS_JS
      + "<script>document.getElementById('filter').addEventListener('input', e => {"
      "const words = e.target.value.toLowerCase().split(/\\s+/).filter(w => w);"
      "for (const s of document.querySelectorAll('section.series')) {"
      "s.style.display = words.every(w => s.dataset.name.includes(w)) ? '' : 'none'; }});</script>"
  )  # fmt: skip


def write_history_page(
    series: Sequence[Series], entries: Sequence[HistoryEntry], failing: Sequence[Arrival | Change],
    path: str | pathlib.Path, unjudged: Sequence[str] = (),
) -> pathlib.Path:
  path = pathlib.Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(history_page(series, entries, failing, unjudged), encoding="utf-8")
  return path
