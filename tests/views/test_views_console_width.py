"""Wide verdicts fit the terminal: split into tables that repeat the reference; the legend a clause per line."""

from __future__ import annotations

from rich.console import Console

import dataclasses

from ckptbench.api import MetricEntry, RunRecord
from ckptbench.analysis import build_verdict, sweep_verdicts
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


def _printed(width: int, variants: int, verbose: bool = False, memory_pass: bool = False) -> list[str]:
  records = [_record(v, r) for v in range(variants) for r in range(3)]
  if memory_pass:  # host memory from a memory pass: steady readings settle at three (stats/_settled.py)
    records += [dataclasses.replace(_record(v, r), memory_pass=True, metrics={
        "save_7_memory/host_rss_peak_diff_mib": MetricEntry(100.0 + 20 * v + r / 10, "MiB")})
        for v in range(variants) for r in range(3)]  # fmt: skip
  verdict = build_verdict(records, None, sweep_verdicts(records, None, paired=True, threshold=0.1))
  console = Console(record=True, width=width, color_system=None)
  print_verdict(verdict, "verdict: wide", console, verbose)
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


def test_the_legend_is_what_the_table_uses_and_verbose_a_clause_per_line():
  lines = _printed(200, 3)
  legend = lines[lines.index(next(line for line in lines if line.startswith("[low, high]"))):]
  assert len(legend) <= 6, legend
  assert legend[1].startswith("worse / better: ") and "; equivalent: the interval lies within +-10%" in legend[1]
  assert sum(line.startswith("rule: ") for line in legend) == 1  # one rule: no row marks
  assert legend[-1].startswith("-v: ")
  assert not any(line.startswith(("judged: ", "equivalent: ", "[low-high]")) for line in legend)
  verbose = _printed(200, 3, verbose=True)
  assert any(line.startswith("equivalent: ") for line in verbose)
  assert any(line.startswith("judged: ") for line in verbose)
  assert any(line.startswith("! a repeat lies far from the others (modified z-score; about 1 in 100") for line in verbose)


_REMEDY = ("likely cause: other processes kept 1.7 of 2 CPUs busy; load average 11.3 on 2 CPUs. Remedy: stop other"
           " work on the machine (or pin with taskset), and let num_repeats: auto pair more rounds (--time_budget).")


def test_a_warning_breaks_between_sentences_and_a_long_one_between_words_indented():
  console = Console(record=True, width=80, color_system=None)
  print_sentences(console, "[yellow]warning:[/yellow] ", _REMEDY)
  lines = console.export_text().splitlines()
  assert lines == [
      "warning: likely cause: other processes kept 1.7 of 2 CPUs busy; load average",
      "         11.3 on 2 CPUs.",
      "         Remedy: stop other work on the machine (or pin with taskset), and let",
      "         num_repeats: auto pair more rounds (--time_budget).",
  ]
  assert max(map(len, lines)) <= 80
  assert " ".join(line.strip() for line in lines) == "warning: " + _REMEDY  # nothing lost


def test_a_warning_that_fits_is_one_line_per_sentence():
  console = Console(record=True, width=200, color_system=None)
  print_sentences(console, "warning: ", _REMEDY)
  assert [line.split(":")[0].strip() for line in console.export_text().splitlines()] == ["warning", "Remedy"]


def test_rows_decided_by_different_rules_are_marked_and_each_rule_is_stated_once():
  lines = _printed(200, 2, memory_pass=True)
  assert any(line.startswith("│ save time (1) ") for line in lines)
  assert any(line.startswith("│ save peak host memory added (2) ") for line in lines)
  rules = [line for line in lines if line.startswith(("(1) rule: ", "(2) rule: "))]
  assert [r[:10] for r in rules] == ["(1) rule: ", "(2) rule: "]
  assert rules[0].startswith("(1) rule: Hodges-Lehmann 95.00% interval of the per-round (paired) ratio") and ";" not in rules[0]
  assert rules[1].startswith("(2) rule: memory pass: readings until the figure (their mean) is within")
  legend = lines[lines.index(next(line for line in lines if line.startswith("[low, high]"))):]
  assert len(legend) <= 6, legend
  whole = _printed(200, 2, verbose=True, memory_pass=True)
  assert sum(line.startswith("(2) rule: memory pass") for line in whole) == 1
  assert any("Welch's t on the difference of the means: worse/better: its 95% interval" in line for line in whole)
