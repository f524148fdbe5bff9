"""HTML pieces the report's sections share: escaping, numbers, tables, figure ids."""

from __future__ import annotations

import html
from typing import Any, Iterable

from ckptbench.api._records import metric_value


def esc(value: Any) -> str:
  return html.escape(str(value), quote=True)


def num(value: Any) -> str:
  number = metric_value(value)
  if number is None:
    return "" if value is None else esc(value)
  return f"{number:.4g}"


def table(header: Iterable[str], rows: Iterable[Iterable[Any]], numeric_from: int = 1, row_class=None) -> str:
  head = "".join(f"<th>{esc(h)}</th>" for h in header)
  lines = []
  for i, row in enumerate(rows):
    cells = "".join(
        f"<td class=num>{num(c)}</td>" if j >= numeric_from and metric_value(c) is not None
        else f"<td>{esc(c) if c is not None else ''}</td>"
        for j, c in enumerate(row)
    )
    cls = f" class='{esc(row_class(i))}'" if row_class else ""
    lines.append(f"<tr{cls}>{cells}</tr>")
  return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"


class FigureIds:
  """Stable ids for the figures' divs (fig1, fig2, ...): the same results give the same page."""

  def __init__(self):
    self.count = 0

  def next(self) -> str:
    self.count += 1
    return f"fig{self.count}"
