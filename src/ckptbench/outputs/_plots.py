"""The report's figures: matplotlib figures rendered to inline SVG.

Every function takes plain series (labels, means, stds) and returns an `<svg>`
element as text; nothing here reads files. Figures are built with
`matplotlib.figure.Figure` (no pyplot), so no global state or GUI backend.
"""

from __future__ import annotations

import dataclasses
import io
from typing import Mapping, Sequence

import matplotlib
from matplotlib.figure import Figure

_BAR_COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")
_LIMIT_COLORS = ("#c44e52", "#8172b3", "#937860", "#2f4f4f")


def _svg(fig: Figure) -> str:
  buf = io.StringIO()
  with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "ckptbench"}):
    # No metadata block: no date (the page is reproducible) and no RDF namespaces.
    # Constrained layout fits labels and outside legends in one pass; bbox_inches="tight"
    # would draw every figure twice (the report's main cost).
    fig.savefig(buf, format="svg",
                metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
  text = buf.getvalue()
  return text[text.index("<svg"):]  # drop the XML prolog: the SVG is inlined in HTML


def _width(n_groups: int) -> float:
  return min(14.0, max(4.5, 1.1 * n_groups + 2.5))


def _grouped_bars(
    ax,
    labels: Sequence[str],
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
) -> None:
  """Bars of `series[name] = (means, stds)` grouped by label, with std error bars."""
  n = max(1, len(series))
  width = 0.8 / n
  for i, (name, (means, stds)) in enumerate(series.items()):
    offsets = [x + (i - (n - 1) / 2) * width for x in range(len(labels))]
    ax.bar(
        offsets, means, width, yerr=stds, capsize=3, label=name,
        color=_BAR_COLORS[i % len(_BAR_COLORS)], error_kw={"elinewidth": 1},
    )
  ax.set_xticks(range(len(labels)), labels, rotation=20 if len(labels) > 3 else 0, ha="right" if len(labels) > 3 else "center")
  ax.grid(axis="y", alpha=0.3)
  ax.set_axisbelow(True)


@dataclasses.dataclass(frozen=True)
class Panel:
  """One bar chart of a grid.

  Attributes:
    title: the panel title.
    ylabel: the y-axis label (with its unit).
    series: series name -> (means, stds), one value per sweep point.
    limits: limit name -> value in the panel's unit, drawn as dashed lines.
  """

  title: str
  ylabel: str
  series: Mapping[str, tuple[Sequence[float], Sequence[float]]]
  limits: Mapping[str, float] = dataclasses.field(default_factory=dict)


def panel_grid(labels: Sequence[str], panels: Sequence[Panel], ncols: int = 3) -> str:
  """Bar charts of several operations (time, throughput) across the sweep points, in a grid."""
  ncols = max(1, min(ncols, len(panels)))
  nrows = -(-len(panels) // ncols)
  width = min(6.0, max(3.6, 0.9 * len(labels) + 1.8))
  fig = Figure(figsize=(width * ncols, 3.3 * nrows), layout="constrained")
  axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
  for ax, panel in zip(axes, panels):
    _grouped_bars(ax, labels, panel.series)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title, fontsize=10)
    for j, (name, value) in enumerate(panel.limits.items()):
      ax.axhline(value, color=_LIMIT_COLORS[j % len(_LIMIT_COLORS)], linestyle="--", linewidth=1.2,
                 label=f"limit: {name} {value:.3g}")
    if len(panel.series) > 1 or panel.limits:
      ax.legend(fontsize=7, loc="best")
  for ax in axes[len(panels):]:
    ax.set_visible(False)
  return _svg(fig)


def stacked_figure(
    title: str, labels: Sequence[str], stages: Mapping[str, Sequence[float]], unit: str
) -> str:
  """Horizontal stacked bars: where the time of each sweep point went."""
  # Tall enough for the bars and for the legend beside them (one line per stage).
  height = max(0.5 * len(labels) + 1.6, 0.17 * len(stages) + 1.0)
  fig = Figure(figsize=(9, height), layout="constrained")
  ax = fig.subplots()
  left = [0.0] * len(labels)
  for i, (stage, values) in enumerate(stages.items()):
    ax.barh(range(len(labels)), values, left=left, label=stage, color=_BAR_COLORS[i % len(_BAR_COLORS)])
    left = [a + b for a, b in zip(left, values)]
  ax.set_yticks(range(len(labels)), labels)
  ax.invert_yaxis()
  ax.set_xlabel(f"mean ({unit})")
  ax.set_title(title, fontsize=10)
  ax.grid(axis="x", alpha=0.3)
  ax.set_axisbelow(True)
  ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
  return _svg(fig)


def bars_figure(
    title: str,
    labels: Sequence[str],
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    ylabel: str,
) -> str:
  """Grouped bars with error bars (e.g. peak memory per sweep point)."""
  fig = Figure(figsize=(_width(len(labels)) * 1.4, 3.4), layout="constrained")
  ax = fig.subplots()
  _grouped_bars(ax, labels, series)
  ax.set_ylabel(ylabel)
  ax.set_title(title, fontsize=10)
  ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
  return _svg(fig)
