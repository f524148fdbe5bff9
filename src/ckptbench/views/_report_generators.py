"""The report's section per generator: time, throughput, stage breakdowns, memory, inventory."""

from __future__ import annotations

import collections
import math
from typing import Mapping

from ckptbench.api import BenchmarkSummary, MetricStatistics
from ckptbench.api import Tag, is_judged, variant_labels
from ckptbench.views._report_html import FigureIds, table
from ckptbench.views._report_roofline import limits_for
from ckptbench.views import _plots
from ckptbench._escape import html_text

_BREAKDOWNS = {"2_save_breakdown": "save stage breakdown", "3_load_breakdown": "load stage breakdown"}


def _labels(benches: list[BenchmarkSummary]) -> list[str]:
  """Each benchmark by what sets it apart (api/_levels.py), else its name; its key where two read alike."""
  described = variant_labels([(b.varying or {}, b.mesh, b.checkpoint_config) for b in benches])
  labels = [text or b.name or b.key or "?" for text, b in zip(described, benches)]
  counts = collections.Counter(labels)
  return [f"{l} [{b.key}]" if counts[l] > 1 else l for l, b in zip(labels, benches)]


_ABSENT = MetricStatistics(unit="", n=0)


def _stats(bench: BenchmarkSummary, tag: str) -> MetricStatistics:
  return bench.metrics.get(tag, _ABSENT)


def _series(benches: list[BenchmarkSummary], tag: str) -> tuple[list[float], list[float]]:
  means, stds = [], []
  for bench in benches:
    stats = _stats(bench, tag)
    mean, std = stats.mean, stats.std
    means.append(math.nan if mean is None else mean)
    stds.append(0.0 if std is None or math.isnan(std) else std)
  return means, stds


def _tags(benches: list[BenchmarkSummary]) -> dict[str, str]:
  """Every tag of these benchmarks with its unit, in a stable order."""
  units: dict[str, str] = {}
  for bench in benches:
    for tag, stats in bench.metrics.items():
      units.setdefault(tag, stats.unit)
  return units  # first-seen order: operations appear in the order they ran


def _band(benches: list[BenchmarkSummary], tag: str) -> tuple[list[float], list[float], list[float]]:
  """Medians and ranges (min, max) of a tag across the variants; NaN where absent."""
  medians, lows, highs = [], [], []
  for bench in benches:
    stats = _stats(bench, tag)
    median = stats.median if stats.median is not None else stats.mean
    median = math.nan if median is None else median
    low, high = stats.min, stats.max
    medians.append(median)
    lows.append(median if low is None else low)
    highs.append(median if high is None else high)
  return medians, lows, highs


def generator_section(
    generator: str,
    benches: list[BenchmarkSummary],
    limits: Mapping[str, float],
    notes: Mapping[str, str],
    figures: FigureIds,
) -> str:
  labels = _labels(benches)
  tags = _tags(benches)
  ops: dict[str, list[str]] = collections.defaultdict(list)
  for tag in tags:
    ops[Tag.parse(tag).op].append(tag)
  parts = [f"<h2>{html_text(generator.rsplit('.', 1)[-1] or 'benchmarks')}</h2>",
           f"<p class=note>generator <code>{html_text(generator)}</code>; {len(benches)} sweep points</p>"]
  panels = []
  for op, op_tags in ops.items():
    time_tag = f"{op}_0_basics/time_s"
    if time_tag in op_tags:
      panels.append(_plots.Panel(f"{op}: time", "s", {"median (range)": _band(benches, time_tag)}))
    # The operation's own bandwidth, the one it is judged on (not its halves' copies, not save_blocking_gbps).
    own = next((t for t in op_tags if Tag.parse(t).namespace == "4_throughput" and is_judged(t)), None)
    if own is not None:
      op_limits = [_plots.Limit(n, v, notes.get(n, "")) for n, v in limits_for(op, [own], limits).items()]
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
        parts.append(f"<h3>{html_text(op)}: {html_text(title)}</h3><div class=figure>{figure}</div>")
  parts.append(_memory(benches, labels, tags, figures))
  parts.append(_inventory(benches, labels, tags))
  parts.append(_all_metrics(benches, tags))
  return "\n".join(p for p in parts if p)


def _is_enclosing_stage(metric: str) -> bool:
  """Totals and "since the last save" span the other stages: stacking them would count twice."""
  return "total" in metric or metric.startswith("since_last")


def _memory(benches: list[BenchmarkSummary], labels: list[str], tags: Mapping[str, str], figures: FigureIds) -> str:
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
    benches: list[BenchmarkSummary], labels: list[str], tags: Mapping[str, str], metrics: list[str]
) -> str:
  """A table with a row per metric and a column per sweep point (means)."""
  rows = [[t, tags[t]] + [_series([b], t)[0][0] for b in benches] for t in metrics]
  return table(["metric", "unit"] + labels, rows, numeric_from=2)


def _inventory(benches: list[BenchmarkSummary], labels: list[str], tags: Mapping[str, str]) -> str:
  inventory = [t for t in tags if Tag.parse(t).namespace == "5_inventory"]
  if not inventory:
    return ""
  return "<h3>checkpoint inventory</h3>" + _metric_rows(benches, labels, tags, inventory)


def _all_metrics(benches: list[BenchmarkSummary], tags: Mapping[str, str]) -> str:
  parts = ["<details><summary>all metrics (mean ± std, min, max, n)</summary>"]
  for bench in benches:
    rows = []
    for tag in tags:
      stats = bench.metrics.get(tag)
      if stats is not None:
        rows.append([tag, stats.mean, stats.std, stats.min, stats.max, stats.n, stats.unit])
    parts.append(f"<h4>{html_text(bench.name)}</h4>")
    parts.append(table(["metric", "mean", "std", "min", "max", "n", "unit"], rows))
  parts.append("</details>")
  return "\n".join(parts)
