"""README.md's table of built-ins, generated from the catalogue.

`python -m ckptbench.config._catalogue_table --readme` rewrites it in place; without
`--readme` it prints the table.
"""

from __future__ import annotations

import pathlib
import sys

from ckptbench.config._catalogue import CatalogueError, catalogue

README_START = "<!-- builtins-table:start (generated: python -m ckptbench.config._catalogue_table --readme) -->"
README_END = "<!-- builtins-table:end -->"


def readme_table() -> list[str]:
  """The README's table of built-ins, one row per class, by name."""
  rows = ["| `generator:` | measures |", "|---|---|"]
  for builtin in sorted(catalogue().values(), key=lambda b: b.name):
    name = f"`{builtin.name}`"
    if builtin.also_named:
      name += " (also " + ", ".join(f"`{n}`" for n in builtin.also_named) + ")"
    needs = "".join(f" (`pip install '.[{extra}]'`)" for extra in builtin.extras)
    rows.append(f"| {name} | {builtin.measures}{needs} |")
  return rows


def with_readme_table(readme: str) -> str:
  """The README text with its generated table of built-ins replaced by the current one."""
  head, start, rest = readme.partition(README_START)
  _, end, tail = rest.partition(README_END)
  if not (start and end):
    raise CatalogueError(f"README.md has no {README_START} ... {README_END} section")
  return "\n".join([head + README_START, *readme_table(), README_END]) + tail


if __name__ == "__main__":
  if sys.argv[1:] == ["--readme"]:  # rewrite README.md's table in place
    readme = pathlib.Path("README.md")
    readme.write_text(with_readme_table(readme.read_text()))
  else:
    print("\n".join(readme_table()))
