"""compat.orbax's config_parsing: Orbax's suite YAML into a TestSuite of ckptbench's configs, with Orbax's errors."""

from __future__ import annotations

import textwrap

import pytest
import yaml

import ckptbench
from ckptbench.compat.orbax.core import config_parsing, core

_GENERATORS = """
    import dataclasses
    from ckptbench.compat.orbax.core import core, metric

    @dataclasses.dataclass(frozen=True)
    class Options(core.BenchmarkOptions):
      param1: int | list[int] = 1
      param2: str = "a"

    @core.benchmark_options(Options)
    class Decorated(core.BenchmarksGenerator):
      def test_fn(self, context):
        return core.TestResult(metrics=metric.Metrics())

    class Undecorated(core.BenchmarksGenerator):
      def test_fn(self, context):
        return core.TestResult(metrics=metric.Metrics())

    class NotAGenerator:
      pass
"""


@pytest.fixture
def suite_file(tmp_path, monkeypatch):
  """Writes a suite YAML (and an importable generator module `cp_gens`); returns a writer of YAML text."""
  (tmp_path / "cp_gens.py").write_text(textwrap.dedent(_GENERATORS))
  monkeypatch.syspath_prepend(str(tmp_path))

  def write(text: str) -> str:
    path = tmp_path / "suite.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)

  return write


def test_a_suite_becomes_generators_with_ckptbench_configs_options_and_the_suite_settings(suite_file):
  path = suite_file("""
      suite_name: Full
      num_repeats: 3
      baseline_capture_path: /tmp/caps
      mesh_configs:
        - {mesh_axes: [data, model], ici_parallelism: {data: 2, model: 4}}
        - {mesh_axes: [data, model], ici_parallelism: {data: 8}}
      benchmarks:
        - {generator: cp_gens.Decorated, options: {param1: 10, param2: test}}
        - {generator: cp_gens.Decorated, options: {param1: [20, 30]}}
  """)
  suite = config_parsing.create_test_suite_from_config(path)
  assert isinstance(suite, core.TestSuite)
  assert (suite._name, suite._num_repeats) == ("Full", 3)
  assert (suite._baseline_capture_path, suite._baseline_path) == ("/tmp/caps", None)
  first, second = suite._benchmarks_generators
  assert first._options == first.options_class(param1=10, param2="test")
  assert second._options.param1 == [20, 30]  # a list sweeps, as in ckptbench's suites
  assert first._checkpoint_configs == [ckptbench.CheckpointConfig()]  # none named: one default config
  assert first._mesh_configs == [
      ckptbench.MeshConfig(mesh_axes=["data", "model"], ici_parallelism={"data": 2, "model": 4}),
      ckptbench.MeshConfig(mesh_axes=["data", "model"], ici_parallelism={"data": 8}),
  ]
  configs, meshes = config_parsing.parse_config(path)
  assert configs == [ckptbench.CheckpointConfig()] and meshes == first._mesh_configs


def test_checkpoint_configs_are_ckptbench_models_which_validate_them(suite_file):
  path = suite_file("""
      suite_name: s
      checkpoint_configs:
        - {spec: {a: "numpy.ndarray:float32:10"}}
        - {spec: {b: "numpy.ndarray:float32:20"}}
      benchmarks: [{generator: cp_gens.Decorated, options: {}}]
  """)
  suite = config_parsing.create_test_suite_from_config(path)
  assert suite._benchmarks_generators[0]._checkpoint_configs == [
      ckptbench.CheckpointConfig(spec={"a": "numpy.ndarray:float32:10"}),
      ckptbench.CheckpointConfig(spec={"b": "numpy.ndarray:float32:20"}),
  ]
  bad = suite_file("""
      suite_name: s
      checkpoint_config: {spec: {}, no_such_key: 1}
      benchmarks: [{generator: cp_gens.Decorated, options: {}}]
  """)
  with pytest.raises(ValueError, match=r"^Invalid 'checkpoint_config' block: no_such_key: Extra inputs are not permitted$"):
    config_parsing.create_test_suite_from_config(bad)


@pytest.mark.parametrize(
    "config, message",
    [
        ({"benchmarks": []}, "Missing required key in YAML config: suite_name"),
        ({"suite_name": "s"}, "Missing required key in YAML config: benchmarks"),
        ({"suite_name": "s", "benchmarks": {}}, "'benchmarks' must be a list"),
        ({"suite_name": "s", "benchmarks": ["x"]}, "Each item in 'benchmarks' must be a dict, got <class 'str'> at index 0"),
        ({"suite_name": "s", "benchmarks": [{"options": {}}]}, "Missing 'generator' in benchmarks entry at index 0"),
        ({"suite_name": "s", "benchmarks": [{"generator": "g"}]}, "Missing 'options' in benchmarks entry at index 0"),
        ({"suite_name": "s", "benchmarks": [{"generator": "g", "options": "x"}]}, "'options' must be a dict"),
        (
            {"suite_name": "s", "benchmarks": [{"generator": "g", "options": {
                "capture_digests_path": "/d", "reference_digests_path": "/d"}}]},
            "mutually exclusive in benchmarks entry at index 0",
        ),
        (
            {"suite_name": "s", "simdevice": {"device_type": "v6e", "topology": [2, 2, 1]},
             "benchmarks": [{"generator": "g", "options": {"capture_digests_path": "/d"}}]},
            "Correctness digests cannot be captured or compared on SimDevice",
        ),
    ],
)  # fmt: skip
def test_a_config_missing_what_a_suite_needs_is_orbax_value_error(config, message):
  with pytest.raises(ValueError, match=message):
    config_parsing._validate_config(config)


@pytest.mark.parametrize(
    "generator, error, message",
    [
        ("cp_gens.NoSuchClass", ImportError, "Failed to import class cp_gens.NoSuchClass"),
        ("no_such_module.Gen", ImportError, "Failed to import class no_such_module.Gen"),
        ("cp_gens.NotAGenerator", TypeError, "Class cp_gens.NotAGenerator is not a subclass of BenchmarksGenerator"),
        ("cp_gens.Undecorated", TypeError, "Generator class cp_gens.Undecorated is not decorated with @benchmark_options"),
    ],
)
def test_a_generator_that_cannot_be_used_is_named(suite_file, generator, error, message):
  path = suite_file(f"""
      suite_name: s
      benchmarks: [{{generator: {generator}, options: {{}}}}]
  """)
  with pytest.raises(error, match=message):
    config_parsing.create_test_suite_from_config(path)


def test_options_the_options_class_lacks_are_a_type_error_and_a_bad_yaml_a_yaml_error(suite_file):
  path = suite_file("""
      suite_name: s
      benchmarks: [{generator: cp_gens.Decorated, options: {bad_param: 1}}]
  """)
  with pytest.raises(TypeError, match="bad_param"):
    config_parsing.create_test_suite_from_config(path)
  with pytest.raises(yaml.YAMLError):
    config_parsing.load_config(suite_file("key: value: error\n"))
  with pytest.raises(FileNotFoundError):
    config_parsing.load_config(path + ".absent")


def test_a_simdevice_block_is_ckptbench_model_and_a_suite_with_one_is_left_to_ckptbench_run(suite_file):
  path = suite_file("""
      suite_name: s
      simdevice: {device_type: v6e, topology: [2, 2, 1], num_processes: 2}
      benchmarks: [{generator: cp_gens.Decorated, options: {}}]
  """)
  assert config_parsing.parse_simdevice_config(path) == ckptbench.SimDeviceConfig(
      device_type="v6e", topology=(2, 2, 1), num_processes=2)
  with pytest.raises(ValueError, match=r"has a 'simdevice' block: run it with `ckptbench run"):
    config_parsing.create_test_suite_from_config(path)
  with pytest.raises(ValueError, match=r"^Invalid 'simdevice' block: topology: Value error, topology is three chip counts \[x, y, z\], got \[2\]$"):
    config_parsing._validate_config({"suite_name": "s", "benchmarks": [], "simdevice": {"device_type": "v6e", "topology": [2]}})
  with pytest.raises(ValueError, match="'simdevice' must be a dict"):
    config_parsing._validate_config({"suite_name": "s", "benchmarks": [], "simdevice": "v6e"})
