"""README.md and docs/ are for users, not a lab notebook.

No dates of runs, load averages, ckptbench's own issue numbers or words about other work on the
machine: a version, not a date, says when a format changed. What ckptbench measured about itself
lives on one page, docs/performance.md, where the date and the load of each figure belong.
Upstream references stay (orbax#430, "Orbax issue 179", "MaxText PR 3488"), and so do the years
of published sources ("Daly (2006)", "(MLCommons, 2025)").
"""

from __future__ import annotations

import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
PERFORMANCE = REPO / "docs" / "performance.md"
PAGES = [REPO / "README.md", *sorted(p for p in (REPO / "docs").glob("*.md") if p != PERFORMANCE)]

# What a lab notebook line says, each with what it is.
NOTEBOOK = {
    "a date": re.compile(
        r"\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b"
        r"|\b(January|February|March|April|May|June|July|August|September|October|November|December) 20\d\d\b"
        r"|\b20\d\d-\d\d-\d\d\b"
    ),
    # "load 11-13" and "(load 2)", not "load 0.98x" (a load's ratio) or "load 183 MiB".
    "a load average": re.compile(
        r"\bload average|\bat load \d|\bload [\d.]+(-[\d.]+)?(?![\d.x])(?!\s*(MiB|GiB|ms|s)\b)(?=\s*(on \d|[),;:]))", re.I
    ),
    "ckptbench's own issue number": re.compile(r"\bissues? \d+", re.I),
    "other work on the machine": re.compile(
        r"\bother (engineers|sessions|agents|helpers|jobs)\b|\bother work\b|\bshared cores\b"
        r"|\bshared with\b|\bquiet machine\b|\bunder load\b|\bbusy loops\b",
        re.I,
    ),
}
# Upstream sources named with their project: Orbax issue 179, orbax#430, MaxText PR 3488.
_UPSTREAM = re.compile(r"\b(Orbax|orbax|JAX|jax|TensorStore|tensorstore|MaxText|PyTorch|torch)( issue| PR|#) ?\d+")


# The stability warning's own advice (analysis/_stability.py), quoted where a page shows the warning.
_REMEDY = re.compile(r"stop other work on the machine")


def notebook_lines(text: str) -> list[tuple[int, str, str]]:
  """(line number, what, line) for every line of a page that reads as a lab notebook, fenced blocks
  included: output quoted on a page shows its shape, not the day and the load it was taken at."""
  found = []
  for number, line in enumerate(text.splitlines(), 1):
    bare = _REMEDY.sub("", _UPSTREAM.sub("", line))
    found += [(number, what, line.strip()) for what, pattern in NOTEBOOK.items() if pattern.search(bare)]
  return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_a_page_for_users_reads_as_no_lab_notebook(page):
  found = notebook_lines(page.read_text())
  assert not found, (
      f"{page.relative_to(REPO)} reads as a lab notebook (figures ckptbench measured about itself, with "
      "their dates and load, go to docs/performance.md):\n"
      + "\n".join(f"  line {n}: {what}: {line[:160]}" for n, what, line in found)
  )


def test_the_check_finds_notebook_lines_and_spares_upstream_references():
  assert [what for _, what, _ in notebook_lines("On 26 Nov 2026 (2 cores, load average 3-5)")] == [
      "a date",
      "a load average",
  ]
  assert notebook_lines("The 128 MiB save of issue 30 reads 0.95x")[0][1] == "ckptbench's own issue number"
  assert notebook_lines("shared with seven other engineers' tests")[0][1] == "other work on the machine"
  for notebook in ["measured at load 12-15", "November 2026, after the rule", "three repeats, load 4-6 on 2 cores",
                   "(load 2)", "a rerun (two repeats, load 5-11) gave"]:  # fmt: skip
    assert notebook_lines(notebook), notebook
  assert notebook_lines("```\nwarning: load average 2.6 on 2 CPUs\n```")
  for upstream in ["orbax#430 says why", "Orbax issue 179 (2022)", "MaxText PR 3488", "Daly's (2006) formula",
                   "load time (1)", "the load of a checkpoint", "a 2-core machine",
                   "save 0.75x, load 0.98x [0.93-1.04]", "the load 183 -> 187 MiB"]:  # fmt: skip
    assert not notebook_lines(upstream), upstream


def test_performance_md_exists_and_says_how_to_reproduce_each_figure():
  text = PERFORMANCE.read_text()
  assert text.startswith("# ")
  assert "measurements/" in text and "```" in text


@pytest.mark.parametrize("page", [*PAGES, PERFORMANCE], ids=lambda p: str(p.relative_to(REPO)))
def test_no_table_cell_is_a_page_of_its_own(page):
  """A table cell holds a phrase or a figure; what takes a paragraph is written as one."""
  long = [(n, len(cell)) for n, line in enumerate(page.read_text().splitlines(), 1) if line.startswith("|")
          for cell in line.split("|") if len(cell) > 1000]  # fmt: skip
  assert not long, f"{page.relative_to(REPO)}: table cells over 1,000 characters at lines {long}"
