"""Names that hold markup or escape sequences: one escaping function per target (`ckptbench._escape`),
checked on generated text, and the pages rendered in headless Chromium with generated hostile names:
every section present, every figure drawn, no script of theirs run."""

from __future__ import annotations

import html
import json
import pathlib
import random
import re
import shutil

import numpy as np
import pytest
from conftest import CHROMEDRIVER, headless_chromium
from hypothesis import given, settings
from hypothesis import strategies as st
from views_sample import sample_out  # noqa: F401  (fixture)

from ckptbench._escape import html_text, markdown_code, markdown_text, script_json, terminal_text
from ckptbench.cli import main
from ckptbench.history import Environment, HistoryEntry, HistoryStore, Point, analyse, gate, summary_markdown

# Pieces of markup, script and escape sequences that have broken pages and terminals elsewhere.
FRAGMENTS = ("<!--", "<script>", "</script>", "<!--<script>", "-->", "<script>window.pwned=1</script>",
             "<img src=x onerror=\"window.pwned=2\">", "<svg onload=window.pwned=3>", "</style>", "<![CDATA[", "]]>",
             "\u2028", "\u2029", "'", '"', "`${window.pwned=4}`", "|", "&amp;", "**", "[x](javascript:1)",
             "\x1b[31m", "\x1b]0;title\x07", "\x1b]8;;http://x\x1b\\", "\x9b2J", "\n", "\\")  # fmt: skip
HOSTILE = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=6).map("".join)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_FAST = settings(max_examples=200, deadline=None)
needs_chromium = pytest.mark.skipif(
    not (shutil.which("chromium") and pathlib.Path(CHROMEDRIVER).exists()),
    reason="needs Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)",
)


def hostile_names(seed: int, count: int) -> list[str]:
  """`count` distinct names, each the page-swallowing `<!--<script>` and a few fragments drawn from `seed`."""
  rng = random.Random(seed)
  return [f"<!--<script>{''.join(rng.choices(FRAGMENTS, k=3))} n{i} {''.join(rng.choices(FRAGMENTS, k=2))}"
          for i in range(count)]  # fmt: skip


# -- the four functions, on generated text
@_FAST
@given(value=HOSTILE)
def test_script_json_reads_back_the_same_and_holds_nothing_a_script_element_ends_at(value):
  text = script_json({"name": value, "list": [value]})
  assert json.loads(text) == {"name": value, "list": [value]}
  assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}


@_FAST
@given(value=HOSTILE)
def test_html_text_reads_back_the_same_and_opens_no_element_or_attribute(value):
  text = html_text(value)
  assert html.unescape(text) == value and not set(text) & set("<>\"'")


@_FAST
@given(value=HOSTILE)
def test_markdown_text_is_one_line_without_live_html_or_an_unescaped_table_bar(value):
  text = markdown_text(value)
  assert "\n" not in text and "<" not in text
  assert not re.search(r"(?<!\\)(?:\\\\)*[|*`\[\]]", text)  # every special is escaped by an odd backslash run
  # so is every `_` that could start or end emphasis: all but those between two letters or digits
  assert not re.search(r"(?<!\\)(?:\\\\)*(?:(?<![^\W_])_|_(?![^\W_]))", text)


@_FAST
@given(value=HOSTILE)
def test_markdown_code_is_one_code_span_without_an_unescaped_table_bar(value):
  text = markdown_code(value)
  fence = re.match("`+", text).group()
  inside = text[len(fence) : -len(fence)]
  assert "\n" not in text and text.endswith(fence) and fence not in inside  # nothing inside ends the span
  assert not re.search(r"(?<!\\)\|", inside)


@_FAST
@given(value=HOSTILE)
def test_terminal_text_holds_no_escape_sequence_or_control_character(value):
  assert not _CONTROL.search(terminal_text(value))


# -- where they are used: the history's Markdown summary and console text
def _entries(labels: list[str], benchmarks: list[str]) -> list[HistoryEntry]:
  rng = np.random.default_rng(0)
  environment = Environment({"jax": "0.10.2"}, "cpu", "cpu", 2, 1, "vm", "abc")
  entries = []
  for i, label in enumerate(labels, start=1):
    points = []
    for j, name in enumerate(benchmarks):
      level = 0.1 * (1 + j) * (1.5 if i > len(labels) // 2 else 1.0)
      samples = tuple(float(v) for v in level * np.exp(rng.normal(0, 0.02, 5)))
      points.append(Point(name, f"k{j}", "save_0_basics/time_s", "s", float(np.median(samples)), min(samples),
                          max(samples), samples))  # fmt: skip
    entries.append(HistoryEntry(f"2026T{i:04d}-x", label, f"2026-01-01T00:{i:02d}:00+00:00", "suite <b>|",
                                environment, tuple(points)))  # fmt: skip
  return entries


@settings(max_examples=15, deadline=None)
@given(names=st.lists(HOSTILE, min_size=1, max_size=3, unique=True), label=HOSTILE)
def test_summary_markdown_tables_keep_their_columns_whatever_the_names(names, label):
  entries = _entries([f"r{i}" for i in range(1, 11)] + [label], names)
  series = analyse(entries)
  text = summary_markdown(series, entries, gate(series), ["skipped <!--<script> | x"])
  rows = [line for line in text.splitlines() if line.startswith("|")]
  assert all(len(re.findall(r"(?<!\\)\|", row)) in (9, 8) for row in rows), rows  # 8 or 7 columns
  assert "<" not in text


def test_history_labels_reach_the_terminal_without_escape_sequences(tmp_path, capsys):
  hist = tmp_path / "hist"
  store = HistoryStore(hist)
  names = hostile_names(1, 2)
  for entry in _entries([f"r{i}\x1b]0;owned\x07\x1b[2J" for i in range(1, 13)], names):
    store.append(entry)
  assert main(["history", str(hist), "--fail_on_change"]) == 3
  captured = capsys.readouterr()
  assert "FAIL: worse" in captured.out
  assert not _CONTROL.search(captured.out.replace("\n", "")), captured.out


def test_console_tables_print_hostile_names_without_escape_sequences(sample_out):  # noqa: F811
  from rich.console import Console

  from ckptbench.results import read_outputs
  from ckptbench.views import print_suite_tables

  _hostile_out(sample_out, hostile_names(2, 2))
  outputs = read_outputs(sample_out)
  console = Console(record=True, width=200, force_terminal=True)  # colours on: rich's own sequences come out raw
  print_suite_tables(outputs.summary, console, records=outputs.results, detail=True)
  text = console.export_text(styles=False)
  assert "n0" in text and "n1" in text and not _CONTROL.search(text.replace("\n", "")), text


# -- the pages, in a real browser
def _hostile_out(out: pathlib.Path, names: list[str]) -> None:
  """Renames the sample's two benchmarks, its suite, an option and an error message to hostile text."""
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  old = sorted({r["benchmark"] for r in records})
  rename = dict(zip(old, names))
  for r in records:
    r["benchmark"], r["suite"] = rename[r["benchmark"]], names[0]
    r["options"] = {**r["options"], "label": names[1]}
    if r["error"]:
      r["error"]["message"] = names[0]
  (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
  summary = json.loads((out / "summary.json").read_text())
  summary["suite"] = names[0]
  for b in summary["benchmarks"]:
    b["name"] = rename[b["name"]]
    b["options"] = {**b["options"], "label": names[1]}
  (out / "summary.json").write_text(json.dumps(summary))
  comparison = json.loads((out / "comparison.json").read_text())
  for row in comparison["rows"]:
    row["benchmark"] = rename[row["benchmark"]]
  (out / "comparison.json").write_text(json.dumps(comparison))


def _page_state(driver, page: pathlib.Path, figures: int) -> dict:
  from selenium.webdriver.support.wait import WebDriverWait

  driver.get(page.as_uri())
  for section in driver.find_elements("css selector", ".plotly-graph-div"):  # lazy figures draw when near
    driver.execute_script("arguments[0].scrollIntoView()", section)
  WebDriverWait(driver, 30).until(lambda d: len(d.find_elements("css selector", ".js-plotly-plot .main-svg")) >= figures)
  return {
      "headings": [h.text for h in driver.find_elements("css selector", "h1, h2")],
      "figures": len(driver.find_elements("css selector", ".js-plotly-plot")),
      "ran": driver.execute_script("return window.pwned === undefined ? null : window.pwned"),
      "errors": [e for e in driver.get_log("browser") if e["level"] == "SEVERE"],
  }


@needs_chromium
def test_the_report_shows_every_section_and_figure_whatever_the_names(sample_out, tmp_path):  # noqa: F811
  from ckptbench.views import write_report

  plain = write_report(sample_out, tmp_path / "plain.html")
  _hostile_out(sample_out, hostile_names(3, 2))
  hostile = write_report(sample_out, tmp_path / "hostile.html")
  with headless_chromium() as driver:
    expected = _page_state(driver, plain, 6)
    state = _page_state(driver, hostile, 6)
  assert {h for h in expected["headings"] if not h.startswith("ckptbench")} >= {"failures", "manifest"}
  assert state["headings"][1:] == expected["headings"][1:] and state["figures"] == expected["figures"] == 6
  assert state["ran"] is None and state["errors"] == []


@needs_chromium
def test_the_history_page_draws_every_chart_whatever_the_labels_and_names(tmp_path):
  from ckptbench.views import write_history_page

  names = hostile_names(4, 8)
  entries = _entries(hostile_names(5, 12), names)
  series = analyse(entries)
  unjudged = [f"skipped an unreadable entry: {hostile_names(6, 1)[0]}"]
  page = write_history_page(series, entries, gate(series), tmp_path / "history.html", unjudged)
  with headless_chromium() as driver:
    state = _page_state(driver, page, len(series))
    sections = len(driver.find_elements("css selector", "section.series"))
    gate_items = len(driver.find_elements("css selector", "ul li.fail"))
  assert len(series) == sections == state["figures"] == 8
  assert state["headings"][0].startswith("History: 12 runs, 8 series") and "Changes" in state["headings"]
  assert gate_items >= 8 + 1  # every worse change, and the unjudged line
  assert state["ran"] is None and state["errors"] == []
