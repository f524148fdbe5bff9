"""Wide verdicts fit the terminal: split into tables that repeat the reference; the legend a clause per line."""

from __future__ import annotations

from rich.console import Console

from ckptbench.api import MetricEntry, RunRecord
from ckptbench.analysis import build_verdict
from ckptbench.views._console import print_verdict
from ckptbench.views._terminal import print_sentences


def _record(variant: int, repeat: int) -> RunRecord:
  save_s = 0.1 * (1 + variant / 10) * (1 + repeat / 100)
  return RunRecord(
      suite="wide", benchmark=f"SaveRestore chunk_byte_size_of_the_array={variant}", key=f"k{variant:02d}",
      generator="g.G", options={"chunk_byte_size_of_the_array": variant},
      varying={"chunk_byte_size_of_the_array": variant}, mesh=None, checkpoint_config=None, repeat=repeat,
      warmup=False, host=0, num_hosts=1, path="p", started_at="t", duration_s=1.0,
      metrics={"save_0_basics/time_s": MetricEntry(save_s, "s"),
               "load_0_basics/time_s": MetricEntry(save_s / 2, "s")},
  )  # fmt: skip


def _printed(width: int, variants: int) -> list[str]:
  verdict = build_verdict([_record(v, r) for v in range(variants) for r in range(3)])
  console = Console(record=True, width=width, color_system=None)
  print_verdict(verdict, "verdict: wide", console)
  return [line.rstrip() for line in console.export_text().splitlines()]


def test_a_verdict_wider_than_the_terminal_is_split_with_the_reference_in_each_part():
  lines = _printed(100, 12)
  assert max(map(len, lines)) <= 100
  titles = [line for line in lines if line.startswith("verdict: wide")]
  assert len(titles) > 1 and titles[0].startswith(f"verdict: wide (1/{len(titles)})")
  header_rows = [line for line in lines if "chunk_byte_size_of_the_array=0" in line]
  assert len(header_rows) >= len(titles)  # the reference column in every part
  for variant in range(1, 12):  # every variant shown once, unfolded
    assert sum(f"chunk_byte_size_of_the_array={variant} " in line for line in lines) == 1, variant


def test_a_verdict_that_fits_stays_one_table():
  lines = _printed(200, 3)
  assert [line for line in lines if line.startswith("verdict: wide")] == ["verdict: wide  (reference: chunk_byte_size_of_the_array=0)"]


def test_the_legend_is_a_clause_per_line_never_cut():
  lines = _printed(200, 3)
  assert any(line.startswith("worse / better: ") for line in lines)
  assert any(line.startswith("equivalent: ") for line in lines)
  assert any(line.startswith("! a repeat lies far from the others (modified z-score; about 1 in 100") for line in lines)


_REMEDY = ("likely cause: other processes kept 1.7 of 2 CPUs busy; load average 11.3 on 2 CPUs. Remedy: stop other"
           " work on the machine (or pin with taskset), and let num_repeats: auto pair more rounds (--time_budget_s).")


def test_a_warning_breaks_between_sentences_and_a_long_one_between_words_indented():
  console = Console(record=True, width=80, color_system=None)
  print_sentences(console, "[yellow]warning:[/yellow] ", _REMEDY)
  lines = console.export_text().splitlines()
  assert lines == [
      "warning: likely cause: other processes kept 1.7 of 2 CPUs busy; load average",
      "         11.3 on 2 CPUs.",
      "         Remedy: stop other work on the machine (or pin with taskset), and let",
      "         num_repeats: auto pair more rounds (--time_budget_s).",
  ]
  assert max(map(len, lines)) <= 80
  assert " ".join(line.strip() for line in lines) == "warning: " + _REMEDY  # nothing lost


def test_a_warning_that_fits_is_one_line_per_sentence():
  console = Console(record=True, width=200, color_system=None)
  print_sentences(console, "warning: ", _REMEDY)
  assert [line.split(":")[0].strip() for line in console.export_text().splitlines()] == ["warning", "Remedy"]
