"""What grows with hosts, and where it breaks: scale.json as console text and as scale.html.

Per benchmark: the store time of a save and a restore at each target with the term that
dominates, the host counts where a limit is crossed, and per metric the measured points, the
growth law, its check on the largest measured host count and its predictions. The page draws
the headline metrics (points, fitted law, predictions with their intervals) with plotly.
"""

from __future__ import annotations

import math
import pathlib
from typing import Any, Mapping

from ckptbench.views._plots import figure_html, plotly_js
from ckptbench._escape import html_text

SCALE_PAGE = "scale.html"
# The metrics drawn on the page (all are in its tables).
HEADLINE = ("requests_put_total", "requests_load_distinct_total", "requests_get_total", "repeat_reads_load_per_s",
            "files", "primary_extra_distinct_requests_save", "barriers_save", "metadata_bytes", "primary_commit_s",
            "save_time_s")  # fmt: skip
_LAWS = {
    "constant": lambda a, b, n: a,
    "log": lambda a, b, n: a + b * math.log2(n),
    "linear": lambda a, b, n: a + b * n,
    "nlogn": lambda a, b, n: a + b * n * math.log2(n),
    "quadratic": lambda a, b, n: a * n + b * n * n,
    "inverse": lambda a, b, n: a + b / n,
}


def _number(x: float | None) -> str:
  if x is None:
    return "–"
  if x == int(x) and abs(x) < 1e12:
    return f"{int(x):,}"
  return f"{x:.3g}"


def _percent(x: float | None) -> str:
  return "–" if x is None else f"{100 * x:.1f}%"


def _hosts(n: int | None) -> str:
  return "not up to 1,048,576 hosts" if n is None else f"{n:,} hosts"


def _kind(points: Mapping[str, Any]) -> str:
  """The metric's kind; a count that differs between repeats says by how much (at most)."""
  first = next(iter(points.values()))
  spread = max(p.get("repeat_spread", 0.0) for p in points.values())
  return f"{first['kind']}~{100 * spread:.0f}%" if first["kind"] == "count" and spread else first["kind"]


def _counts(hosts: Any) -> str:
  return ", ".join(map(str, hosts))


def _check_text(check: Mapping[str, Any] | None, no_check: str | None = None) -> str:
  if not check:
    return f"– ({no_check})" if no_check else "–"
  source = f" from {_counts(check['from_hosts'])}" if check.get("from_hosts") else ""
  return (f"{_number(check['predicted'])} vs {_number(check['measured'])} at {check['hosts']}{source}"
          f" ({_percent(check['relative_error'])}, {check['law']})")  # fmt: skip


def _no_law(doc: Mapping[str, Any], bench: str) -> Mapping[str, str]:
  """The metrics measured at too few host counts for a law, and why (none in files before schema 2)."""
  return doc.get("no_law", {}).get(bench, {})


def _left_out(doc: Mapping[str, Any], bench: str) -> str:
  """The store-time terms left out for want of a law, as a parenthesis ('' when none)."""
  left = doc.get("store_times_left_out", {}).get(bench, {})
  return "".join(f" (without the {term} term: no law for {why})" for term, why in left.items())


def _commit_text(doc: Mapping[str, Any], bench: str) -> str:
  """The commit-time model in one sentence ('' when it was not fitted)."""
  model = doc.get("commit_model", {}).get(bench)
  if not model:
    return ""
  if "refused" in model:
    return f"primary commit time: no model ({model['refused']})"
  at = ", ".join(f"{_number(round(v, 3))} s at {int(n):,} hosts" for n, v in model["seconds"].items())
  source = f", fitted from {_counts(model['from_hosts'])} hosts" if model.get("from_hosts") else ""
  return (f"primary commit time = {model['a']:.3g} s + {model['b']:.3g} x its commit requests x their latency"
          f" (held-out {_percent(model['held_out_error'])}{source}; check {_check_text(model['check'])});"
          f" on {doc['store']['name']}'s {doc['store']['latency_s'] * 1e3:g} ms: {at}")  # fmt: skip


def scale_as_text(doc: Mapping[str, Any]) -> str:
  """The console's answer: per benchmark, the store times at the targets, the limits, the fits."""
  lines = [f"scale: {doc['suite']} ({doc['mode']} scaling along {doc['axis']}, {doc['devices_per_host']}"
           f" devices per host), measured at {', '.join(map(str, doc['hosts']))} hosts, fitted from"
           f" {doc['fit_from']} hosts on (cross-host steps from 2);"
           f" store profile {doc['store']['name']}"]  # fmt: skip
  lines += [f"note: {n}" for n in doc["notes"]]
  for bench, fits in doc["fits"].items():
    lines.append(f"\n{bench}")
    for op, times in doc["store_times"][bench].items():
      for n, t in times.items():
        lines.append(f"  {op} at {int(n):,} hosts on {doc['store']['name']}: about {t['seconds']:.3g} s,"
                     f" dominated by {t['dominant']}{_left_out(doc, bench) if op == 'save' else ''}")  # fmt: skip
    for limit in doc["limits"][bench]:
      lines.append(f"  limit {limit['name']}: {_hosts(limit['hosts'])} ({limit['detail']})")
    commit = _commit_text(doc, bench)
    if commit:
      lines.append(f"  {commit}")
    lines.append(f"  {'metric':34} {'kind':6} {'measured':>28}  {'law':16} {'held-out':>8}  check (largest from smaller)")
    for name, fit in fits.items():
      points = doc["measured"][bench][name]
      measured = " ".join(_number(p["value"]) for p in points.values())
      lines.append(f"  {name:34} {_kind(points):6} {measured:>28}  {fit['formula']:16} {_percent(fit['held_out_error']):>8}"
                   f"  {_check_text(fit['check'], fit.get('no_check'))}")  # fmt: skip
      for n, p in doc["predictions"][bench][name].items():
        source = f", from {_counts(p['from_hosts'])} hosts" if p.get("from_hosts") else ""
        lines.append(f"  {'':34} {'':6} {'at ' + format(int(n), ',') + ' hosts':>28}  {_number(p['value'])}"
                     f" [{_number(p['low'])}, {_number(p['high'])}] ({p['dominant']} term{source})")  # fmt: skip
    for name, why in _no_law(doc, bench).items():
      points = doc["measured"][bench][name]
      measured = " ".join(_number(p["value"]) for p in points.values())
      lines.append(f"  {name:34} {_kind(points):6} {measured:>28}  no law, no prediction: {why}")
  return "\n".join(lines)


def _figure(doc: Mapping[str, Any], bench: str, name: str, index: int) -> str:
  points = doc["measured"][bench][name]
  fit = doc["fits"][bench][name]
  preds = doc["predictions"][bench][name]
  xs = [int(n) for n in points]
  largest = max([*xs, *(int(n) for n in preds)])
  curve_x = sorted({*xs, *(int(n) for n in preds), *(2 ** k for k in range(int(math.log2(largest)) + 1))})
  data = [
      {"type": "scatter", "x": xs, "y": [p["value"] for p in points.values()], "mode": "markers",
       "name": "measured", "marker": {"size": 9}},
      {"type": "scatter", "x": curve_x, "y": [_LAWS[fit["law"]](fit["a"], fit["b"], n) for n in curve_x],
       "mode": "lines", "name": f"fit: {fit['formula']}"},
      {"type": "scatter", "x": [int(n) for n in preds], "y": [p["value"] for p in preds.values()],
       "mode": "markers", "name": f"predicted from {_counts(fit.get('from_hosts', xs))} hosts",
       "marker": {"symbol": "diamond", "size": 10},
       "error_y": {"type": "data", "symmetric": False, "array": [p["high"] - p["value"] for p in preds.values()],
                   "arrayminus": [p["value"] - p["low"] for p in preds.values()]}},
  ]  # fmt: skip
  first = next(iter(points.values()))
  layout = {
      "title": {"text": f"{name} ({first['kind']})"},
      "xaxis": {"type": "log", "title": {"text": "hosts"}},
      "yaxis": {"type": "log" if all(p["value"] > 0 for p in preds.values()) else "linear",
                "title": {"text": first["unit"]}},
  }  # fmt: skip
  return figure_html(data, layout, f"scale-{index}", 340)


def _table(doc: Mapping[str, Any], bench: str) -> str:
  targets = [str(t) for t in doc["targets"]]
  head = "".join(f"<th>{html_text(h)}</th>" for h in
                 ["metric", "kind", *(f"{n} hosts" for n in doc["hosts"]), "law", "fitted from hosts", "held-out error",
                  "check: largest from smaller", *(f"at {int(t):,}" for t in targets)])  # fmt: skip
  rows = []
  for name, fit in doc["fits"][bench].items():
    points = doc["measured"][bench][name]
    preds = doc["predictions"][bench][name]
    cells = [name, _kind(points), *(_number(points[str(n)]["value"]) for n in doc["hosts"]),
             fit["formula"], _counts(fit.get("from_hosts", ())), _percent(fit["held_out_error"]),
             _check_text(fit["check"], fit.get("no_check")),
             *(f"{_number(preds[t]['value'])} [{_number(preds[t]['low'])}, {_number(preds[t]['high'])}]"
               f" ({preds[t]['dominant']})" for t in targets)]  # fmt: skip
    rows.append("<tr>" + "".join(f"<td>{html_text(str(c))}</td>" for c in cells) + "</tr>")
  for name, why in _no_law(doc, bench).items():
    points = doc["measured"][bench][name]
    cells = [name, _kind(points), *(_number(points[str(n)]["value"]) for n in doc["hosts"])]
    rows.append("<tr>" + "".join(f"<td>{html_text(str(c))}</td>" for c in cells)
                + f"<td colspan='{4 + len(targets)}'>no law, no prediction: {html_text(why)}</td></tr>")  # fmt: skip
  return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _breaks(doc: Mapping[str, Any], bench: str) -> str:
  items = []
  for op, times in doc["store_times"][bench].items():
    for n, t in times.items():
      terms = ", ".join(f"{k} {v:.3g} s" for k, v in t["terms"].items())
      left = html_text(_left_out(doc, bench)) if op == "save" else ""
      items.append(f"<li><b>{op} at {int(n):,} hosts</b>: about {t['seconds']:.3g} s on {doc['store']['name']},"
                   f" dominated by <b>{html_text(t['dominant'])}</b> ({html_text(terms)}){left}</li>")  # fmt: skip
  for limit in doc["limits"][bench]:
    items.append(f"<li>{html_text(limit['name'])}: <b>{_hosts(limit['hosts'])}</b> ({html_text(limit['detail'])})</li>")
  commit = _commit_text(doc, bench)
  if commit:
    items.append(f"<li>{html_text(commit)}</li>")
  return f"<ul>{''.join(items)}</ul>"


def write_scale_page(doc: Mapping[str, Any], out_dir: pathlib.Path) -> pathlib.Path:
  """Writes OUT/scale.html from scale.json's document; returns its path."""
  sections, index = [], 0
  for bench in doc["fits"]:
    figures = []
    for name in HEADLINE:
      if name in doc["fits"][bench]:
        figures.append(f"<div class='fig'>{_figure(doc, bench, name, index)}</div>")
        index += 1
    sections.append(f"<h2>{html_text(bench)}</h2><h3>Where it breaks</h3>{_breaks(doc, bench)}"
                    f"<div class='figs'>{''.join(figures)}</div><h3>Every metric</h3>{_table(doc, bench)}")  # fmt: skip
  store = doc["store"]
  page = (
      "<!doctype html><meta charset='utf-8'><title>ckptbench scale</title>"
      "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 6px;border-bottom:1px solid #ddd;"
      "font-size:12px}.figs{display:flex;flex-wrap:wrap}.fig{width:480px}</style>"
      f"<script>{plotly_js()}</script>"
      f"<h1>What grows with hosts, and where it breaks: {html_text(doc['suite'])}</h1>"
      f"<p>{doc['mode']} scaling along {html_text(doc['axis'])}, {doc['devices_per_host']} devices per emulated"
      f" host, measured at {', '.join(map(str, doc['hosts']))} hosts (link {html_text(doc['link'])}); predicted at"
      f" {', '.join(f'{t:,}' for t in doc['targets'])}. Store profile <b>{html_text(store['name'])}</b>:"
      f" latency {store['latency_s'] * 1e3:g} ms, writes {_number(store['write_requests_per_s'])}/s,"
      f" reads {_number(store['read_requests_per_s'])}/s ({html_text(store['source'])}).</p>"
      + "".join(f"<p><b>Note:</b> {html_text(n)}</p>" for n in doc["notes"])
      + "".join(sections)
      + "<p>Model and its limits: docs/scale.md.</p>"
  )  # fmt: skip
  path = out_dir / SCALE_PAGE
  path.write_text(page, encoding="utf-8")
  return path
