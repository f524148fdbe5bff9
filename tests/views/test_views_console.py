"""The end-of-run console tables."""

from __future__ import annotations

from rich.console import Console

from ckptbench.api._records import BenchmarkSummary, RunFailure, SuiteSummary
from ckptbench.results import read_outputs
from ckptbench.views import print_suite_tables
from views_sample import sample_out  # noqa: F401  (fixture)


def _printed(summary, **kwargs) -> str:
  console = Console(record=True, width=120, color_system=None)
  print_suite_tables(summary, console, **kwargs)
  return console.export_text()


def test_tables_per_benchmark_and_suite_summary(sample_out):
  summary = read_outputs(sample_out).summary
  text = _printed(summary)

  assert "SaveRestore use_ocdbt=True  (3 runs)" in text
  assert "SaveRestore use_ocdbt=False  (1/3 failed)" in text
  assert "operation" in text and "mean ± std" in text
  save_time = next(line for line in text.splitlines() if "save" in line and "time_s" in line)
  assert "0.42 ± 0.016" in save_time and "0.4 " in save_time and "0.44" in save_time and " s " in save_time
  assert "repeat 1, host 0: ValueError: restored data differs <b>" in text
  suite = text.splitlines()[-2]
  assert [c.strip() for c in suite.split("│")[1:5]] == ["2", "6", "5", "1"]
  # Compact: stage breakdowns and inventory stay out unless asked for.
  assert "serialize_s" not in text
  assert "serialize_s" in _printed(summary, all_metrics=True)


def test_markup_in_names_and_errors_is_printed_literally():
  bench = BenchmarkSummary("B [red]", "k", "m.G", {}, {}, None, None, runs=1, failed=1, metrics={},
                           errors=[RunFailure(repeat=0, host=0, type="KeyError", message="[bold]k")])
  text = _printed(SuiteSummary(suite="s[x]", benchmarks=[bench]))
  assert "B [red]" in text and "KeyError: [bold]k" in text and "suite s[x]" in text
  assert "mean ± std" not in text  # nothing measured: the error line, no empty table
