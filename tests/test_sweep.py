"""Sweep expansion, is_valid, names and keys, mesh skipping, run order."""

from __future__ import annotations

import textwrap

import pytest

from ckptbench.config import load_suite_text
from ckptbench.engine.loop._schedule import ScheduledRun, pending, schedule_runs
from ckptbench.engine._sweep import expand
from ckptbench.errors import ConfigError

SUITE = """\
suite_name: sweep
checkpoint_config:
  spec: {w: {dtype: float32, shape: [8, 8], sharding: [x]}}
mesh_configs:
  - {mesh_axes: [x], ici_parallelism: {x: 8}}
  - {mesh_axes: [x], ici_parallelism: {x: 4}}
  - {mesh_axes: [x, y], ici_parallelism: {x: 2, y: 4}}
benchmarks:
  - generator: save_restore
    options:
      use_ocdbt: [true, false]
      use_zarr3: [true, false]
      use_replica_parallel: [false, true]
      enable_replica_parallel_separate_folder: [false, true]
"""


def test_the_loader_builds_and_checks_every_combination():
  entry = load_suite_text(SUITE, "s.yaml").entries[0]
  assert len(entry.points) == 16
  invalid = [p for p in entry.points if p.invalid_reason is not None]
  assert len(invalid) == 6 and not any(p.options.is_valid() for p in invalid)  # is_valid follows invalid_reason
  assert invalid[0].values["enable_replica_parallel_separate_folder"] is True


def test_an_options_class_overriding_is_valid_alone_is_skipped_without_a_reason():
  import dataclasses  # noqa: PLC0415

  import ckptbench  # noqa: PLC0415

  @dataclasses.dataclass(frozen=True, kw_only=True)
  class OrbaxStyle(ckptbench.BenchmarkOptions):
    n: int = 0

    def is_valid(self) -> bool:
      return self.n > 0

  assert OrbaxStyle(n=1).is_valid() and OrbaxStyle(n=1).invalid_reason() is None
  assert not OrbaxStyle(n=0).is_valid() and OrbaxStyle(n=0).invalid_reason() is None


def test_product_minus_invalid_times_fitting_meshes():
  suite = load_suite_text(SUITE, "s.yaml")
  plan = expand(suite, device_count=8)
  # 16 combinations; separate folders need replica-parallel and OCDBT: 16 - 4 - 2 = 10 valid.
  assert len(plan.invalid) == 6
  assert all("needs use_replica_parallel and use_ocdbt" in reason for _, _, reason in plan.invalid)
  assert [m.describe() for m, _ in plan.skipped_meshes] == ["x4"]
  assert "needs 4 devices but 8 are available" in plan.skipped_meshes[0][1]
  assert len(plan.benchmarks) == 10 * 2
  names = [b.name for b in plan.benchmarks]
  assert len(set(names)) == len(names)
  assert names[0] == (
      "SaveRestoreBenchmark(use_ocdbt=True, use_zarr3=True, use_replica_parallel=False,"
      " enable_replica_parallel_separate_folder=False, mesh=x8)"
  )
  assert len({b.key for b in plan.benchmarks}) == len(plan.benchmarks)
  assert all("/" not in b.dir_name and ".." not in b.dir_name for b in plan.benchmarks)


def test_keys_are_stable_across_loads_and_ignore_names():
  a = expand(load_suite_text(SUITE, "a.yaml"), 8)
  b = expand(load_suite_text(SUITE.replace("suite_name: sweep", "suite_name: other"), "b.yaml"), 8)
  assert [x.key for x in a.benchmarks] == [x.key for x in b.benchmarks]


def test_no_fitting_mesh_is_one_clear_error():
  with pytest.raises(ConfigError) as info:
    expand(load_suite_text(SUITE, "s.yaml"), device_count=3)
  message = str(info.value)
  assert "no mesh fits the 3 available devices" in message
  assert "x8 (8)" in message and "x4 (4)" in message and "x2xy4 (8)" in message


def test_schedule_back_to_back_and_interleaved():
  runs = schedule_runs(2, num_repeats=2, num_warmups=1)
  assert [(r.benchmark_index, r.repeat, r.warmup) for r in runs] == [
      (0, 0, True), (0, 0, False), (0, 1, False), (1, 0, True), (1, 0, False), (1, 1, False)
  ]  # fmt: skip
  runs = schedule_runs(2, num_repeats=2, num_warmups=1, interleave=True)
  assert [(r.benchmark_index, r.repeat, r.warmup) for r in runs] == [
      (0, 0, True), (1, 0, True), (0, 0, False), (1, 0, False), (0, 1, False), (1, 1, False)
  ]  # fmt: skip


def test_pending_skips_recorded_runs_and_finished_benchmarks_warmups():
  runs = schedule_runs(2, num_repeats=2, num_warmups=1)
  left = pending(runs, ["a", "b"], done={("a", 0), ("a", 1), ("b", 0)})
  assert left == [ScheduledRun(1, 0, True), ScheduledRun(1, 1, False)]


def test_options_rejected_by_the_dataclass_are_located():
  text = textwrap.dedent("""\
      suite_name: s
      benchmarks:
        - generator: sample_benchmarks.FlakyBenchmark
          options: {sleep_s: [0.0, -1.0]}
      """)
  with pytest.raises(ConfigError) as info:
    load_suite_text(text, "s.yaml")  # at load, not at expansion: the error has its line
  assert (info.value.file, info.value.line) == ("s.yaml", 4)
  assert info.value.key == "benchmarks[0].options.sleep_s[1]"  # the option the message names, its swept item
  assert "FlakyOptions" in info.value.message and "sleep_s must be >= 0, got -1.0" in info.value.message


def test_a_rejection_naming_no_option_points_at_the_options(tmp_path):
  (tmp_path / "picky_options_module.py").write_text(textwrap.dedent("""\
      import dataclasses
      import ckptbench

      @dataclasses.dataclass(frozen=True, kw_only=True)
      class PickyOptions(ckptbench.BenchmarkOptions):
        a: int | list[int] = 0
        b: int | list[int] = 0

        def __post_init__(self):
          if self.a + self.b > 3:
            raise ValueError("too much in all")

      @ckptbench.benchmark_options(PickyOptions)
      class PickyBenchmark(ckptbench.BenchmarksGenerator):
        def test_fn(self, context):
          return ckptbench.TestResult(metrics=ckptbench.Metrics())
      """))
  text = textwrap.dedent("""\
      suite_name: s
      benchmarks:
        - generator: picky_options_module.PickyBenchmark
          options:
            a: [1, 2]
            b: [1, 2]
      """)
  with pytest.raises(ConfigError) as info:
    load_suite_text(text, "s.yaml", tmp_path)
  assert info.value.line == 4 and info.value.key == "benchmarks[0].options"
  assert "PickyOptions(a=2, b=2) was rejected: too much in all" in info.value.message


def test_the_run_plan_is_decided_once_from_the_suite_and_the_flags(tmp_path):
  import dataclasses
  import random

  from ckptbench.engine import RunSettings
  from ckptbench.engine._run_plan import build_run_plan

  suite = load_suite_text(SUITE + "baseline_path: base.json\n", "s.yaml")
  run_plan = build_run_plan(suite, RunSettings(output_dir=tmp_path, regression_threshold=0.25), 8)
  with pytest.raises(dataclasses.FrozenInstanceError):
    run_plan.threshold = 0.1  # type: ignore[misc]
  # The suite's baseline makes the run compare, so auto repeats; every verdict (the looks' and
  # summary.json's) compares with the plan's first benchmark.
  assert run_plan.baseline_path == "base.json" and run_plan.repeats.auto and run_plan.threshold == 0.25
  assert run_plan.reference == run_plan.plan.benchmarks[0].describe()["varying"]
  todo = run_plan.schedule(set(), random.Random(0))
  repeats = [r for r in todo if not r.warmup]
  assert len(repeats) == run_plan.repeats.count * len(run_plan.keys)
  flag = build_run_plan(suite, RunSettings(output_dir=tmp_path, baseline_path="flag.json"), 8)
  assert flag.baseline_path == "flag.json"
