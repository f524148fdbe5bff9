"""Every reader of records asks `RunRecord.kind` (api/_records.py): fed one real run in the default
mode (warm-ups, timed runs and a memory pass's records in one results.jsonl), each counts the timed
runs as the runs, takes timings from them and host memory from the memory pass, and nothing twice."""

from __future__ import annotations

import collections
import csv
import json
import shutil
import statistics
import textwrap

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import ckptbench
from ckptbench.api import is_host_memory_tag
from ckptbench.analysis import load_baseline, plan_goodput
from ckptbench.engine.loop._runner import run_suite
from ckptbench.engine.scaling._metrics import host_count_metrics
from ckptbench.envs._judge import environment_verdicts
from ckptbench.history import analyse, entry_from_outputs, gate
from ckptbench.results import read_outputs, read_records
from ckptbench.stats import Design
from conftest import run_cli

pytestmark = pytest.mark.slow  # the run's memory pass is a second process

SUITE = """\
suite_name: kinds
num_repeats: 2
checkpoint_config:
  spec:
    params: {dtype: float32, shape: [256, 64], sharding: [fsdp]}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}
benchmarks:
  - generator: save_restore
    options: {use_ocdbt: [true, false]}
"""
SAVE = "save_0_basics/time_s"
REPEATS, VARIANTS = 2, 2


@pytest.fixture(scope="module")
def run(tmp_path_factory):
  """One run as a user starts it (host memory from the default memory pass), with a baseline captured."""
  root = tmp_path_factory.mktemp("kinds")
  (root / "suite.yaml").write_text(SUITE)
  settings = ckptbench.RunSettings(output_dir=root / "out", show_progress=False, probe_storage=False,
                                   baseline_capture_path=str(root / "baselines"), baseline_label="kinds")  # fmt: skip
  outcome = ckptbench.run(str(root / "suite.yaml"), settings)
  assert outcome.exit_code == 0
  return root


def _host_memory_tag(records) -> str:
  return next(t for r in ckptbench.memory_pass_records(records) for t in r.metrics if is_host_memory_tag(t))


def test_the_run_holds_every_kind_and_each_tag_comes_from_one(run):
  records = read_records(run / "out")
  kinds = collections.Counter(r.kind for r in records)
  assert kinds == {ckptbench.RecordKind.WARMUP: VARIANTS, ckptbench.RecordKind.TIMED: VARIANTS * REPEATS,
                   ckptbench.RecordKind.MEMORY_PASS: VARIANTS * REPEATS}  # fmt: skip
  timed_tags = {t for r in ckptbench.timed_runs(records) for t in r.metrics}
  memory_tags = {t for r in ckptbench.memory_pass_records(records) for t in r.metrics}
  assert memory_tags and not memory_tags & timed_tags
  assert all(r.value(SAVE) is not None for r in ckptbench.sampled_records(records) if r.kind.value == "timed")


def test_summary_and_verdicts_count_the_timed_runs_and_judge_host_memory_from_the_pass(run):
  outputs = read_outputs(run / "out")
  memory_tag = _host_memory_tag(outputs.results)
  for bench in outputs.summary.benchmarks:
    assert (bench.runs, bench.failed) == (REPEATS, 0)
    assert bench.metrics[SAVE].n == REPEATS and bench.metrics[memory_tag].n == REPEATS
  verdicts = {v.metric: v for v in outputs.summary.verdicts}
  assert (verdicts[SAVE].n_reference, verdicts[SAVE].n_current) == (REPEATS, REPEATS)
  judged_memory = [v for v in outputs.summary.verdicts if is_host_memory_tag(v.metric)]
  assert judged_memory and all((v.n_reference, v.n_current) == (REPEATS, REPEATS) for v in judged_memory)


def test_the_report_counts_the_timed_runs(run):
  page = (run / "out" / "report.html").read_text()
  runs = VARIANTS * REPEATS
  assert f"{VARIANTS} benchmarks, {runs} runs, {runs} passed" in page


def test_tensorboard_writes_one_duration_per_timed_run(run):
  host_dirs = list((run / "out" / "tensorboard").glob("*/host_0"))
  assert len(host_dirs) == VARIANTS
  for host_dir in host_dirs:
    events = EventAccumulator(str(host_dir), size_guidance={"tensors": 0})
    events.Reload()
    assert [e.step for e in events.Tensors("run/duration_s")] == list(range(REPEATS))
    assert [e.step for e in events.Tensors(_host_memory_tag(read_records(run / "out")))] == list(range(REPEATS))


def test_the_export_tells_each_row_what_it_is(run):
  df = ckptbench.load_results(run / "out")
  timed = df[~df.memory_pass]
  assert len(timed.groupby(["key", "repeat"])) == VARIANTS * REPEATS
  memory_tags = set(df[df.memory_pass].tag)
  assert any(is_host_memory_tag(t) for t in memory_tags) and not memory_tags & set(timed.tag)


def test_the_baseline_and_goodput_take_the_timed_runs_samples(run):
  baseline = load_baseline(run / "baselines" / "kinds.json")
  records = read_records(run / "out")
  memory_tag = _host_memory_tag(records)
  for key, bench in baseline.benchmarks.items():
    assert bench.summary.runs == REPEATS
    assert bench.samples[SAVE].hosts[0].values == [r.value(SAVE) for r in ckptbench.timed_runs(records) if r.key == key]
    assert len(bench.samples[memory_tag].hosts[0].values) == REPEATS
  for plan in plan_goodput(run / "out", mtbf_s=3600.0):
    tag = plan.sources["blocking_s"].split()[0]  # "<tag> (what it is)"
    blocking = [r.value(tag) for r in ckptbench.timed_runs(records) if r.key == plan.key]
    assert plan.cost.blocking_s == pytest.approx(statistics.median(blocking))


def test_history_and_its_gate_take_one_sample_per_timed_run(run):
  entries = [entry_from_outputs(run / "out", label) for label in ("a", "b")]
  times = [p for p in entries[0].points if p.metric == SAVE]
  assert len(times) == VARIANTS and all(len(p.samples) == REPEATS for p in times)
  memory = [p for p in entries[0].points if is_host_memory_tag(p.metric)]
  assert memory and all(len(p.samples) == REPEATS for p in memory)
  assert gate(analyse(entries)) == []


def test_scale_reads_the_single_process_step_with_its_memory_pass(run):
  measured = host_count_metrics(read_records(run / "out"))  # the pass's records were a second host 0
  assert len(measured) == VARIANTS
  assert all(len(m.repeats) == REPEATS for metrics in measured.values() for m in metrics.values())


def test_matrix_and_bisect_judge_each_environment_on_its_timed_runs(run, tmp_path):
  for label in ("old", "new"):
    (tmp_path / label).mkdir()
    shutil.copy(run / "out" / "results.jsonl", tmp_path / label / "results.jsonl")
  verdicts = environment_verdicts(tmp_path, ["old", "new"], Design(), threshold=0.1)["new"]
  saves = [v for v in verdicts if v.metric == SAVE]
  assert len(saves) == VARIANTS and all((v.n_reference, v.n_current) == (REPEATS, REPEATS) for v in saves)


def test_resume_counts_the_timed_runs_done_and_runs_nothing_again(run, tmp_path):
  shutil.copytree(run / "out", tmp_path / "out")
  before = read_records(tmp_path / "out")
  suite = ckptbench.load_suite_text(SUITE, str(run / "suite.yaml"))
  settings = ckptbench.RunSettings(output_dir=tmp_path / "out", resume=True, show_progress=False,
                                   probe_storage=False, write_views=False)  # fmt: skip
  outcome = run_suite(suite, settings)
  assert outcome.exit_code == 0 and read_records(tmp_path / "out") == before  # nor a second memory pass
  assert outcome.summary.runs == VARIANTS * REPEATS


def test_report_export_and_goodput_commands_read_the_run_as_a_user_does(run, tmp_path):
  out, runs = run / "out", VARIANTS * REPEATS
  report = run_cli("report", str(out), "-o", str(tmp_path / "report.html"))
  assert report.returncode == 0, report.stderr
  assert f"{VARIANTS} benchmarks, {runs} runs, {runs} passed" in (tmp_path / "report.html").read_text()
  export = run_cli("export", str(out), "-o", str(tmp_path / "results.csv"))
  assert export.returncode == 0, export.stderr
  with open(tmp_path / "results.csv", newline="") as f:
    rows = list(csv.DictReader(f))
  timed = {(r["key"], r["repeat"]) for r in rows if r["memory_pass"] == "False"}
  assert len(timed) == runs and {r["repeat"] for r in rows if r["memory_pass"] == "True"} == {"0", "1"}
  goodput = run_cli("goodput", str(out), "--mtbf", "6h", "-o", str(tmp_path / "goodput"))
  assert goodput.returncode == 0, goodput.stderr
  plans = json.loads((tmp_path / "goodput" / "goodput.json").read_text())
  assert len(plans) == VARIANTS and all(p["best_interval_s"] > 0 for p in plans)


def test_a_test_fn_knows_a_warmup_from_a_counted_run_in_the_timed_runs_and_in_the_memory_pass(tmp_path):
  log = tmp_path / "kinds.jsonl"
  (tmp_path / "suite.yaml").write_text(textwrap.dedent(f"""\
      suite_name: warm
      num_repeats: 2
      num_warmups: 1
      benchmarks:
        - generator: sample_benchmarks.KindLogBenchmark
          options: {{log_path: {json.dumps(str(log))}}}
      """))  # fmt: skip
  settings = ckptbench.RunSettings(output_dir=tmp_path / "out", show_progress=False, probe_storage=False,
                                   write_views=False)  # fmt: skip
  outcome = ckptbench.run(str(tmp_path / "suite.yaml"), settings)
  assert outcome.exit_code == 0
  seen = [(e["warmup"], e["measures_host_memory"]) for e in map(json.loads, log.read_text().splitlines())]
  readings = len(ckptbench.memory_pass_records(outcome.records))
  assert readings >= 1
  # The timed runs (host memory held for the pass): a warm-up, then 2 counted; the pass: a warm-up, beside theirs
  # and before their first counted run (engine/memory/_gate.py), then readings.
  assert [e for e in seen if not e[1]] == [(True, False), (False, False), (False, False)]
  assert [e for e in seen if e[1]] == [(True, True)] + [(False, True)] * readings
  assert seen.index((True, True)) < seen.index((False, False))
