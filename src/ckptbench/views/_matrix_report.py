"""A matrix's own page, OUT/report.html: every environment against the first, side by side.

Each environment's directory has its full report (OUT/<label>/report.html);
this page answers the matrix's question on one screen: for each benchmark's
headline metrics, the first environment's median and, per other environment,
its median, the ratio with its interval and the verdict (from the comparisons
already in OUT/<label>/comparison.json).
"""

from __future__ import annotations

import pathlib
from typing import Any, Mapping, Protocol, Sequence

from ckptbench.analysis import verdict_clauses
from ckptbench.api import judged_text
from ckptbench.api import VerdictRecord
from ckptbench.results import Comparison
from ckptbench.views._report_html import CSS, num
from ckptbench.stats import Verdict
from ckptbench._escape import html_text

MATRIX_REPORT = "report.html"


class Environment(Protocol):
  """What the page shows of one environment (`ckptbench.envs.EnvOutcome` fits)."""

  label: str
  spec: str
  status: str
  error: str | None
  versions: dict[str, Any] | None
  failed_runs: int


def write_matrix_report(
    out_dir: str | pathlib.Path,
    suite: str,
    environments: Sequence[Environment],
    reference: str | None,
    comparisons: Mapping[str, Comparison],
) -> pathlib.Path:
  """Writes OUT/report.html for a matrix; returns its path."""
  path = pathlib.Path(out_dir) / MATRIX_REPORT
  path.write_text(render_matrix_report(suite, environments, reference, comparisons), encoding="utf-8")
  return path


def render_matrix_report(
    suite: str,
    environments: Sequence[Environment],
    reference: str | None,
    comparisons: Mapping[str, Comparison],
) -> str:
  """The page as HTML text."""
  title = html_text(f"ckptbench matrix: {suite}")
  body = [_environments(environments, reference), _headlines(reference, comparisons)]
  return (
      "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
      f"<meta name=viewport content='width=device-width'><title>{title}</title>"
      f"<style>{CSS}</style></head><body>\n<h1>{title}</h1>\n" + "\n".join(body) + "\n</body></html>\n"
  )


def _environments(environments: Sequence[Environment], reference: str | None) -> str:
  rows = []
  for env in environments:
    ok = env.status == "ok"
    name = f"<a href='{html_text(env.label)}/report.html'>{html_text(env.label)}</a>" if ok else html_text(env.label)
    role = " (reference)" if env.label == reference else ""
    versions = env.versions or {}
    status = html_text(env.status) + (f": {html_text(env.error)}" if env.error else "")
    if ok and env.failed_runs:
      status += f", {env.failed_runs} failed runs"
    rows.append(
        f"<tr><td>{name}{role}</td><td><code>{html_text(env.spec)}</code></td>"
        f"<td>{html_text(versions.get('orbax-checkpoint', ''))}</td><td>{html_text(versions.get('jax', ''))}</td>"
        f"<td>{html_text(versions.get('tensorstore', ''))}</td><td class={'ok' if ok else 'fail'}>{status}</td></tr>"
    )
  head = "".join(f"<th>{h}</th>" for h in ("environment", "spec", "orbax-checkpoint", "jax", "tensorstore", "status"))
  return f"<h2>environments</h2><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _headlines(reference: str | None, comparisons: Mapping[str, Comparison]) -> str:
  if reference is None:
    return "<p class=fail>no environment finished: nothing to compare</p>"
  if not comparisons:
    return "<p class=note>one environment finished: nothing to compare it with</p>"
  labels = list(comparisons)
  cells: dict[tuple[str, str], dict[str, VerdictRecord]] = {}
  for label, comparison in comparisons.items():
    for row in comparison.rows:
      if row.judged:
        cells.setdefault((row.name or row.benchmark, row.metric), {})[label] = row
  regressed = sorted({label for label in labels for row in comparisons[label].headline_regressions})
  unsure = sorted(label for label in labels if comparisons[label].headline_inconclusive)
  if regressed:
    note = f"<p class=fail>headline metric worse in {html_text(', '.join(regressed))}</p>"
  elif unsure:  # "no regression" only where every headline metric is equivalent or better
    note = f"<p class=unsure>inconclusive in {html_text(', '.join(unsure))}: more repeats would decide</p>"
  else:
    note = "<p class=ok>no headline regression: every headline metric equivalent or better</p>"
  head = ["benchmark", "metric", "unit", f"{reference} (reference)"] + [f"{label}: median, ratio [interval]" for label in labels]
  rows = []
  for (benchmark, metric), by_label in sorted(cells.items()):
    first = next(iter(by_label.values()))
    row = [f"<td>{html_text(benchmark)}</td><td>{html_text(metric)}</td><td>{html_text(first.unit or '')}</td>",
           f"<td class=num>{num(first.reference_median)}</td>"]  # fmt: skip
    row += [_cell(by_label.get(label)) for label in labels]
    rows.append("<tr>" + "".join(row) + "</tr>")
  header = "".join(f"<th>{html_text(h)}</th>" for h in head)
  first = next(iter(comparisons.values()))
  clauses = "; ".join(verdict_clauses(first.threshold))
  legend = (
      "<p class=note>ratio: Hodges-Lehmann estimate of the environment's over the reference's, with its"
      f" interval; {html_text(clauses)}. Headline: {html_text(judged_text())}. Rule: {html_text(first.rule)}."
      " Every metric, not only the headlines: each environment's report.html.</p>"
  )
  return (
      "<h2>headline metrics against the reference</h2>" + note
      + f"<table id=matrix><thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>" + legend
  )  # fmt: skip


def _cell(row: VerdictRecord | None) -> str:
  if row is None:
    return "<td class=note>not measured</td>"
  ratio = "-" if row.ratio is None else f"{row.ratio:.2f}x"
  if row.low is not None and row.high is not None:
    ratio += f" [{row.low:.2f}, {row.high:.2f}]"
  css = row.verdict.value if row.verdict in (Verdict.WORSE, Verdict.BETTER, Verdict.INCONCLUSIVE) else "num"
  return f"<td class='{css}'>{num(row.current_median)}<br>{html_text(ratio)} {html_text(row.verdict.value)}</td>"
