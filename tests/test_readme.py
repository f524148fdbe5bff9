"""README.md stays the first hour: at most 250 lines, its quick-start YAML is
examples/quickstart.yaml's, and the console output it pastes has the shape a real quick start
prints now.

The real quick start here is shrunk as tests/test_docs.py shrinks it (a 512x512 array, a 10 s
budget instead of 90 s, no views): the shape of what it prints (the columns, the metrics, the
words, the grammar of each cell) does not depend on the size, only the numbers and verdicts do.
When this fails because the console changed, run the quick start
(`ckptbench run examples/quickstart.yaml -o out/qs`) and paste its verdict table into README.md.
"""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml

from conftest import run_cli

REPO = pathlib.Path(__file__).resolve().parent.parent
README = REPO / "README.md"
MAX_LINES = 250
_PASTED = re.compile(r"<!-- quickstart-output:start[^>]*-->\n```text\n(.*?)```\n<!-- quickstart-output:end -->", re.S)
_YAML = re.compile(r"```yaml\n(.*?)```", re.S)
# A value cell: a median and the interval of the median, `!` after an outlying repeat.
_VALUE = re.compile(r"-|[-+.\deE]+ \[[-+.\deE]+, [-+.\deE]+\]( !)?")
# A comparison cell: `reference`, or a ratio with its interval (`-` when there is none) and a verdict.
_COMPARED = re.compile(r"reference|(-|[.\d]+x \[[.\d]+-[.\d]+\]) (better|worse|equivalent|inconclusive)( \(~\d+ repeats would decide\))?")
_FOOTNOTE = re.compile(r"\s*\(\d+\)$")


def _pasted() -> list[str]:
  found = _PASTED.search(README.read_text())
  assert found, "README.md has no <!-- quickstart-output:start --> ```text ... ``` <!-- quickstart-output:end --> block"
  return found.group(1).splitlines()


def _verdict_and_suite(lines: list[str]) -> tuple[list[str], list[str]]:
  """The verdict table with its legend (from `verdict:` to the `-v:` line), and the suite table."""
  lines = [line.rstrip() for line in lines]
  start = next(i for i, line in enumerate(lines) if line.startswith("verdict: "))
  legend_end = next(i for i, line in enumerate(lines) if line.startswith("-v: "))
  suite = next(i for i, line in enumerate(lines) if line.startswith("suite "))
  suite_end = next(i for i in range(suite, len(lines)) if lines[i].startswith("└"))
  return lines[start : legend_end + 1], lines[suite : suite_end + 1]


def _cells(line: str) -> list[str]:
  return [cell.strip() for cell in re.split(r"[│┃]", line)[1:-1]]


# A verdict and what an undecided one adds: "inconclusive (~52 repeats would decide)".
_OUTCOME_WORDS = {"worse", "better", "equivalent", "inconclusive", "repeats", "would", "decide"}


def _words(lines: list[str]) -> set[str]:
  return set(re.findall(r"[A-Za-z][A-Za-z_]*", "\n".join(lines)))


def test_the_readme_is_at_most_250_lines():
  count = len(README.read_text().splitlines())
  assert count <= MAX_LINES, f"README.md has {count} lines; at most {MAX_LINES}: move the detail to docs/"


def test_the_readme_quick_start_yaml_is_the_example():
  snippets = [yaml.safe_load(s) for s in _YAML.findall(README.read_text())]
  shipped = yaml.safe_load((REPO / "examples" / "quickstart.yaml").read_text())
  assert shipped in snippets, "README.md's quick-start YAML differs from examples/quickstart.yaml"


@pytest.mark.slow
def test_the_pasted_output_has_the_shape_the_quick_start_prints(tmp_path):
  suite = (REPO / "examples" / "quickstart.yaml").read_text()
  for old, new in [("shape: [8192, 8192]", "shape: [512, 512]"), ("\ntime_budget_s: 90\n", "\ntime_budget_s: 10\n")]:
    assert old in suite, f"examples/quickstart.yaml no longer has {old!r}: update this test"
    suite = suite.replace(old, new)
  (tmp_path / "quickstart.yaml").write_text(suite)
  done = run_cli("run", str(tmp_path / "quickstart.yaml"), "-o", str(tmp_path / "out"), "--no_views", timeout=300)
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

  readme_verdict, readme_suite = _verdict_and_suite(_pasted())
  real_verdict, real_suite = _verdict_and_suite(done.stdout.splitlines())
  tables = {"README.md": readme_verdict, "the quick start": real_verdict}
  # The first line: the suite and its reference variant.
  assert real_verdict[0].split() == readme_verdict[0].split()
  # The columns, and the metrics in their order (their footnote numbers name rules, which depend on the size).
  headers = {name: [_cells(line) for line in table if line.startswith("┃")] for name, table in tables.items()}
  assert headers["the quick start"] == headers["README.md"]
  rows = {name: [_cells(line) for line in table if line.startswith("│")] for name, table in tables.items()}
  metrics = {name: [_FOOTNOTE.sub("", r[0]) for r in found if r[0]] for name, found in rows.items()}
  assert metrics["the quick start"] == metrics["README.md"]
  # Each row pair: a metric's values, then each variant against the reference, in one grammar.
  for name, found in rows.items():
    assert len(found) % 2 == 0, name
    for values, compared in zip(found[0::2], found[1::2]):
      assert values[0] and values[1] and not compared[0] and not compared[1], (name, values, compared)
      assert all(_VALUE.fullmatch(cell) for cell in values[2:]), (name, values)
      assert all(_COMPARED.fullmatch(cell) for cell in compared[2:]), (name, compared)
  # Every word the verdict's legend and the suite table print is in the pasted block.
  # Words that name an outcome come and go with the run's noise (the grammar above checks those cells).
  missing = (_words(real_verdict) | _words(real_suite)) - (_words(readme_verdict) | _words(readme_suite)) - _OUTCOME_WORDS
  assert not missing, f"the quick start prints words README.md's pasted output lacks: {sorted(missing)}"
  assert [_cells(line) for line in real_suite if line.startswith("┃")] == [
      _cells(line) for line in readme_suite if line.startswith("┃")
  ]
