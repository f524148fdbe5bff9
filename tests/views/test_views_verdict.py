"""The verdict: variants side by side with ratios, four-word verdicts, outliers and main effects."""

from __future__ import annotations

import dataclasses
import re

import pytest
from rich.console import Console

from conftest import run_cli
from ckptbench.api import MetricEntry, MetricStatistics
from ckptbench.api._records import BenchmarkSummary, ErrorRecord, RunRecord, SuiteSummary
from ckptbench.results import read_outputs
from ckptbench.views import print_suite_tables
from ckptbench.views._effects_view import effects_section, print_effects
from ckptbench.analysis import sweep_effects, sweep_verdicts
from ckptbench.analysis._verdict import build_verdict
from ckptbench.api import judged_metrics
import ckptbench


def _table(records, reference=None):
  """The table as the console builds it: from the verdicts summary.json would hold."""
  return build_verdict(records, reference, sweep_verdicts(records, reference, paired=True, threshold=0.1))


def _record(key, varying, repeat, save_s, load_s=0.1, warmup=False):
  return RunRecord(
      suite="s", benchmark=f"B({', '.join(f'{k}={v}' for k, v in varying.items())})", key=key, generator="m.G",
      options=varying, varying=varying, mesh=None, checkpoint_config=None, repeat=repeat, warmup=warmup,
      host=0, num_hosts=1, path="", started_at="", duration_s=1.0,
      metrics={
          "save_blocking_0_basics/time_s": MetricEntry(0.01, "s"),
          "save_0_basics/time_s": MetricEntry(save_s, "s"),
          "load_0_basics/time_s": MetricEntry(load_s, "s"),
          "save_4_throughput/save_total_gbps": MetricEntry(1 / save_s, "GiB/s"),
          "save_4_throughput/save_blocking_gbps": MetricEntry(40.0, "GiB/s"),
          "save_blocking_4_throughput/save_blocking_gbps": MetricEntry(40.0, "GiB/s"),
          "save_background_4_throughput/save_total_gbps": MetricEntry(1 / save_s, "GiB/s"),
          "save_7_memory/host_rss_peak_diff_mib": MetricEntry(100.0, "MiB"),
      },
  )  # fmt: skip


def _sweep(effects, repeats=6, jitter=(1.0, 1.01, 0.99, 1.02, 0.98, 1.0)):
  """A 2x2 sweep whose save time is the product of one factor per option."""
  records = []
  for i, (ocdbt, zarr3) in enumerate([(True, True), (True, False), (False, True), (False, False)]):
    scale = effects["ocdbt"] ** (not ocdbt) * effects["zarr3"] ** (not zarr3)
    for r in range(repeats):
      records.append(_record(f"k{i}", {"use_ocdbt": ocdbt, "use_zarr3": zarr3}, r, scale * jitter[r]))
  return records


def test_headline_rows_are_times_own_bandwidths_and_peaks_not_blocking_rates():
  units = {t: m.unit for t, m in _record("k", {}, 0, 1.0).metrics.items()}
  tags = [m.tag for m in judged_metrics(units)]
  assert tags == [
      "save_blocking_0_basics/time_s", "save_0_basics/time_s", "load_0_basics/time_s",
      "save_4_throughput/save_total_gbps", "save_7_memory/host_rss_peak_diff_mib",
  ]


def test_ratios_verdicts_and_effects_of_a_two_axis_sweep():
  table = _table(_sweep({"ocdbt": 2.0, "zarr3": 1.0}))
  assert [v.label for v in table.variants][0] == "use_ocdbt=True, use_zarr3=True"
  assert table.is_reference("k0") and not table.is_reference("k2")
  slow = table.cell("save_0_basics/time_s", "k2")
  assert slow.verdict.ratio == pytest.approx(2.0, rel=0.02) and slow.verdict.verdict.value == "worse"
  faster = table.cell("save_4_throughput/save_total_gbps", "k2")
  assert faster.verdict.ratio == pytest.approx(0.5, rel=0.02) and faster.verdict.verdict.value == "worse"
  same = table.cell("save_0_basics/time_s", "k1")  # zarr3 changes nothing: 6 identical rounds
  assert same.verdict.verdict.value == "equivalent"
  assert table.cell("save_0_basics/time_s", "k0").verdict is None  # the reference
  effects = sweep_effects(_sweep({"ocdbt": 2.0, "zarr3": 1.0}), None, paired=True, threshold=0.1).effects
  by_factor = {(e.factor, e.level): e for e in effects if e.metric == "save_0_basics/time_s"}
  assert by_factor[("use_ocdbt", False)].ratio == pytest.approx(2.0, rel=0.02)
  assert by_factor[("use_ocdbt", False)].reference_level is True
  assert by_factor[("use_zarr3", False)].ratio == pytest.approx(1.0, rel=0.02)


def test_a_cell_never_measured_is_said_and_each_effect_averages_the_combinations_left():
  records = [r for r in _sweep({"ocdbt": 2.0, "zarr3": 1.5}) if r.key != "k3"]  # (False, False) never ran
  found = sweep_effects(records, None, paired=True, threshold=0.1)
  assert any("1 cell(s) of the grid not measured (use_ocdbt=False, use_zarr3=False)" in n for n in found.notes)
  ocdbt = next(e for e in found.effects if e.factor == "use_ocdbt" and e.metric == "save_0_basics/time_s")
  assert (ocdbt.combinations, ocdbt.possible) == (1, 2) and ocdbt.ratio == pytest.approx(2.0, rel=0.02)
  assert found.interactions == ()  # no 2 x 2 block has all four cells


def test_the_suites_reference_is_used_and_warmups_and_failures_are_left_out():
  records = _sweep({"ocdbt": 2.0, "zarr3": 1.0})
  records.append(_record("k0", {"use_ocdbt": True, "use_zarr3": True}, 0, 50.0, warmup=True))
  records.append(dataclasses.replace(_record("k0", {"use_ocdbt": True, "use_zarr3": True}, 9, 50.0), error=ErrorRecord("E", "")))
  table = _table(records, reference={"use_ocdbt": "false", "use_zarr3": False})
  assert table.is_reference("k3") and not table.is_reference("k0")
  assert table.cell("save_0_basics/time_s", "k0").interval.n == 6
  assert table.cell("save_0_basics/time_s", "k0").verdict.ratio == pytest.approx(0.5, rel=0.02)
  assert table.cell("save_0_basics/time_s", "k0").verdict.n == 6


def test_each_generator_is_compared_with_a_reference_of_its_own():
  """A raw store write and an Orbax save measure different things: no ratio crosses generators."""
  records = []
  for generator, base in (("m.Store", 0.1), ("m.Save", 1.0)):
    for i, ocdbt in enumerate((False, True)):
      key = f"{generator}-{ocdbt}"
      for r in range(8):
        record = _record(key, {"use_ocdbt": ocdbt}, r, base * (1.5 if ocdbt else 1.0) * (1 + 0.005 * (r % 3)))
        records.append(dataclasses.replace(record, generator=generator, benchmark=f"{generator}(use_ocdbt={ocdbt})"))
  verdicts = sweep_verdicts(records, None, paired=True, threshold=0.1)
  saves = [v for v in verdicts if v.metric == "save_0_basics/time_s"]
  assert {(v.benchmark, v.verdict.value) for v in saves} == {("m.Store-True", "worse"), ("m.Save-True", "worse")}
  assert all(v.ratio == pytest.approx(1.5, rel=0.02) for v in saves)  # not 15x: Save against Store
  table = build_verdict(records, None, verdicts)
  assert table.is_reference("m.Store-False") and table.is_reference("m.Save-False")
  assert table.reference_labels() == ["m.Store(use_ocdbt=False)", "m.Save(use_ocdbt=False)"]


def test_a_slow_first_repeat_is_flagged_and_three_repeats_are_too_few_to_judge():
  records = _sweep({"ocdbt": 2.0, "zarr3": 1.0}, repeats=3, jitter=(2.3, 1.0, 1.01))
  table = _table(records)
  flagged = {(v.key, m.tag, o.repeat) for v, m, o in table.outliers()}
  assert ("k0", "save_0_basics/time_s", 0) in flagged
  assert all(tag.endswith("time_s") for _, tag, _ in flagged)  # throughput is the same number upside down
  undecided = table.cell("save_0_basics/time_s", "k2").verdict
  assert undecided.verdict.value == "inconclusive" and undecided.low is None  # 3 rounds bound no 95% interval
  assert undecided.repeats_needed >= 6


def _text(summary, records, **kwargs):
  console = Console(record=True, width=200, color_system=None)
  print_suite_tables(summary, console, records=records, **kwargs)
  return console.export_text()


def test_console_prints_the_verdict_first_and_details_only_when_asked():
  records = _sweep({"ocdbt": 2.0, "zarr3": 1.0})
  bench = BenchmarkSummary("B(x)", "k0", "m.G", {}, {}, None, None, runs=6, failed=0, errors=[], metrics={
      "save_0_basics/time_s": MetricStatistics("s", n=6, mean=1.0, std=0.1, min=0.9, max=1.1, median=1.0)})
  effects = sweep_effects(records, None, paired=True, threshold=0.1)
  summary = SuiteSummary(suite="s", benchmarks=[bench], verdicts=sweep_verdicts(records, None, paired=True, threshold=0.1),
                         effects=list(effects.effects), interactions=list(effects.interactions))  # fmt: skip
  text = _text(summary, records)
  assert text.index("verdict: s") < text.index("effects of each factor") < text.index("suite s")
  assert "reference: use_ocdbt=True, use_zarr3=True" in text
  assert re.search(r"2\.0\dx \[2-2\] worse", text) and re.search(r"use_ocdbt=False vs True +│.*│ +2(\.0\d)?x \[2-2\] worse", text)
  assert "; equivalent: the interval lies within +-10%" in text and "[low-high] after a ratio" not in text
  assert "[low-high] after a ratio: Hodges-Lehmann interval" in _text(summary, records, detail=True)
  assert "use_ocdbt=False vs True" in text
  assert "mean ± std" not in text
  assert "mean ± std" in _text(summary, records, detail=True)


@pytest.mark.slow
def test_a_real_sweep_prints_its_verdict_first(tmp_path):
  suite = tmp_path / "s.yaml"
  suite.write_text(
      "suite_name: verdict\nnum_repeats: 3\nreference: {use_ocdbt: false}\n"
      "checkpoint_config: {spec: {params: {dtype: float32, shape: [64, 64], sharding: [fsdp]}}}\n"
      "mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 2}}\n"
      "benchmarks:\n  - generator: save_restore\n    options: {use_ocdbt: [true, false]}\n"
  )
  done = run_cli("run", str(suite), "-o", str(tmp_path / "out"), "--no-progress", "--no-probe", "--no-views")
  assert done.returncode == 0, done.stderr
  text = done.stdout
  assert text.index("verdict: verdict") < text.index("suite verdict")
  assert "(reference: use_ocdbt=False)" in text
  for label in ("save time", "save blocking time", "load time", "save throughput", "load throughput"):
    assert label in text
  assert "save_blocking_gbps" not in text and "mean ± std" not in text
  assert re.search(r"\d\.\d\dx .*inconclusive", text)  # 3 vs 3 repeats: a ratio, never a decision
  out = read_outputs(tmp_path / "out")
  assert len(ckptbench.warmup_runs(out.results)) == 2  # the default warm-up with repeats
  assert out.reference == {"use_ocdbt": False}
  assert build_verdict(out.results, out.reference).variants[1].label == "use_ocdbt=False"


def test_many_outlying_repeats_are_summed_up_in_two_lines_naming_where_and_the_worst():
  jitter = (1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.6, 1.01, 0.99, 2.5, 1.0, 1.02)  # repeats 6 and 9 far off
  records = _sweep({"ocdbt": 2.0, "zarr3": 1.0}, repeats=12, jitter=jitter)
  table = _table(records)
  flagged = table.outliers()
  assert len(flagged) >= 8  # every variant's repeats 6 and 9
  summary = _text(SuiteSummary(suite="s", benchmarks=[], verdicts=[c.verdict for c in table.cells.values() if c.verdict]),
                  records, detail=True)  # fmt: skip (-v: the worst one too)
  start = summary.index("! outliers:")
  lines = summary[start:summary.index("warning:")].splitlines()
  assert len(lines) <= 3, summary  # a sentence that fills the line goes on, indented
  text = " ".join(line.strip() for line in lines)
  assert text.startswith(f"! outliers: {len(flagged)} of 48 times lie far from their variant's others: save time 8, in"
                         " use_ocdbt=True, use_zarr3=True (2), use_ocdbt=True, use_zarr3=False (2),")
  assert re.search(r"\. The worst: .*save time of repeat 9: [\d.]+ s against a median of [\d.]+ s \(modified z", text)


def test_the_effects_tables_show_hostile_names_as_text():
  """An option named with markup, HTML and a terminal escape: shown as text in the console and the report."""
  hostile = "[bold]x</td><script>\x1b[2J"
  records = [dataclasses.replace(r, varying={hostile if k == "use_ocdbt" else k: v for k, v in r.varying.items()})
             for r in _sweep({"ocdbt": 2.0, "zarr3": 1.0})]  # fmt: skip
  found = sweep_effects(records, None, paired=True, threshold=0.1)
  summary = SuiteSummary(suite="s", benchmarks=[], effects=list(found.effects), interactions=list(found.interactions))
  console = Console(record=True, width=250, color_system=None)
  print_effects(summary, console)
  text = console.export_text()
  assert "[bold]x</td><script>=False vs True" in text and "\x1b" not in text
  page = effects_section(summary)
  assert "&lt;script&gt;" in page and "<script>" not in page
