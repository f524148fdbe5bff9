"""A matrix's page: environments, and each one's headline metrics against the reference."""

from __future__ import annotations

import dataclasses
from typing import Any

from ckptbench.api import VerdictRecord
from ckptbench.results import Comparison
from ckptbench.views import write_matrix_report
from ckptbench.stats import Verdict


@dataclasses.dataclass(frozen=True)
class Env:
  label: str
  spec: str
  status: str = "ok"
  error: str | None = None
  versions: dict[str, Any] | None = None
  failed_runs: int = 0


def _row(metric: str, baseline: float, current: float, verdict: Verdict, headline: bool = True) -> VerdictRecord:
  ratio = current / baseline
  return VerdictRecord(
      metric, "k1", {"benchmark": "save_restore <b>"}, {"baseline": "ref"}, ratio, ratio * 0.9, ratio * 1.1, 8,
      verdict, "the rule", None, 0.1, judged=headline, name="save_restore <b>", unit="s", direction="lower",
      reference_median=baseline, current_median=current, n_reference=8, n_current=8, level=0.95,
  )  # fmt: skip


def _comparison(label: str, rows: list[VerdictRecord]) -> Comparison:
  return Comparison(label, 0.1, 0.05, "the rule", tuple(rows), {}, {}, ())


def test_the_page_puts_every_environment_against_the_reference(tmp_path):
  envs = [
      Env("orbax-0.11.30", "orbax-checkpoint==0.11.30", versions={"orbax-checkpoint": "0.11.30", "jax": "0.10.1"}),
      Env("orbax-0.11.20", "orbax-checkpoint==0.11.20", status="build_failed", error="uv: no solution"),
      Env("orbax-0.12.8", "orbax-checkpoint==0.12.8", versions={"orbax-checkpoint": "0.12.8"}, failed_runs=1),
      Env("orbax-0.12.9", "orbax-checkpoint==0.12.9"),
  ]
  comparisons = {
      "orbax-0.12.8": _comparison("orbax-0.11.30", [
          _row("save_0_basics/time_s", 2.0, 3.0, Verdict.WORSE),
          _row("load_0_basics/time_s", 2.0, 1.0, Verdict.BETTER),
          _row("save_6_tensorstore/bytes_written", 10.0, 10.0, Verdict.NOT_JUDGED, headline=False),
      ]),
      "orbax-0.12.9": _comparison("orbax-0.11.30", [_row("save_0_basics/time_s", 2.0, 2.02, Verdict.EQUIVALENT)]),
  }  # fmt: skip
  page = write_matrix_report(tmp_path, "suite <x>", envs, "orbax-0.11.30", comparisons).read_text()

  assert "<title>ckptbench matrix: suite &lt;x&gt;</title>" in page
  assert "<a href='orbax-0.11.30/report.html'>orbax-0.11.30</a> (reference)" in page
  assert "build_failed: uv: no solution" in page and "<a href='orbax-0.11.20" not in page
  assert "ok, 1 failed runs" in page
  assert "headline metric worse in orbax-0.12.8" in page
  table = page.split("<table id=matrix>")[1].split("</table>")[0]
  rows = table.split("<tr>")[2:]
  assert len(rows) == 2  # save and load time; the byte counter is no headline
  load, save = rows
  assert "load_0_basics/time_s" in load and "class='better'" in load and "0.50x [0.45, 0.55] better" in load
  assert "not measured" in load  # 0.12.9 has no load row
  assert "class='worse'" in save and "1.50x [1.35, 1.65] worse" in save and "1.01x" in save
  assert "save_restore &lt;b&gt;" in save


def test_a_matrix_with_one_finished_environment_says_there_is_nothing_to_compare(tmp_path):
  page = write_matrix_report(tmp_path, "s", [Env("a", "orbax-checkpoint==0.12.8")], "a", {}).read_text()
  assert "one environment finished: nothing to compare it with" in page
  page = write_matrix_report(tmp_path, "s", [Env("a", "x", status="run_failed")], None, {}).read_text()
  assert "no environment finished" in page


def test_inconclusive_is_coloured_as_such_and_never_called_no_regression(tmp_path):
  envs = [Env("a", "orbax-checkpoint==0.11.30"), Env("b", "orbax-checkpoint==0.12.8")]
  comparisons = {"b": _comparison("a", [_row("load_0_basics/time_s", 2.0, 5.6, Verdict.INCONCLUSIVE)])}
  page = write_matrix_report(tmp_path, "s", envs, "a", comparisons).read_text()
  assert "no headline regression" not in page
  assert "inconclusive in b: more repeats would decide" in page
  assert "class='inconclusive'" in page and "2.80x [2.52, 3.08] inconclusive" in page
