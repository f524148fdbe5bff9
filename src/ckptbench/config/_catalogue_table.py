"""docs/builtins.md's table of built-ins, generated from the catalogue.

`python -m ckptbench.config._catalogue_table --docs` rewrites it in place; without
`--docs` it prints the table.
"""

from __future__ import annotations

import pathlib
import sys

from ckptbench.config._catalogue import CatalogueError, catalogue

PAGE = "docs/builtins.md"
TABLE_START = "<!-- builtins-table:start (generated: python -m ckptbench.config._catalogue_table --docs) -->"
TABLE_END = "<!-- builtins-table:end -->"


def builtins_table() -> list[str]:
  """The table of built-ins, one row per class, by name."""
  rows = ["| `generator:` | measures |", "|---|---|"]
  for builtin in sorted(catalogue().values(), key=lambda b: b.name):
    name = f"`{builtin.name}`"
    if builtin.also_named:
      name += " (also " + ", ".join(f"`{n}`" for n in builtin.also_named) + ")"
    needs = "".join(f" (`pip install '.[{extra}]'`)" for extra in builtin.extras)
    rows.append(f"| {name} | {builtin.measures}{needs} |")
  return rows


def with_builtins_table(page: str) -> str:
  """The page's text with its generated table of built-ins replaced by the current one."""
  head, start, rest = page.partition(TABLE_START)
  _, end, tail = rest.partition(TABLE_END)
  if not (start and end):
    raise CatalogueError(f"{PAGE} has no {TABLE_START} ... {TABLE_END} section")
  return "\n".join([head + TABLE_START, *builtins_table(), TABLE_END]) + tail


if __name__ == "__main__":
  if sys.argv[1:] == ["--docs"]:  # rewrite the page's table in place
    page = pathlib.Path(PAGE)
    page.write_text(with_builtins_table(page.read_text()))
  else:
    print("\n".join(builtins_table()))
