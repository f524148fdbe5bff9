"""The checkpoint interval that maximises goodput, from a finished run or a baseline file.

Each benchmark that measured a save gives a `CheckpointCost` (see
`ckptbench.stats._goodput`): its per-save blocking time, the lag until the save
is durable, and the recovery time measured by a `preemption_recovery` run in
the same results (or given by the user). Where an input is missing, the plan
names it instead of assuming a value.
"""

from __future__ import annotations

import dataclasses
import html
import math
import pathlib
import statistics
from typing import Any, Mapping

from ckptbench.errors import CkptbenchError
from ckptbench.outputs._baseline import Baseline, build_baseline, load_baseline, read_run
from ckptbench.outputs._results import write_json_atomic
from ckptbench.stats import CheckpointCost, expected_goodput, optimal_interval, young_interval

HTML_FILE = "goodput.html"
JSON_FILE = "goodput.json"

# Per-save blocking time, first found wins: (tag, what it is).
_BLOCKING = (
    ("save_steady_blocking_0_basics/time_s_mean", "steady-state async save call (training_interference)"),
    ("save_blocking_0_basics/time_s_mean", "async save call, mean per save"),
    ("save_blocking_0_basics/time_s", "async save call"),
    ("save_0_basics/time_s", "synchronous save"),
)
_STEP_SLOWDOWN = "interference_9_other/extra_s_per_save"
_RECOVERY = "recover_0_basics/time_s"


@dataclasses.dataclass(frozen=True)
class GoodputPlan:
  """The goodput figures of one benchmark.

  Attributes:
    benchmark: its readable name.
    key: its key in the results.
    cost: the measured cost (recovery_s None when not measured nor given).
    sources: where each input came from, e.g. {"blocking_s": "save_blocking_0_basics/time_s"}.
    mtbf_s: mean time between failures of the whole job.
    best_interval_s: work between saves maximising goodput.
    young_interval_s: Young's first-order estimate, sqrt(2 * blocking * MTBF).
    best_goodput: expected goodput at the best interval (None without recovery).
    current_interval_s: the user's interval, if given.
    current_goodput: expected goodput at it (None without it or without recovery).
    missing: the inputs that were neither measured nor given, with how to get them.
  """

  benchmark: str
  key: str
  cost: CheckpointCost
  sources: Mapping[str, str]
  mtbf_s: float
  best_interval_s: float
  young_interval_s: float
  best_goodput: float | None
  current_interval_s: float | None
  current_goodput: float | None
  missing: tuple[str, ...]


def _median(entry: Mapping[str, Any] | None) -> float | None:
  if not entry:
    return None
  values = [v for v in entry.get("across_hosts", {}).get("values", []) if isinstance(v, (int, float))]
  return statistics.median(values) if values else None


def _document(source: str | pathlib.Path) -> Baseline:
  path = pathlib.Path(source)
  if path.is_file():
    return load_baseline(path)
  records, manifest = read_run(path)
  return build_baseline(records, manifest, "goodput")


def _cost(metrics: Mapping[str, Any], recovery: tuple[float, str] | None):
  sources: dict[str, str] = {}
  blocking = None
  for tag, what in _BLOCKING:
    blocking = _median(metrics.get(tag))
    if blocking is not None:
      sources["blocking_s"] = f"{tag} ({what})"
      break
  if blocking is None:
    return None
  slowdown = _median(metrics.get(_STEP_SLOWDOWN))
  if slowdown is not None and slowdown > 0:
    blocking += slowdown
    sources["blocking_s"] += f" + {_STEP_SLOWDOWN} (step slowdown during the background write)"
  lag = None
  if tag == "save_0_basics/time_s":
    lag, sources["lag_s"] = 0.0, "0 (a synchronous save is durable when it returns)"
  elif tag.startswith("save_steady_"):
    lag = _median(metrics.get("save_steady_background_0_basics/time_s_mean"))
    sources["lag_s"] = "save_steady_background_0_basics/time_s_mean"
  else:
    blocking_only = _median(metrics.get(tag))
    durable = _median(metrics.get("save_durable_0_basics/time_s_mean")) or _median(
        metrics.get("save_durable_0_basics/time_s"))
    background = _median(metrics.get("save_background_0_basics/time_s"))
    whole = _median(metrics.get("save_0_basics/time_s"))
    if durable is not None:
      lag, sources["lag_s"] = max(durable - blocking_only, 0.0), "save_durable minus save_blocking"
    elif background is not None:
      lag, sources["lag_s"] = background, "save_background_0_basics/time_s"
    elif whole is not None:
      lag, sources["lag_s"] = max(whole - blocking_only, 0.0), "save_0_basics/time_s minus save_blocking"
  cost = CheckpointCost(blocking_s=blocking, lag_s=lag, recovery_s=recovery[0] if recovery else None)
  if recovery:
    sources["recovery_s"] = recovery[1]
  missing = []
  if lag is None:
    missing.append("lag_s: time from the save call's return until the save is durable (no"
                   " save_durable, save_background or save metric); the best interval assumes"
                   " it is shorter than the interval")
  return cost, sources, missing


def plan_goodput(
    source: str | pathlib.Path,
    mtbf_s: float,
    *,
    interval_s: float | None = None,
    recovery_s: float | None = None,
) -> list[GoodputPlan]:
  """Goodput plans for every benchmark of a run directory or baseline file that measured a save.

  Args:
    source: an output directory of `ckptbench run`, or a baseline file.
    mtbf_s: mean time between failures of the whole job, seconds.
    interval_s: the interval in use now, to compare with the best one.
    recovery_s: restart-and-restore time; overrides a measured one.

  Raises:
    CkptbenchError: when nothing in the source measured a save, or for a
      non-positive MTBF or interval.
  """
  if not mtbf_s > 0 or (interval_s is not None and not interval_s > 0):
    raise CkptbenchError("--mtbf and --interval must be positive durations such as 6h or 30m")
  benchmarks = _document(source).benchmarks
  recovery: tuple[float, str] | None = None
  if recovery_s is not None:
    recovery = (recovery_s, "given (--recovery)")
  else:
    for entry in benchmarks.values():
      measured = _median(entry.metrics.get(_RECOVERY))
      if measured is not None:
        recovery = (measured, f"{_RECOVERY} of {entry.name}")
        break
  plans = []
  for key, entry in benchmarks.items():
    found = _cost(entry.metrics, recovery)
    if found is None:
      continue
    cost, sources, missing = found
    if cost.blocking_s <= 0:
      continue
    if recovery is None:
      missing.append("recovery_s: restart and restore after a failure (run preemption_recovery"
                     " in the same suite, or pass --recovery)")
    best = optimal_interval(cost, mtbf_s)
    known = cost.recovery_s is not None and cost.lag_s is not None
    plans.append(GoodputPlan(
        benchmark=entry.name, key=key, cost=cost, sources=sources, mtbf_s=mtbf_s,
        best_interval_s=best, young_interval_s=young_interval(cost.blocking_s, mtbf_s),
        best_goodput=expected_goodput(best, cost, mtbf_s) if known else None,
        current_interval_s=interval_s,
        current_goodput=expected_goodput(interval_s, cost, mtbf_s) if known and interval_s else None,
        missing=tuple(missing),
    ))  # fmt: skip
  if not plans:
    raise CkptbenchError(
        f"{source}: no benchmark measured a save (save_blocking, save_steady_blocking or save"
        " time); run training_interference, checkpoint_manager or save_restore first"
    )
  return plans


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
                 f'{html.escape(plan.benchmark)}: {html.escape(label)}</text>')
  parts.append("</svg>")
  rows = "".join(
      f"<tr><td>{html.escape(p.benchmark)}</td><td>{_duration(p.cost.blocking_s)}</td>"
      f"<td>{_optional_duration(p.cost.lag_s)}</td>"
      f"<td>{_optional_duration(p.cost.recovery_s)}</td>"
      f"<td>{_duration(p.best_interval_s)}</td><td>{_percent(p.best_goodput)}</td>"
      f"<td>{_duration(p.current_interval_s) if p.current_interval_s else '–'}</td>"
      f"<td>{_percent(p.current_goodput)}</td><td>{html.escape('; '.join(p.missing)) or '–'}</td></tr>"
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

