"""A sweep with planted effects on its time, run for real (sleeps, tests/planted_effects_benchmarks.py): the
effects and interactions in summary.json within 7% of the plant with their verdicts, the console's
tables, auto repeats that decide on effects, and `tune` finding the planted best cell with about half
the runs the whole grid needs."""

from __future__ import annotations

import io
import itertools
import json
import math
import textwrap

import pytest
from rich.console import Console

import ckptbench
from ckptbench.stats import AUTO_LOOKS
from ckptbench.config import load_suite_text
from ckptbench.engine.loop._runner import run_suite
from ckptbench.engine._settings import RunSettings
from ckptbench.storage import unregister_store
from ckptbench.views import print_suite_tables
from ckptbench.views._effects_view import effects_section
from planted_effects_benchmarks import BEST, INTERACTION, planted_time
from conftest import run_cli
from store_servers import gcs_store  # noqa: F401  (fixture)

LEVELS = {"use_ocdbt": [False, True], "use_zarr3": [False, True], "concurrent_gb": [1, 4, 8]}
SUITE = """\
suite_name: planted
num_repeats: {repeats}
interleave_repeats: true
time_budget_s: 60
checkpoint_config: {{spec: {{params: {{dtype: float32, shape: [8], sharding: [fsdp]}}}}}}
mesh_config: {{mesh_axes: [fsdp], ici_parallelism: {{fsdp: 8}}}}
benchmarks:
  - generator: planted_effects_benchmarks.PlantedSleepBenchmark
    options: {options}
"""
# A busy machine's noise, planted: 12% log-normal on each run, and a 2.5x burst in 1 run of 20; the reference
# cell's 0.2 s keeps a loaded machine's overshoot of a sleep (milliseconds, on every run) from pulling the ratios
# towards 1 by more than a few percent.
PLANTED_RATIO = planted_time(**BEST) / planted_time()  # 0.56
NOISY = {"noise": 0.12, "burst_every": 20, "base_s": 0.2}


def _suite_text(levels=LEVELS, repeats="auto", noise=None) -> str:
  return SUITE.format(options=json.dumps({**levels, **(noise or {})}).replace('"', ""), repeats=repeats)


def _suite(tmp_path, levels=LEVELS, repeats="auto", noise=None):
  return load_suite_text(_suite_text(levels, repeats, noise), str(tmp_path / "s.yaml"))


def _suite_file(tmp_path, levels=LEVELS):
  path = tmp_path / "s.yaml"
  path.write_text(_suite_text(levels))
  return path


def _settings(tmp_path, **more) -> RunSettings:
  # The plant is a sleep: it writes no checkpoint and allocates nothing, so host memory, the flush of
  # earlier writeback, the storage probe and the views would only add time to what the tests judge.
  return RunSettings(output_dir=tmp_path / "out", show_progress=False, probe_storage=False, write_views=False,
                     host_memory="off", flush_between_runs=False, **more)  # fmt: skip


def _planted_main(factor: str, level, levels=LEVELS) -> float:
  """The plant's main effect: the level's ratio averaged (log scale) over every other factor's levels."""
  others = {k: v for k, v in levels.items() if k != factor}
  reference = levels[factor][0]
  logs = []
  for combo in itertools.product(*others.values()):
    cell = dict(zip(others, combo))
    logs.append(math.log(planted_time(**{**cell, factor: level}) / planted_time(**{**cell, factor: reference})))
  return math.exp(sum(logs) / len(logs))


def test_effects_of_a_planted_sweep_are_within_7_percent_with_their_verdicts(tmp_path):
  outcome = run_suite(_suite(tmp_path, repeats=12), _settings(tmp_path))
  summary = json.loads((tmp_path / "out" / "summary.json").read_text())
  effects = {(e["factor"], e["level"]): e for e in summary["effects"] if e["metric"] == "save_0_basics/time_s"}
  assert set(effects) == {("use_ocdbt", True), ("use_zarr3", True), ("concurrent_gb", 4), ("concurrent_gb", 8)}
  for (factor, level), effect in effects.items():
    assert effect["ratio"] == pytest.approx(_planted_main(factor, level), rel=0.07), (factor, level)
    assert effect["reference_level"] == LEVELS[factor][0] and effect["threshold"] == 0.1
    assert effect["low"] < effect["ratio"] < effect["high"] and effect["combinations"] == effect["possible"]
  assert effects[("use_ocdbt", True)]["verdict"] == "better"
  assert effects[("use_zarr3", True)]["verdict"] == "worse"
  assert effects[("concurrent_gb", 8)]["verdict"] == "better"
  assert effects[("concurrent_gb", 4)]["verdict"] == "worse"
  interactions = {tuple(i["levels"].items()): i for i in summary["interactions"]}
  planted = interactions[(("use_ocdbt", True), ("use_zarr3", True))]
  assert planted["ratio"] == pytest.approx(INTERACTION, rel=0.07) and planted["verdict"] == "worse"
  assert {(c["factor"], c["given_level"]) for c in planted["conditional"]} >= {("use_ocdbt", False), ("use_ocdbt", True)}
  for levels, interaction in interactions.items():
    if levels != (("use_ocdbt", True), ("use_zarr3", True)):
      assert interaction["ratio"] == pytest.approx(1.0, rel=0.07)
      assert interaction["verdict"] in ("equivalent", "inconclusive")
  console = Console(file=io.StringIO(), width=220)
  print_suite_tables(outcome.summary, console=console, records=outcome.records)
  text = console.file.getvalue()
  assert "effects of each factor (ratio [interval] verdict, at 10%)" in text
  zarr3 = effects[("use_zarr3", True)]
  assert f"{zarr3['ratio']:.3g}x [{zarr3['low']:.3g}-{zarr3['high']:.3g}] worse" in text
  assert "use_ocdbt and use_zarr3 interact" in text  # the conditional table of the decided interaction
  page = effects_section(outcome.summary)  # the report's section: the same tables
  assert "<h2>effects of each factor</h2>" in page and "use_ocdbt and use_zarr3 interact" in page
  assert f"{zarr3['ratio']:.3g}x [{zarr3['low']:.3g}-{zarr3['high']:.3g}] worse" in page


def test_auto_repeats_deciding_on_effects_stop_once_every_effect_is_decided(tmp_path):
  levels = {"use_ocdbt": [False, True], "use_zarr3": [False, True]}
  outcome = run_suite(_suite(tmp_path, levels), _settings(tmp_path, decide_on="effects"))
  summary = outcome.summary
  assert summary.repeats["stopped"] == "decided" and summary.repeats["rounds"] in AUTO_LOOKS  # at a look
  assert {(e.factor, e.verdict.value) for e in summary.effects} == {("use_ocdbt", "better"), ("use_zarr3", "worse")}
  assert [i.verdict.value for i in summary.interactions] == ["worse"]


def test_effects_under_a_busy_machines_noise_are_within_7_percent_and_decided(tmp_path):
  """12% log-normal noise and a 2.5x burst in 1 run of 20 on every run of the 3-factor sweep: summary.json's main
  effects, as a user reads them, within 7% of the plant and decided (measurements/noisy_sweeps.py measures
  coverage and false verdicts)."""
  run_suite(_suite(tmp_path, noise=NOISY, repeats=10), _settings(tmp_path))
  summary = json.loads((tmp_path / "out" / "summary.json").read_text())
  effects = {(e["factor"], e["level"]): e for e in summary["effects"] if e["metric"] == "save_0_basics/time_s"}
  verdicts = {k: e["verdict"] for k, e in effects.items()}
  # Two main effects lie near the 10% threshold: concurrent_gb=4's 1.15 and use_ocdbt's 0.88 (its 0.8 averaged
  # with the 1.2 interaction). At 10 repeats their estimates can land inside it (concurrent_gb=4 twice in 5 runs
  # at load 4-15, use_ocdbt once at load 4-6), and then each is undecided, never wrong: its interval holds the
  # plant and reaches past the threshold. The two far ones (1.42, 0.7) are always decided.
  for key, direction in ((("concurrent_gb", 4), "worse"), (("use_ocdbt", True), "better")):
    near = effects[key]
    if verdicts[key] == "inconclusive":
      threshold = 1.1 if direction == "worse" else 1 / 1.1
      assert near["low"] < threshold < near["high"] and near["low"] < _planted_main(*key) < near["high"], near
      verdicts[key] = direction
  assert verdicts == {("use_ocdbt", True): "better", ("use_zarr3", True): "worse",
                      ("concurrent_gb", 4): "worse", ("concurrent_gb", 8): "better"}
  for (factor, level), effect in effects.items():
    assert effect["ratio"] == pytest.approx(_planted_main(factor, level), rel=0.07), (factor, level)


def _check_tune(document: dict, ratio_rel: float | None, most_of_grid: float) -> None:
  """tune.json as a user reads it: the planted best, with at most `most_of_grid` of the runs the whole grid needs at
  the best's rounds, and its ratio to the reference (paired over the rounds both ran) near the planted 0.56 (within
  `ratio_rel`; None: the caller checks the ratio's interval instead)."""
  best = document["best"]
  assert best["options"] == BEST, document["candidates"]
  assert best["low"] <= best["median"] <= best["high"] and best["rounds"] >= 10
  # A sleep's overshoot on a busy machine adds the same milliseconds to both, which pulls the ratio towards 1.
  if ratio_rel is not None:
    assert best["ratio_to_reference"] == pytest.approx(PLANTED_RATIO, rel=ratio_rel)
  # 6 paired rounds bound the ratio at 95%; the reference stops there once the answer is decided beyond 10% of it.
  assert best["ratio_low"] < best["ratio_to_reference"] < best["ratio_high"] and best["ratio_rounds"] >= 6
  # Every run tune measured (the reference's beside the survivors, for the paired ratio, too) against the grid's.
  assert document["runs_measured"] <= most_of_grid * document["grid_runs_at_same_repeats"], document
  assert document["grid_runs_at_same_repeats"] == 12 * best["rounds"]
  statuses = [c["status"] for c in document["candidates"]]
  assert statuses.count("best") == 1 and len(statuses) == 12 and document["sampled"] is None
  for c in document["candidates"]:
    if c["status"] == "dropped" and c["options"] != best["reference"]:  # the reference runs on beside, for the ratio
      assert c["dropped_round"] >= 3 and c["why"].startswith("worse than ") and c["rounds"] == c["dropped_round"]
  reference = next(c for c in document["candidates"] if c["options"] == best["reference"])
  assert reference["rounds"] == best["ratio_rounds"]


def test_tune_finds_the_planted_best_with_about_half_the_grids_runs(tmp_path):
  outcome = ckptbench.tune(_suite(tmp_path), _settings(tmp_path), "save_0_basics/time_s")
  assert outcome.exit_code == 0
  assert outcome.answer == "{use_ocdbt: true, use_zarr3: false, concurrent_gb: 8}"
  # Nearly noiseless sleeps: the far cells drop at the first look, so well under half (about 0.4).
  _check_tune(json.loads((tmp_path / "out" / "tune.json").read_text()), ratio_rel=0.2, most_of_grid=0.5)


def test_tune_under_a_busy_machines_noise_still_names_the_planted_best_and_a_true_ratio(tmp_path):
  """12% log-normal noise and a 2.5x burst in 1 run of 20 on every run: the same answer, and a ratio interval that
  holds the plant (measurements/noisy_sweeps.py measures the rates)."""
  outcome = ckptbench.tune(_suite(tmp_path, noise=NOISY), _settings(tmp_path), "save_0_basics/time_s")
  assert outcome.exit_code == 0
  document = json.loads((tmp_path / "out" / "tune.json").read_text())
  # measurements/noisy_sweeps.py: a median of 0.42 of the grid's runs, 1 race in 10 over half, none over 0.6.
  # At this noise the paired ratio over the reference's 6 or more rounds spreads some +-17% (95%) around the truth,
  # so its point is not held to 20% here (0.70 once at load 5): its interval is, below.
  _check_tune(document, ratio_rel=None, most_of_grid=0.6)
  # The truth of the times measured lies between the plant and the plant with every sleep 20 ms late (a busy
  # machine's overshoot, the same milliseconds on both): the interval holds it.
  base_s = NOISY["base_s"]
  late = (planted_time(**BEST, base_s=base_s) + 0.02) / (planted_time(base_s=base_s) + 0.02)
  assert document["best"]["ratio_low"] <= late and PLANTED_RATIO <= document["best"]["ratio_high"]


def test_a_grid_over_the_most_a_race_takes_is_sampled_with_optuna(tmp_path):
  levels = {"use_ocdbt": [False, True], "use_zarr3": [False, True], "concurrent_gb": [1, 8]}
  outcome = ckptbench.tune(_suite(tmp_path, levels), _settings(tmp_path, time_budget_s=8), "save_0_basics/time_s",
                           ["save_0_basics/time_s <= 0.0125"], max_candidates=4, seed=7)  # fmt: skip
  document = outcome.document
  assert "racing 4 sampled by Optuna" in document["sampled"] and document["seed"] == 7
  statuses = [c["status"] for c in document["candidates"]]
  assert statuses.count("not sampled") == 4 and len(statuses) == 8
  assert document["constraints"] == ["save_0_basics/time_s <= 0.0125"]
  broke = [c for c in document["candidates"] if c["why"].startswith("breaks save_0_basics/time_s <= 0.0125")]
  assert all(c["median"] > 0.0125 for c in broke)


@pytest.mark.slow
def test_tune_on_the_command_line_prints_the_answer_first_and_refuses_a_bad_constraint(tmp_path):
  suite = tmp_path / "s.yaml"
  suite.write_text(SUITE.format(options="{use_ocdbt: [false, true], use_zarr3: [false, true]}", repeats="auto"))
  bad = run_cli("tune", str(suite), "--objective", "save_0_basics/time_s", "--constraint", "rss < 3", "-o",
                str(tmp_path / "bad"))  # fmt: skip
  assert bad.returncode == 2 and "--constraint 'rss < 3': expected 'TAG <= VALUE'" in bad.stderr
  assert "Traceback" not in bad.stderr and not (tmp_path / "bad").exists()
  done = run_cli("tune", str(suite), "--objective", "save_0_basics/time_s", "-o", str(tmp_path / "out"),
                 "--no_views", "--time_budget_s", "60", timeout=300)  # fmt: skip
  assert done.returncode == 0, done.stdout + done.stderr
  lines = [line for line in done.stdout.splitlines() if not line.startswith(("[", "race ", "ckptbench tune"))]
  assert lines[0] == "{use_ocdbt: true, use_zarr3: false}"
  assert lines[1].startswith("# save_0_basics/time_s ") and "the reference (use_ocdbt=False, use_zarr3=False)" in lines[1]
  assert json.loads((tmp_path / "out" / "tune.json").read_text())["best"]["options"] == {"use_ocdbt": True,
                                                                                          "use_zarr3": False}


def test_tune_json_judges_each_constraint_of_the_best_by_its_interval(tmp_path):
  levels = {"use_ocdbt": [False, True], "use_zarr3": [False, True]}
  outcome = ckptbench.tune(_suite(tmp_path, levels), _settings(tmp_path), "save_0_basics/time_s",
                           ["save_0_basics/time_s <= 1", "save_0_basics/time_s >= 0.001"])  # fmt: skip
  kept = json.loads((tmp_path / "out" / "tune.json").read_text())["best"]["constraints"]
  assert [k["constraint"] for k in kept] == ["save_0_basics/time_s <= 1", "save_0_basics/time_s >= 0.001"]
  for k in kept:  # the mean's 95% interval wholly within the limit: kept, decided
    assert k["within_limit"] is True and 0.001 < k["low"] <= k["mean"] <= k["high"] < 1 and k["level"] == 0.95
  assert outcome.answer == "{use_ocdbt: true, use_zarr3: false}"


def test_a_constraint_on_a_tag_no_run_measured_is_an_error_naming_it(tmp_path):
  levels = {"use_ocdbt": [False, True], "use_zarr3": [False]}
  with pytest.raises(ckptbench.CkptbenchError, match=r"--constraint 'load_0_basics/time_s <= 1': no run measured"):
    ckptbench.tune(_suite(tmp_path, levels), _settings(tmp_path), "save_0_basics/time_s", ["load_0_basics/time_s <= 1"])


def test_tune_on_an_object_store_runs_as_a_run_does(tmp_path):
  """`--checkpoint_root` on a store: each candidate's runs land there, as a run's do."""
  root = tmp_path / "store"
  (root / "bkt").mkdir(parents=True)
  ckptbench.register_store(ckptbench.DirectoryStore("tunetoy", root))
  try:
    levels = {"use_ocdbt": [False, True], "use_zarr3": [False, True]}
    outcome = ckptbench.tune(_suite(tmp_path, levels), _settings(tmp_path, checkpoint_root="tunetoy://bkt/runs"),
                             "save_0_basics/time_s")  # fmt: skip
  finally:
    unregister_store("tunetoy")
  assert outcome.answer == "{use_ocdbt: true, use_zarr3: false}"
  paths = {r.path for r in outcome.run.records}
  assert paths and all(p.startswith(str(root / "bkt" / "runs")) for p in paths)


@pytest.mark.slow  # the emulator is a server of its own
def test_tune_on_the_gcs_emulator_through_a_shaped_link(gcs_store, tmp_path):
  """`tune --checkpoint_root gs://... --link ...` against a real GCS emulator on 127.0.0.1: each candidate's runs go
  through the link to the store, and the answer is the planted best."""
  levels = {"use_ocdbt": [False, True], "use_zarr3": [False, True]}
  done = run_cli("tune", str(_suite_file(tmp_path, levels)), "--objective", "save_0_basics/time_s", "-o",
                 str(tmp_path / "out"), "--checkpoint_root", f"{gcs_store.url}/tune", "--link", "rtt=5ms,bw=200MB/s",
                 "--no_views", "--time_budget", "60", timeout=300)  # fmt: skip
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  lines = [line for line in done.stdout.splitlines() if not line.startswith(("[", "race ", "ckptbench tune"))]
  assert lines[0] == "{use_ocdbt: true, use_zarr3: false}"
  document = json.loads((tmp_path / "out" / "tune.json").read_text())
  assert document["best"]["options"] == {"use_ocdbt": True, "use_zarr3": False}
  link = json.loads((tmp_path / "out" / "link.json").read_text())
  assert link["shape"].startswith("rtt=5ms,bw=0.2GB/s")
  results = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
  timed = ckptbench.timed_runs([ckptbench.RunRecord.from_json(json.loads(line)) for line in results])
  assert len(timed) == document["runs_measured"] and all(r.path.startswith(f"{gcs_store.url}/tune") for r in timed)
  assert all(r.value("checkpoint_5_inventory/store_put_count") >= 1 for r in timed)  # counted by the link
