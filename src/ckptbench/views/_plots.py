"""The report's figures: interactive plotly.js figures as HTML fragments.

Every function takes plain series and returns a `<div>` with the figure as JSON
for plotly.js (no script library: `plotly_js()` is inlined once per page, from
the installed plotly package, so the report works offline). Nothing here reads
files but the bundle. Figures are plain dicts in plotly.js's schema, not
`plotly.graph_objects`: building and validating those objects cost about a second
per report, more than everything else the views write.

Scales: each operation's time and each bandwidth get their own panel, so a
0.01 s blocking time is never drawn on a 2 s axis; a panel whose values
(limits included) span more than 10x gets a log axis, so a page-cache read
limit at 15 GiB/s does not flatten a 0.3 GiB/s save.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import math
import pathlib
from typing import Any, Mapping, Sequence

from ckptbench._escape import script_json

COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")
_LIMIT_COLORS = ("#c44e52", "#8172b3", "#937860", "#2f4f4f")
_LOG_SPAN = 10.0
_CONFIG = {"displaylogo": False, "responsive": True}
_GRID = "#ebf0f8"  # light axes on white, as plotly's "plotly_white" template draws them
_AXIS = {"gridcolor": _GRID, "zerolinecolor": _GRID, "automargin": True}
_LAYOUT = {"margin": {"l": 60, "r": 20, "t": 50, "b": 40}, "font": {"size": 11},
           "paper_bgcolor": "white", "plot_bgcolor": "white"}  # fmt: skip


@functools.cache
def plotly_js() -> str:
  """The plotly.js bundle of the installed plotly package (inlined once per report)."""
  spec = importlib.util.find_spec("plotly")  # located, not imported: the Python package is not needed
  if spec is None or not spec.submodule_search_locations:
    raise ModuleNotFoundError("the report needs the plotly package (pip install plotly)")
  return (pathlib.Path(spec.submodule_search_locations[0]) / "package_data" / "plotly.min.js").read_text()


def _finite(value: Any) -> Any:
  """JSON for plotly.js: NaN and infinities become null (a gap), as plotly's own encoder does."""
  if isinstance(value, float) and not math.isfinite(value):
    return None
  if isinstance(value, dict):
    return {k: _finite(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [_finite(v) for v in value]
  return value


def figure_html(data: list[dict], layout: dict, div_id: str, height: int, lazy: bool = False) -> str:
  """The figure's div and its script; `lazy`: drawn when scrolled near (the page calls
  `LAZY_PLOTS_JS` once), so a page of many large charts shows its first ones at once."""
  figure = script_json([_finite(data), _finite({**_LAYOUT, **layout, "height": height}), _CONFIG])
  div = f'<div id="{div_id}" class="plotly-graph-div" style="height:{height}px; width:100%;"></div>'
  if lazy:
    return div + f'<script type="application/json" class="lazy-figure" data-for="{div_id}">{figure}</script>'
  return div + f'<script type="text/javascript">Plotly.newPlot("{div_id}", ...{figure});</script>'


LAZY_PLOTS_JS = (
    "<script>(() => { const seen = new IntersectionObserver(items => { for (const item of items) {"
    " if (!item.isIntersecting) continue; seen.unobserve(item.target);"
    " const json = document.querySelector(`script.lazy-figure[data-for='${item.target.id}']`);"
    " Plotly.newPlot(item.target, ...JSON.parse(json.textContent)); } }, {rootMargin: '400px'});"
    " for (const s of document.querySelectorAll('script.lazy-figure'))"
    " seen.observe(document.getElementById(s.dataset.for)); })();</script>"
)


def _wide(values: Sequence[float]) -> bool:
  """True when the positive values span more than 10x (a log axis shows both ends)."""
  positive = [v for v in values if v is not None and math.isfinite(v) and v > 0]
  return len(positive) > 1 and max(positive) / min(positive) > _LOG_SPAN


@dataclasses.dataclass(frozen=True)
class Limit:
  """A roofline line: value in the panel's unit and a note (probe date, spread)."""

  name: str
  value: float
  note: str = ""


@dataclasses.dataclass(frozen=True)
class Panel:
  """One panel of a grid: medians across the variants with their intervals.

  Attributes:
    title: the panel title.
    unit: the y-axis unit.
    series: series name -> (medians, lows, highs), one value per variant.
    limits: roofline lines drawn across the panel.
  """

  title: str
  unit: str
  series: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]]
  limits: Sequence[Limit] = ()


def _domains(count: int, spacing: float) -> list[tuple[float, float]]:
  """Equal [start, end] fractions of the paper for `count` cells with `spacing` between them."""
  size = (1 - spacing * (count - 1)) / count
  return [(i * (size + spacing), i * (size + spacing) + size) for i in range(count)]


def _limit_marks(limit: Limit, color: str, axis: str, log: bool) -> tuple[dict, dict]:
  """A dashed line across panel `axis` (e.g. "2") at the limit, and its label above it."""
  x, y = f"x{axis} domain", f"y{axis}"
  line = {"type": "line", "xref": x, "yref": y, "x0": 0, "x1": 1, "y0": limit.value, "y1": limit.value,
          "line": {"dash": "dash", "color": color}}  # fmt: skip
  text = f"limit: {limit.name} {limit.value:.3g}" + (f" ({limit.note})" if limit.note else "")
  position = math.log10(limit.value) if log and limit.value > 0 else limit.value  # annotations: log10 on a log axis
  label = {"text": text, "xref": x, "yref": y, "x": 0, "y": position, "xanchor": "left", "yanchor": "bottom",
           "showarrow": False, "font": {"size": 9}}  # fmt: skip
  return line, label


def _bar_traces(labels: Sequence[str], panel: Panel, axis: str) -> list[dict]:
  traces = []
  for j, (name, (medians, lows, highs)) in enumerate(panel.series.items()):
    traces.append({
        "type": "bar", "x": list(labels), "y": list(medians), "name": name, "legendgroup": name,
        "showlegend": len(panel.series) > 1, "marker": {"color": COLORS[j % len(COLORS)]},
        "xaxis": f"x{axis}", "yaxis": f"y{axis}",
        "error_y": {"type": "data", "symmetric": False,
                    "array": [max(h - m, 0) for m, h in zip(medians, highs)],
                    "arrayminus": [max(m - l, 0) for m, l in zip(medians, lows)]},
        "hovertemplate": f"%{{x}}<br>median %{{y:.4g}} {panel.unit}<extra>{name}</extra>",
    })  # fmt: skip
  return traces


def panel_grid(labels: Sequence[str], panels: Sequence[Panel], div_id: str, ncols: int = 2) -> str:
  """Bars of medians (interval as error bars) per variant, a panel per metric."""
  ncols = max(1, min(ncols, len(panels)))
  nrows = -(-len(panels) // ncols)
  columns = _domains(ncols, 0.2 / ncols)
  rows = _domains(nrows, min(0.5 / nrows, 0.12))[::-1]  # the first row on top
  data: list[dict] = []
  layout: dict[str, Any] = {"barmode": "group", "legend": {"orientation": "h"}, "shapes": [], "annotations": []}
  for i, panel in enumerate(panels):
    axis = "" if i == 0 else str(i + 1)
    (x0, x1), (y0, y1) = columns[i % ncols], rows[i // ncols]
    values = [l.value for l in panel.limits] + [m for medians, _, _ in panel.series.values() for m in medians]
    log = _wide(values)
    data += _bar_traces(labels, panel, axis)
    layout[f"xaxis{axis}"] = {**_AXIS, "domain": [x0, x1], "anchor": f"y{axis}"}
    layout[f"yaxis{axis}"] = {**_AXIS, "domain": [y0, y1], "anchor": f"x{axis}", "title": {"text": panel.unit},
                              "type": "log" if log else "linear"}  # fmt: skip
    layout["annotations"].append({"text": panel.title, "xref": "paper", "yref": "paper", "x": (x0 + x1) / 2,
                                  "y": y1, "xanchor": "center", "yanchor": "bottom", "showarrow": False,
                                  "font": {"size": 13}})  # fmt: skip
    for j, limit in enumerate(panel.limits):
      line, label = _limit_marks(limit, _LIMIT_COLORS[j % len(_LIMIT_COLORS)], axis, log)
      layout["shapes"].append(line)
      layout["annotations"].append(label)
  return figure_html(data, layout, div_id, 300 * nrows + 60)


@dataclasses.dataclass(frozen=True)
class RunPoint:
  """One run in a per-repeat series: its place in run order, value and kind."""

  x: str
  value: float
  kind: str  # "warm-up", "repeat" or "outlier"


_MARKERS = {"warm-up": "circle-open", "repeat": "circle", "outlier": "x"}


def repeat_series(title: str, unit: str, series: Mapping[str, Sequence[RunPoint]], div_id: str) -> str:
  """Each variant's value run by run (warm-ups first): warm-up effects and drift at a glance."""
  data, values = [], []
  for j, (name, points) in enumerate(series.items()):
    values += [p.value for p in points]
    data.append({
        "type": "scatter", "x": [p.x for p in points], "y": [p.value for p in points], "name": name,
        "mode": "lines+markers", "line": {"color": COLORS[j % len(COLORS)]},
        "marker": {"symbol": [_MARKERS[p.kind] for p in points],
                   "size": [13 if p.kind == "outlier" else 8 for p in points]},
        "text": [p.kind for p in points],
        "hovertemplate": f"run %{{x}} (%{{text}})<br>%{{y:.4g}} {unit}<extra>{name}</extra>",
    })  # fmt: skip
  layout = {"title": {"text": title}, "xaxis": {**_AXIS, "title": {"text": "run (w = warm-up, not counted)"},
            "type": "category"}, "yaxis": {**_AXIS, "title": {"text": unit}, "type": "log" if _wide(values) else "linear"}}  # fmt: skip
  return figure_html(data, layout, div_id, 340)


def host_distribution(title: str, unit: str, by_variant: Mapping[str, Mapping[int, Sequence[float]]], div_id: str) -> str:
  """Per variant, each host's values over the repeats: a straggler host stands out."""
  data = []
  for j, (name, by_host) in enumerate(by_variant.items()):
    xs, ys = [], []
    for host, values in sorted(by_host.items()):
      xs += [f"host {host}"] * len(values)
      ys += list(values)
    data.append({"type": "box", "x": xs, "y": ys, "name": name, "boxpoints": "all", "jitter": 0.3, "pointpos": 0,
                 "marker": {"color": COLORS[j % len(COLORS)]}})  # fmt: skip
  layout = {"title": {"text": title}, "yaxis": {**_AXIS, "title": {"text": unit}}, "xaxis": _AXIS, "boxmode": "group"}
  return figure_html(data, layout, div_id, 340)


def stacked_figure(
    title: str, labels: Sequence[str], stages: Mapping[str, Sequence[float]], unit: str, div_id: str,
    statistic: str = "mean",
) -> str:  # fmt: skip
  """Horizontal stacked bars: where the time of each variant went (`statistic` of the repeats)."""
  data = [
      {"type": "bar", "y": list(labels), "x": list(values), "name": stage, "orientation": "h",
       "marker": {"color": COLORS[j % len(COLORS)]}}
      for j, (stage, values) in enumerate(stages.items())
  ]  # fmt: skip
  layout = {"title": {"text": title}, "barmode": "stack", "xaxis": {**_AXIS, "title": {"text": f"{statistic} ({unit})"}},
            "yaxis": {**_AXIS, "autorange": "reversed"}}  # fmt: skip
  return figure_html(data, layout, div_id, max(260, 60 * len(labels) + 120))
