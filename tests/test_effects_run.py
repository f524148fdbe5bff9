"""A sweep with planted effects on its time, run for real (sleeps, tests/planted_effects_benchmarks.py): the
effects and interactions in summary.json within 7% of the plant with their verdicts, the console's
tables, auto repeats that decide on effects, and `tune` finding the planted best cell with at most half
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
from planted_effects_benchmarks import INTERACTION, PLANTS, planted_time
from conftest import run_cli

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


def _suite(tmp_path, levels=LEVELS, repeats="auto"):
  options = json.dumps(levels).replace('"', "")
  return load_suite_text(SUITE.format(options=options, repeats=repeats), str(tmp_path / "s.yaml"))


def _settings(tmp_path, **more) -> RunSettings:
  # The plant is a sleep: it writes no checkpoint and allocates nothing, so host memory, the flush of
  # earlier writeback, the storage probe and the views would only add time to what the tests judge.
  return RunSettings(output_dir=tmp_path / "out", show_progress=False, probe_storage=False, write_views=False,
                     host_memory="off", flush_between_runs=False, **more)  # fmt: skip


def _planted_main(factor: str, level) -> float:
  """The plant's main effect: the level's ratio averaged (log scale) over every other factor's levels."""
  others = {k: v for k, v in LEVELS.items() if k != factor}
  reference = LEVELS[factor][0]
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
  assert effects[("concurrent_gb", 4)]["verdict"] in ("equivalent", "inconclusive")  # 0.95x: within 10%
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


def test_tune_finds_the_planted_best_with_at_most_half_the_grids_runs(tmp_path):
  outcome = ckptbench.tune(_suite(tmp_path), _settings(tmp_path), "save_0_basics/time_s")
  assert outcome.exit_code == 0
  assert outcome.answer == "{use_ocdbt: true, use_zarr3: false, concurrent_gb: 8}"
  document = json.loads((tmp_path / "out" / "tune.json").read_text())
  best = document["best"]
  assert best["options"] == {"use_ocdbt": True, "use_zarr3": False, "concurrent_gb": 8}
  assert best["low"] <= best["median"] <= best["high"] and best["rounds"] >= 10
  # The model's ratio, the reference dropped after 3 rounds; a sleep's overshoot on a busy machine adds the same
  # milliseconds to both, which pulls the ratio of the times towards 1.
  assert best["ratio_to_reference"] == pytest.approx(0.7 * 0.7, rel=0.15)
  assert best["ratio_low"] < best["ratio_to_reference"] < best["ratio_high"]
  assert document["runs_measured"] <= document["grid_runs_at_same_repeats"] / 2, document
  assert document["grid_runs_at_same_repeats"] == 12 * best["rounds"]
  statuses = [c["status"] for c in document["candidates"]]
  assert statuses.count("best") == 1 and len(statuses) == 12 and document["sampled"] is None
  for c in document["candidates"]:
    if c["status"] == "dropped":
      assert c["dropped_round"] >= 3 and c["why"].startswith("worse than ") and c["rounds"] == c["dropped_round"]


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
