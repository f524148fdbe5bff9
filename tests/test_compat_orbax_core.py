"""ckptbench.compat.orbax's core: Orbax's `Metrics.results`, metric registry, generate(), Benchmark, TestSuite, v1 Benchmark.

The behaviour Orbax's own tests of its framework pin down, on ckptbench's collectors and engine.
"""

from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import pytest
import torch.distributed as dist  # makes the engine set up a gloo group for this module's generators
from absl import logging as absl_logging
from etils import epath

import ckptbench
from conftest import timed_records
from ckptbench.compat.orbax.core import checkpoint_generation, configs, core, metric, pytree_utils
from ckptbench.compat.orbax.v1 import benchmark as v1_benchmark


@dataclasses.dataclass(frozen=True)
class PairOptions(core.BenchmarkOptions):
  opt1: int | list[int] = 1
  opt2: str | list[str] = "a"

  def is_valid(self) -> bool:
    return not (self.opt1 == 2 and self.opt2 == "a")


@core.benchmark_options(PairOptions)
class PairGenerator(core.BenchmarksGenerator):
  """Records a value of its own; fails for opt1=2, opt2=b."""

  def test_fn(self, context: core.TestContext) -> core.TestResult:
    if context.options.opt1 == 2 and context.options.opt2 == "b":
      raise ValueError("opt1=2, opt2=b failed")
    metrics = metric.Metrics()
    with metrics.measure("save", ["time"]):
      (context.path / "f").write_text("x")
    metrics.results["fake_metric::0_basics/own_s"] = (0.1, "s")
    return core.TestResult(metrics=metrics)


def _generator(**options) -> PairGenerator:
  return PairGenerator(checkpoint_configs=[configs.CheckpointConfig(spec={})], options=PairOptions(**options))


def test_results_are_the_measured_tags_in_orbax_keys_and_take_assignments():
  metrics = metric.Metrics(name="m")
  for operation in ("save", "save_0", "wait_until_finished_1"):
    with metrics.measure(operation, ["time"]):
      pass
  assert list(metrics.results) == [
      "save::0_basics/time_s", "save_0::0_basics/time_s", "wait_until_finished_1::0_basics/time_s"]  # fmt: skip
  assert metrics.results["save::0_basics/time_s"][1] == "s"
  assert "save_0_0_basics/time_s" in metrics.to_dict()  # the record keeps ckptbench's tags
  metrics.results["save"] = (1.0, "s")  # Orbax's tests write plain keys too
  metrics.results["op::custom"] = (2, "count")
  assert metrics.results["save"] == (1.0, "s") and metrics.results["op::custom"] == (2.0, "count")
  metrics.results = {"metric1": (1.23, "s")}
  assert metrics.results == {"metric1": (1.23, "s")} and metrics.to_dict()["metric1"].value == 1.23
  metrics.results["label"] = ("warm", "")  # Orbax's dict takes any value; the record only numbers
  assert metrics.results["label"] == ("warm", "") and "label" not in metrics.to_dict()
  del metrics.results["metric1"], metrics.results["label"]
  assert len(metrics.results) == 0 and metric.Metrics(results={"a": (1.0, "s")}).results == {"a": (1.0, "s")}


def test_the_report_is_orbaxs(monkeypatch):
  logged = []
  monkeypatch.setattr(absl_logging, "info", lambda text, *args: logged.append(text % args if args else text))
  metrics = metric.Metrics(name="TestMetrics")
  metrics.results = {"metric1": (1.23, "s"), "metric2": (4.56, "s")}
  metrics.report()
  assert logged[-1] == "---[process_id=0] TestMetrics Metrics Report ---\nmetric1: 1.2300 s\nmetric2: 4.5600 s\n----------------------"


def test_the_registry_runs_ckptbench_collectors_and_a_registered_class_beside_them(monkeypatch):
  class Counter(metric.BaseMetric):
    def stop(self):
      return {"calls": (3, "count")}

  class Tagged(Counter):
    OMIT_REGISTRY_KEY_PREFIX = True

    def stop(self):
      return {"9_other/calls": (4, "count")}

  monkeypatch.setitem(metric.METRIC_REGISTRY, "counter", Counter)
  monkeypatch.setitem(metric.METRIC_REGISTRY, "tagged", Tagged)
  metrics = metric.Metrics()
  with metrics.measure("op", ["time", "counter", "tagged"]):
    pass
  assert set(metrics.results) == {"op::0_basics/time_s", "op::counter_calls", "op::9_other/calls"}
  timer = metric.TimeMetric("op")
  timer.start()
  assert list(timer.stop()) == ["0_basics/time_s"]
  with pytest.raises(ValueError, match="unknown metric key"):
    with metrics.measure("op", ["no_such_metric"]):
      pass


def test_generate_sweeps_lists_keeps_valid_points_and_names_them_stably():
  benchmarks = _generator(opt1=[1, 2], opt2=["a", "b"]).generate()
  assert [(b.options.opt1, b.options.opt2) for b in benchmarks] == [(1, "a"), (1, "b"), (2, "b")]
  names = [b.name for b in benchmarks]
  assert len(set(names)) == 3 and all(n.startswith("PairGenerator_") and len(n) == len("PairGenerator_") + 12 for n in names)
  assert [b.name for b in _generator(opt1=[1, 2], opt2=["a", "b"]).generate()] == names
  assert _generator(opt1=[]).generate() == []


def test_a_generator_built_by_hand_checks_its_arguments_as_orbax_does():
  class Undecorated(core.BenchmarksGenerator):
    def test_fn(self, context):
      return core.TestResult(metrics=metric.Metrics())

  with pytest.raises(TypeError, match="must be decorated with @benchmark_options"):
    Undecorated(checkpoint_configs=[], options=PairOptions())
  with pytest.raises(TypeError, match="Expected options of type PairOptions, but got BenchmarkOptions"):
    PairGenerator(checkpoint_configs=[], options=core.BenchmarkOptions())
  PairGenerator()  # ckptbench's runner builds it with no arguments


def test_meshes_that_do_not_fit_are_skipped_or_refused():
  fits = configs.MeshConfig(mesh_axes=["x"], ici_parallelism={"x": jax.device_count()})
  too_big = configs.MeshConfig(mesh_axes=["x"], ici_parallelism={"x": 64})
  generator = PairGenerator(checkpoint_configs=[configs.CheckpointConfig(spec={})], options=PairOptions(),
                            mesh_configs=[too_big, fits])  # fmt: skip
  (benchmark,) = generator.generate()
  assert benchmark.mesh.shape == {"x": jax.device_count()}
  with pytest.raises(ValueError, match="Failed to create mesh with config"):
    generator.generate(skip_incompatible_mesh_configs=False)
  generator._mesh_configs = [too_big]
  with pytest.raises(ValueError, match="No compatible meshes found"):
    generator.generate()


def test_a_benchmark_runs_once_with_generated_data_and_keeps_an_error(tmp_path):
  config = configs.CheckpointConfig(spec={"w": {"dtype": "float32", "shape": [8, 4]}})
  seen = {}

  def test_fn(context):
    seen["pytree"] = context.pytree
    return core.TestResult(metrics=metric.Metrics())

  benchmark = core.Benchmark(test_fn=test_fn, checkpoint_config=config, options=PairOptions(), name="b",
                             output_dir=str(tmp_path))  # fmt: skip
  result = benchmark.run(repeat_index=0)
  assert result.error is None and result.path == epath.Path(tmp_path) / "b" / "repeat_0"
  assert result.metrics.name == "b_repeat_0" and seen["pytree"]["w"].shape == (8, 4)

  def failing(context):
    raise OSError("disk full")

  failed = core.Benchmark(test_fn=failing, checkpoint_config=config, options=PairOptions(), name="f",
                          output_dir=str(tmp_path)).run()  # fmt: skip
  assert isinstance(failed.error, OSError) and not failed.is_successful()


def test_a_test_suite_runs_through_ckptbench_engine(tmp_path):
  if dist.is_initialized():  # left by another test in this process
    dist.destroy_process_group()
  suite = core.TestSuite(name="report_suite", benchmarks_generators=[_generator(opt1=[1, 2], opt2=["a", "b"])],
                         output_dir=str(tmp_path), num_repeats=2)  # fmt: skip
  results = suite.run()
  assert not dist.is_initialized()  # the group set up for the runs is torn down, as Orbax's runner does
  assert len(results) == 6  # 3 valid points x 2 repeats
  failed = [r for r in results if r.error is not None]
  assert len(failed) == 2 and all(isinstance(r.error, ValueError) and "opt1=2, opt2=b failed" in str(r.error) for r in failed)
  ok = [r for r in results if r.error is None]
  assert all(r.metrics.results["fake_metric::0_basics/own_s"] == (0.1, "s") and "save::0_basics/time_s" in r.metrics.results
             for r in ok)  # fmt: skip
  records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
  timed = timed_records(tmp_path)
  assert len(timed) == 6 and {r["suite"] for r in records} == {"report_suite"}
  assert len(records) > 6  # and the engine's memory pass, where host memory comes from
  assert all(r["metrics"]["fake_metric_0_basics/own_s"]["value"] == 0.1 for r in timed if r["error"] is None)


def test_a_test_suite_warns_of_a_generator_with_no_valid_point(monkeypatch):
  warnings = []
  monkeypatch.setattr(absl_logging, "warning", lambda text, *args: warnings.append(text % args if args else text))
  assert core.TestSuite(name="empty", benchmarks_generators=[_generator(opt1=[])]).run() == []
  assert warnings == ["Generator PairGenerator produced no benchmarks.", "No benchmarks were run for this suite."]


def test_a_test_suite_runs_a_generator_defined_inside_a_function(tmp_path):
  @core.benchmark_options(PairOptions)
  class Local(core.BenchmarksGenerator):
    def test_fn(self, context):
      return core.TestResult(metrics=metric.Metrics())

  local = Local(checkpoint_configs=[configs.CheckpointConfig(spec={})], options=PairOptions())
  (result,) = core.TestSuite(name="local", benchmarks_generators=[local]).run()  # no output_dir: a temporary one
  assert result.error is None


def test_generators_with_different_configs_run_as_one_engine_suite_each(tmp_path):
  @core.benchmark_options(PairOptions)
  class Sized(core.BenchmarksGenerator):
    def test_fn(self, context):
      metrics = metric.Metrics()
      metrics.results["data::9_other/leaves"] = (len(context.pytree), "count")
      return core.TestResult(metrics=metrics)

  def generator(spec):
    return Sized(checkpoint_configs=[configs.CheckpointConfig(spec=spec)], options=PairOptions())

  small = {"w": {"dtype": "float32", "shape": [4]}}
  large = {"w": {"dtype": "float32", "shape": [8]}, "b": {"dtype": "float32", "shape": [2]}}
  results = core.TestSuite(name="two", benchmarks_generators=[generator(small), generator(large)],
                           output_dir=str(tmp_path)).run()  # fmt: skip
  assert [r.metrics.results["data::9_other/leaves"][0] for r in results] == [1, 2]
  assert (tmp_path / "group_0" / "results.jsonl").is_file() and (tmp_path / "group_1" / "results.jsonl").is_file()


def test_v1_benchmark_saves_and_loads_with_the_options_context(tmp_path):
  generator = v1_benchmark.Benchmark(checkpoint_configs=[configs.CheckpointConfig(spec={})],
                                     options=v1_benchmark.BenchmarkOptions(use_ocdbt=[False, True]))  # fmt: skip
  assert [b.options.use_ocdbt for b in generator.generate()] == [False, True]
  pytree = {"a": jax.numpy.arange(10), "b": {"c": jax.numpy.ones((5, 5))}}
  context = core.TestContext(pytree=pytree, path=epath.Path(tmp_path),
                             options=v1_benchmark.BenchmarkOptions(use_ocdbt=False, async_enabled=False))  # fmt: skip
  result = generator.test_fn(context)
  assert {"save::0_basics/time_s", "load::0_basics/time_s"} <= set(result.metrics.results)
  assert (tmp_path / "ckpt").is_dir() and context.pytree == {"a": None, "b": {"c": None}}  # cleared


def test_a_generated_checkpoint_is_saved_and_loads_back_the_same(tmp_path):
  config = configs.CheckpointConfig(spec={"w": {"dtype": "float32", "shape": [32, 32]}, "b": {"dtype": "int32", "shape": [4]}},
                                    random_seed=3)  # fmt: skip
  checkpoint_generation.generate_and_save_checkpoint(config, tmp_path / "ckpt")
  loaded = checkpoint_generation.load_checkpoint(configs.CheckpointConfig(path=str(tmp_path / "ckpt")))
  pytree_utils.assert_pytree_equal(checkpoint_generation.generate_checkpoint(config), loaded)
  with pytest.raises(ValueError, match="must have a `spec`"):
    checkpoint_generation.generate_checkpoint(configs.CheckpointConfig(path=str(tmp_path)))
  with pytest.raises(ckptbench.ConfigError, match=r"checkpoint_config.spec.w.dtype: unknown dtype 'flot32'"):
    checkpoint_generation.generate_checkpoint(configs.CheckpointConfig(spec={"w": {"dtype": "flot32", "shape": [2]}}))


@pytest.mark.parametrize(
    "expected, actual, message",
    [
        (1, "1", "Type mismatch at"),
        (np.array([1], np.int32), np.array([1], np.int64), "Dtype mismatch at"),
        (np.arange(4), np.arange(5), "Shape mismatch at"),
        ({"x": np.arange(16)}, {"x": np.arange(16) + 1}, r"Error at \['x'\]"),
        (1, 2, "Value mismatch at"),
    ],
)
def test_assert_pytree_equal_raises_orbaxs_messages(expected, actual, message):
  with pytest.raises(AssertionError, match=message):
    pytree_utils.assert_pytree_equal(expected, actual)
