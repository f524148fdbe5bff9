"""Suite validation: every problem is one message naming the file, line and key."""

from __future__ import annotations

import textwrap

import pytest

from ckptbench.config import load_suite_text
from ckptbench.errors import ConfigError

GOOD = """\
suite_name: s
num_repeats: 2
checkpoint_config:
  spec:
    params: {dtype: float32, shape: [16, 8], sharding: [fsdp]}
    nested: {step: int, name: str, bias: {dtype: bfloat16, shape: [8]}}
mesh_config:
  mesh_axes: [fsdp]
  ici_parallelism: {fsdp: 8}
benchmarks:
  - generator: save_restore
    options:
      use_ocdbt: [true, false]
      use_compression: false
"""


def load(text: str):
  return load_suite_text(textwrap.dedent(text), "suite.yaml")


def error_of(text: str) -> ConfigError:
  with pytest.raises(ConfigError) as info:
    load(text)
  return info.value


def test_good_suite_parses_into_frozen_objects():
  suite = load(GOOD)
  assert suite.name == "s"
  assert suite.config.num_repeats == 2
  entry = suite.entries[0]
  assert entry.generator_path == "ckptbench.benchmarks.save_restore.SaveRestoreBenchmark"
  assert entry.options.axes == {"use_ocdbt": [True, False]}
  assert entry.options.fixed == {"use_compression": False}
  spec = suite.checkpoints[0].spec
  assert spec["params"].shape == (16, 8) and spec["nested"]["step"].kind == "int"
  assert spec["nested"]["bias"].dtype == "bfloat16"


@pytest.mark.parametrize(
    "old, new, line, key, message",
    [
        ("num_repeats: 2", "num_repeats: 2\nnum_repeat: 3", 3, "num_repeat", "did you mean 'num_repeats'"),
        ("num_repeats: 2", "num_repeats: two", 2, "num_repeats", "valid integer"),
        ("num_repeats: 2", "num_repeats: 0", 2, "num_repeats", "greater than 0"),
        ("dtype: float32", "dtype: float23", 5, "checkpoint_config.spec.params.dtype", "did you mean 'float32'"),
        ("sharding: [fsdp]}", "sharding: [data]}", 5, "checkpoint_config.spec.params.sharding", "not an axis of mesh fsdp8"),
        ("shape: [16, 8]", "shape: [15, 8]", 5, "checkpoint_config.spec.params.shape", "not divisible"),
        ("shape: [16, 8]", "shape: [16, -8]", 5, "checkpoint_config.spec.params.shape", "list of positive integers"),
        ("ici_parallelism: {fsdp: 8}", "ici_parallelism: {fsdp: 8, tp: 1}", 9, "mesh_config.ici_parallelism", "not in mesh_axes"),
        ("ici_parallelism: {fsdp: 8}", "ici_parallelism: {fsdp: 0}", 9, "mesh_config.ici_parallelism.fsdp", "greater than 0"),
        ("generator: save_restore", "generator: save_restor", 11, "benchmarks[0].generator", "did you mean 'save_restore'"),
        ("generator: save_restore", "generator: no_such_pkg.Bench", 11, "benchmarks[0].generator", "cannot import module 'no_such_pkg'"),
        ("generator: save_restore", "generator: sample_benchmarks.NotABenchmark", 11, "benchmarks[0].generator", "not a subclass of ckptbench.BenchmarksGenerator"),
        ("generator: save_restore", "generator: sample_benchmarks.not_a_class", 11, "benchmarks[0].generator", "is a int, not a class"),
        ("use_compression: false", "use_compresion: false", 14, "benchmarks[0].options.use_compresion", "did you mean 'use_compression'"),
        ("use_compression: false", "use_compression: 'no'", 14, "benchmarks[0].options.use_compression", "expects"),
        ("use_ocdbt: [true, false]", "use_ocdbt: []", 13, "benchmarks[0].options.use_ocdbt", "empty list"),
        ("use_ocdbt: [true, false]", "use_ocdbt: [true, 3]", 13, "benchmarks[0].options.use_ocdbt[1]", "expects bool"),
        ("num_repeats: 2", "num_repeats: 2\nreference: {use_ocdbt: maybe}", 3, "reference.use_ocdbt", "not among the swept values"),
        ("num_repeats: 2", "num_repeats: 2\nreference: {use_zarr3: true}", 3, "reference.use_zarr3", "not a swept option"),
        ("num_repeats: 2", "num_repeats: 2\nfloor: {use_ocdbt: maybe}", 3, "floor.use_ocdbt", "not among the swept values"),
        ("num_repeats: 2", "num_repeats: 2\nfloor: {use_zarr3: true}", 3, "floor.use_zarr3", "floor picks a variant"),
    ],
)
def test_each_problem_is_located(old, new, line, key, message):
  assert old in GOOD
  err = error_of(GOOD.replace(old, new))
  assert (err.file, err.line, err.key) == ("suite.yaml", line, key), str(err)
  assert message in err.message, str(err)
  assert str(err).startswith(f"suite.yaml:{line}: key '{key}': ")


def test_one_warmup_by_default_when_there_are_repeats_to_compare():
  cfg = load(GOOD).config
  assert cfg.warmups(cfg.repeats(compares=True)) == 1
  assert cfg.warmups(1) == 0 and cfg.warmups("auto") == 1
  assert load(GOOD.replace("num_repeats: 2", "num_repeats: 2\nnum_warmups: 0")).config.warmups(2) == 0


def test_num_repeats_is_a_count_or_auto_and_unset_is_auto_for_comparisons():
  auto = load(GOOD.replace("num_repeats: 2", "num_repeats: auto\ntime_budget_s: 30"))
  assert auto.config.num_repeats == "auto" and auto.config.time_budget_s == 30
  assert auto.config.interleaved("auto")
  unset = load(GOOD.replace("num_repeats: 2\n", "")).config
  assert unset.repeats(compares=True) == "auto" and unset.repeats(compares=False) == 1
  err = error_of(GOOD.replace("num_repeats: 2", "num_repeats: sometimes"))
  assert err.key == "num_repeats" and "(and" not in str(err)  # one problem, not one per alternative
  assert load(GOOD + "reference: {use_ocdbt: false}").config.reference == {"use_ocdbt": False}


def test_spec_and_path_together():
  err = error_of(GOOD.replace("checkpoint_config:\n", "checkpoint_config:\n  path: /tmp\n"))
  assert "only one of spec, path and preset" in err.message and err.key == "checkpoint_config"


def test_missing_required_key_and_empty_file():
  err = error_of("suite_name: x\n")
  assert "'benchmarks' is missing" in err.message
  with pytest.raises(ConfigError, match="empty"):
    load_suite_text("", "suite.yaml")
  with pytest.raises(ConfigError, match=r"suite.yaml:2: invalid YAML"):
    load_suite_text("suite_name: [unclosed\n", "suite.yaml")
  with pytest.raises(ConfigError, match=r"suite.yaml:2: invalid YAML: the character U\+0001 is not allowed"):
    load_suite_text("# a suite\nsuite_name: a\x01b\n", "suite.yaml")


def test_yaml_tags_cannot_build_objects():
  err = error_of("suite_name: !!python/object/apply:os.system ['echo pwned']\nbenchmarks: []\n")
  assert "YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed" in err.message
  err = error_of("suite_name: !!python/name:os.system x\nbenchmarks: []\n")
  assert "invalid YAML" in err.message and "constructor" in err.message


def test_orbax_in_tree_paths_resolve_to_builtins():
  suite = load(GOOD.replace("save_restore", "orbax.checkpoint._src.testing.benchmarks.v1.benchmark.Benchmark"))
  assert suite.entries[0].generator_cls.__name__ == "SaveRestoreBenchmark"
  err = error_of(GOOD.replace("save_restore", "orbax.checkpoint._src.testing.benchmarks.lustre_benchmark.X"))
  assert "no equivalent" in err.message


def test_list_typed_option_takes_a_list_as_one_value():
  import dataclasses

  import ckptbench
  from ckptbench.config._options import check_options

  @dataclasses.dataclass(frozen=True)
  class Opts(ckptbench.BenchmarkOptions):
    sizes: list[int] = dataclasses.field(default_factory=list)

  def fail(msg, path):
    return ValueError(msg)

  assert check_options(Opts, {"sizes": [1, 2]}, fail).fixed == {"sizes": [1, 2]}
  assert check_options(Opts, {"sizes": [[1], [2, 3]]}, fail).axes == {"sizes": [[1], [2, 3]]}


def test_the_itemsize_table_is_numpys_for_every_schema_dtype():
  # plan and the memory and disk checks size data from the table, without numpy; the data is built with numpy.
  from ckptbench.config import dtype_itemsize, numpy_dtype
  from ckptbench.config._spec import DTYPES

  assert len(DTYPES) == 16
  assert {name: dtype_itemsize(name) for name in DTYPES} == {name: numpy_dtype(name).itemsize for name in DTYPES}
