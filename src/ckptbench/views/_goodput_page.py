"""The goodput plans as files (goodput.json, goodput.html with an SVG plot) and console text."""

from __future__ import annotations

import dataclasses
import math
import pathlib

from ckptbench.analysis import GoodputPlan
from ckptbench.results import write_json_atomic
from ckptbench.stats import expected_goodput
from ckptbench._escape import html_text

HTML_FILE = "goodput.html"
JSON_FILE = "goodput.json"


def write_goodput(plans: list[GoodputPlan], directory: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
  """Writes goodput.json and goodput.html (a standalone page with an SVG plot) into `directory`."""
  directory.mkdir(parents=True, exist_ok=True)
  json_path, html_path = directory / JSON_FILE, directory / HTML_FILE
  write_json_atomic(json_path, [dataclasses.asdict(p) for p in plans])
  tmp = html_path.with_suffix(".html.tmp")
  tmp.write_text(_page(plans), encoding="utf-8")
  tmp.replace(html_path)
  return json_path, html_path


_W, _H, _PAD = 640, 360, 56
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def _curve(plan: GoodputPlan, intervals: list[float]) -> tuple[list[float], str]:
  """Goodput over `intervals`; relative to the best when recovery or lag is unknown (its shape is known)."""
  if plan.best_goodput is not None:
    return [expected_goodput(t, plan.cost, plan.mtbf_s) for t in intervals], "goodput"
  shape = dataclasses.replace(plan.cost, recovery_s=0.0, lag_s=plan.cost.lag_s or 0.0)
  top = expected_goodput(plan.best_interval_s, shape, plan.mtbf_s)
  return [expected_goodput(t, shape, plan.mtbf_s) / top for t in intervals], "goodput / best (inputs missing)"


def _page(plans: list[GoodputPlan]) -> str:
  low = min(p.best_interval_s for p in plans) / 30
  high = max(max(p.best_interval_s, p.current_interval_s or 0) for p in plans) * 30
  xs = [low * (high / low) ** (i / 200) for i in range(201)]
  curves = [_curve(p, xs) for p in plans]
  # The y axis spans the marked points (best and current) with room below, so
  # the differences that matter are visible; curves below it are clipped.
  marked = [_curve(p, [t])[0][0] for p in plans for t in (p.best_interval_s, p.current_interval_s) if t]
  y_min = max(0.0, min(marked) - max(0.5 * (1 - min(marked)), 0.01))

  def px(t: float) -> float:
    return _PAD + (_W - 2 * _PAD) * math.log(t / low) / math.log(high / low)

  def py(g: float) -> float:
    return _H - _PAD - (_H - 2 * _PAD) * (g - y_min) / max(1.0 - y_min, 1e-9)

  parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" font-size="11">',
           f'<rect x="{_PAD}" y="{_PAD}" width="{_W - 2 * _PAD}" height="{_H - 2 * _PAD}" fill="none" stroke="#888"/>']
  for decade in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
    t = 10.0 ** decade
    if low <= t <= high:
      parts.append(f'<text x="{px(t):.1f}" y="{_H - _PAD + 14}" text-anchor="middle">{_duration(t)}</text>')
  for i in range(5):
    g = y_min + (1 - y_min) * i / 4
    parts.append(f'<text x="{_PAD - 4}" y="{py(g) + 4:.1f}" text-anchor="end">{g:.3f}</text>')
  parts.append(f'<text x="{_W / 2}" y="{_H - 12}" text-anchor="middle">interval of work between saves (log)</text>')
  for n, (plan, (ys, label)) in enumerate(zip(plans, curves)):
    colour = _COLOURS[n % len(_COLOURS)]
    points = " ".join(f"{px(t):.1f},{py(max(g, y_min)):.1f}" for t, g in zip(xs, ys))
    parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>')
    best = _curve(plan, [plan.best_interval_s])[0][0]
    parts.append(f'<circle cx="{px(plan.best_interval_s):.1f}" cy="{py(best):.1f}" r="4" fill="{colour}"/>')
    if plan.current_interval_s:
      now = _curve(plan, [plan.current_interval_s])[0][0]
      parts.append(f'<rect x="{px(plan.current_interval_s) - 4:.1f}" y="{py(max(now, y_min)) - 4:.1f}"'
                   f' width="8" height="8" fill="none" stroke="{colour}" stroke-width="2"/>')
    parts.append(f'<text x="{_PAD + 6}" y="{_H - _PAD - 8 - 14 * (len(plans) - 1 - n)}" fill="{colour}">'
                 f'{html_text(plan.benchmark)}: {html_text(label)}</text>')
  parts.append("</svg>")
  rows = "".join(
      f"<tr><td>{html_text(p.benchmark)}</td><td>{_duration(p.cost.blocking_s)}</td>"
      f"<td>{_optional_duration(p.cost.lag_s)}</td>"
      f"<td>{_optional_duration(p.cost.recovery_s)}</td>"
      f"<td>{_duration(p.best_interval_s)}</td><td>{_percent(p.best_goodput)}</td>"
      f"<td>{_duration(p.current_interval_s) if p.current_interval_s else '–'}</td>"
      f"<td>{_percent(p.current_goodput)}</td><td>{html_text('; '.join(p.missing)) or '–'}</td></tr>"
      for p in plans
  )
  mtbf = _duration(plans[0].mtbf_s)
  return (
      "<!doctype html><meta charset='utf-8'><title>ckptbench goodput</title>"
      "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;border-bottom:1px solid #ddd}</style>"
      f"<h1>Checkpoint interval and goodput (MTBF {mtbf})</h1>{''.join(parts)}"
      "<p>Dots: the best interval. Squares: the current interval. Model: docs/goodput.md.</p>"
      "<table><tr><th>benchmark</th><th>blocking/save</th><th>lag to durable</th><th>recovery</th>"
      "<th>best interval</th><th>goodput</th><th>current</th><th>goodput</th><th>missing</th></tr>"
      f"{rows}</table>"
  )


def _percent(value: float | None) -> str:
  return "–" if value is None else f"{100 * value:.2f}%"


def _optional_duration(seconds: float | None) -> str:
  return "not measured" if seconds is None else _duration(seconds)


def _duration(seconds: float) -> str:
  """A duration in the largest unit that keeps it >= 1, e.g. '1.5 h'."""
  for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0), ("s", 1.0), ("ms", 1e-3)):
    if seconds >= size:
      return f"{seconds / size:.3g} {unit}"
  return f"{seconds * 1e6:.3g} µs"


def plans_as_text(plans: list[GoodputPlan]) -> str:
  """The plans as lines of text for the console."""
  lines = []
  for p in plans:
    lines.append(f"{p.benchmark} [{p.key}]")
    lines.append(f"  blocking per save {_duration(p.cost.blocking_s)}  lag to durable"
                 f" {_optional_duration(p.cost.lag_s)}  recovery {_optional_duration(p.cost.recovery_s)}"
                 f"  MTBF {_duration(p.mtbf_s)}")
    lines.append(f"  best interval {_duration(p.best_interval_s)} (Young: {_duration(p.young_interval_s)})"
                 f"  goodput there {_percent(p.best_goodput)}")
    if p.current_interval_s:
      lines.append(f"  current interval {_duration(p.current_interval_s)}  goodput {_percent(p.current_goodput)}")
    for name, where in p.sources.items():
      lines.append(f"  {name} from {where}")
    for item in p.missing:
      lines.append(f"  missing {item}")
  return "\n".join(lines)

