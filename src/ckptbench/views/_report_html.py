"""HTML pieces the report's sections share: escaping, numbers, tables, figure ids."""

from __future__ import annotations

from typing import Any, Iterable

from ckptbench.api import as_number
from ckptbench._escape import html_text


def num(value: Any) -> str:
  number = as_number(value)
  if number is None:
    return "" if value is None else html_text(value)
  return f"{number:.4g}"


def table(header: Iterable[str], rows: Iterable[Iterable[Any]], numeric_from: int = 1, row_class=None) -> str:
  head = "".join(f"<th>{html_text(h)}</th>" for h in header)
  lines = []
  for i, row in enumerate(rows):
    cells = "".join(
        f"<td class=num>{num(c)}</td>" if j >= numeric_from and as_number(c) is not None
        else f"<td>{html_text(c) if c is not None else ''}</td>"
        for j, c in enumerate(row)
    )
    cls = f" class='{html_text(row_class(i))}'" if row_class else ""
    lines.append(f"<tr{cls}>{cells}</tr>")
  return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"


class FigureIds:
  """Stable ids for the figures' divs (fig1, fig2, ...): the same results give the same page."""

  def __init__(self):
    self.count = 0

  def next(self) -> str:
    self.count += 1
    return f"fig{self.count}"


# The style of every report page (a run's report.html, a matrix's).
CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1400px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
h3{margin-bottom:.3em}table{border-collapse:collapse;margin:.5em 0;font-size:.88em}
td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em;max-height:30em}
.figure{margin:.6em 0}#verdict td{white-space:nowrap}.better{color:#1b7f3a}.worse{color:#b00020;font-weight:bold}
.unsure{color:#a86b00}
.fail{color:#b00020}.ok{color:#1b7f3a}.note{color:#666}
tr.worse td,td.worse{background:#fde8e8}tr.better td,td.better{background:#e8f7ec}tr.inconclusive td,td.inconclusive{background:#fff4d6}
"""
