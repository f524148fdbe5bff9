"""The report's figures: interactive plotly figures as HTML fragments.

Every function takes plain series and returns a `<div>` (no script library:
`plotly_js()` is inlined once per page, from the installed plotly package, so
the report works offline). Nothing here reads files.

Scales: each operation's time and each bandwidth get their own panel, so a
0.01 s blocking time is never drawn on a 2 s axis; a panel whose values
(limits included) span more than 10x gets a log axis, so a page-cache read
limit at 15 GiB/s does not flatten a 0.3 GiB/s save.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping, Sequence

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")
_LIMIT_COLORS = ("#c44e52", "#8172b3", "#937860", "#2f4f4f")
_LOG_SPAN = 10.0
_CONFIG = {"displaylogo": False, "responsive": True}
_LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=50, b=40), font=dict(size=11))


def plotly_js() -> str:
  """The plotly.js bundle of the installed plotly package (inlined once per report)."""
  return get_plotlyjs()


def _html(fig: go.Figure, div_id: str, height: int) -> str:
  fig.update_layout(height=height, **_LAYOUT)
  return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=_CONFIG)


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


def panel_grid(labels: Sequence[str], panels: Sequence[Panel], div_id: str, ncols: int = 2) -> str:
  """Bars of medians (interval as error bars) per variant, a panel per metric."""
  ncols = max(1, min(ncols, len(panels)))
  nrows = -(-len(panels) // ncols)
  fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=[p.title for p in panels],
                      vertical_spacing=min(0.5 / nrows, 0.12))  # fmt: skip
  for i, panel in enumerate(panels):
    row, col = i // ncols + 1, i % ncols + 1
    values: list[float] = [l.value for l in panel.limits]
    for j, (name, (medians, lows, highs)) in enumerate(panel.series.items()):
      values += list(medians)
      fig.add_trace(go.Bar(
          x=list(labels), y=list(medians), name=name, legendgroup=name, showlegend=len(panel.series) > 1,
          marker_color=COLORS[j % len(COLORS)],
          error_y=dict(type="data", symmetric=False,
                       array=[max(h - m, 0) for m, h in zip(medians, highs)],
                       arrayminus=[max(m - l, 0) for m, l in zip(medians, lows)]),
          hovertemplate=f"%{{x}}<br>median %{{y:.4g}} {panel.unit}<extra>{name}</extra>",
      ), row=row, col=col)  # fmt: skip
    for j, limit in enumerate(panel.limits):
      fig.add_hline(
          y=limit.value, row=row, col=col, line_dash="dash", line_color=_LIMIT_COLORS[j % len(_LIMIT_COLORS)],
          annotation_text=f"limit: {limit.name} {limit.value:.3g}" + (f" ({limit.note})" if limit.note else ""),
          annotation_position="top left", annotation_font_size=9,
      )  # fmt: skip
    fig.update_yaxes(title_text=panel.unit, type="log" if _wide(values) else "linear", row=row, col=col)
  fig.update_layout(barmode="group", legend=dict(orientation="h"))
  return _html(fig, div_id, 300 * nrows + 60)


@dataclasses.dataclass(frozen=True)
class RunPoint:
  """One run in a per-repeat series: its place in run order, value and kind."""

  x: str
  value: float
  kind: str  # "warm-up", "repeat" or "outlier"


_MARKERS = {"warm-up": "circle-open", "repeat": "circle", "outlier": "x"}


def repeat_series(title: str, unit: str, series: Mapping[str, Sequence[RunPoint]], div_id: str) -> str:
  """Each variant's value run by run (warm-ups first): warm-up effects and drift at a glance."""
  fig = go.Figure()
  values = []
  for j, (name, points) in enumerate(series.items()):
    values += [p.value for p in points]
    fig.add_trace(go.Scatter(
        x=[p.x for p in points], y=[p.value for p in points], name=name, mode="lines+markers",
        line=dict(color=COLORS[j % len(COLORS)]),
        marker=dict(symbol=[_MARKERS[p.kind] for p in points], size=[13 if p.kind == "outlier" else 8 for p in points]),
        text=[p.kind for p in points],
        hovertemplate=f"run %{{x}} (%{{text}})<br>%{{y:.4g}} {unit}<extra>{name}</extra>",
    ))  # fmt: skip
  fig.update_layout(title=title, xaxis_title="run (w = warm-up, not counted)", yaxis_title=unit,
                    xaxis_type="category", yaxis_type="log" if _wide(values) else "linear")  # fmt: skip
  return _html(fig, div_id, 340)


def host_distribution(title: str, unit: str, by_variant: Mapping[str, Mapping[int, Sequence[float]]], div_id: str) -> str:
  """Per variant, each host's values over the repeats: a straggler host stands out."""
  fig = go.Figure()
  for j, (name, by_host) in enumerate(by_variant.items()):
    xs, ys = [], []
    for host, values in sorted(by_host.items()):
      xs += [f"host {host}"] * len(values)
      ys += list(values)
    fig.add_trace(go.Box(x=xs, y=ys, name=name, boxpoints="all", jitter=0.3, pointpos=0,
                         marker_color=COLORS[j % len(COLORS)]))  # fmt: skip
  fig.update_layout(title=title, yaxis_title=unit, boxmode="group")
  return _html(fig, div_id, 340)


def stacked_figure(title: str, labels: Sequence[str], stages: Mapping[str, Sequence[float]], unit: str, div_id: str) -> str:
  """Horizontal stacked bars: where the time of each variant went."""
  fig = go.Figure()
  for j, (stage, values) in enumerate(stages.items()):
    fig.add_trace(go.Bar(y=list(labels), x=list(values), name=stage, orientation="h",
                         marker_color=COLORS[j % len(COLORS)]))  # fmt: skip
  fig.update_layout(title=title, barmode="stack", xaxis_title=f"mean ({unit})", yaxis_autorange="reversed")
  return _html(fig, div_id, max(260, 60 * len(labels) + 120))
