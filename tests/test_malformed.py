"""The malformed-suite corpus: each file gets one exact, located message, exit 2, nothing written.

Every case goes through the real CLI entry point (`ckptbench run FILE -o OUT`), in
process for speed; a few run in a fresh process to check the same holds there.
"""

from __future__ import annotations

import pathlib
import re

import pytest

from ckptbench.cli._main import main
from conftest import run_cli

CORPUS = pathlib.Path(__file__).parent / "malformed"

# file stem -> what follows "ckptbench: error: <file>" on stderr.
EXPECTED = [
    ('bad_dtype', ":4: key 'checkpoint_config.spec.w.dtype': unknown dtype 'flaot32'; did you mean 'float32'?"),
    ('binary', ': is a binary file, not YAML'),
    ('both_mesh_forms', ":3: key 'mesh_configs': give mesh_config or mesh_configs, not both"),
    ('empty', ': the suite file is empty'),
    ('empty_sweep', ":4: key 'benchmarks[0].options.use_ocdbt': an empty list sweeps nothing; give at least one value"),
    ('generator_import_fails', ":3: key 'benchmarks[0].generator': importing module 'broken_generator_module' failed: RuntimeError: this module fails on import"),
    ('generator_missing_class', ":3: key 'benchmarks[0].generator': module 'sample_benchmarks' has no 'FlakyBenchmarks'; did you mean 'FlakyBenchmark'?"),
    ('generator_not_a_benchmarks_generator', ":3: key 'benchmarks[0].generator': 'sample_benchmarks.NotABenchmark' is not a subclass of ckptbench.BenchmarksGenerator"),
    ('generator_not_a_class', ":3: key 'benchmarks[0].generator': 'sample_benchmarks.not_a_class' is a int, not a class"),
    ('generator_not_importable', ":3: key 'benchmarks[0].generator': cannot import module 'no_such_package.benchmarks' (No module named 'no_such_package'); is it installed or on PYTHONPATH?"),
    ('list_in_checkpoint_config', ":4: key 'checkpoint_config.random_seed': Input should be a valid integer, got [0, 1]; a list sweeps values only under benchmarks[].options, give one value here"),
    ('list_where_no_sweep', ":2: key 'num_repeats': Input should be a valid integer, got [1, 3]; a list sweeps values only under benchmarks[].options, give one value here"),
    ('mesh_negative_dcn', ":5: key 'mesh_config.dcn_parallelism.data': Input should be greater than 0, got -1"),
    ('mesh_no_axes', ":3: key 'mesh_config.mesh_axes': Tuple should have at least 1 item after validation, not 0, got []"),
    ('mesh_zero_degree', ":4: key 'mesh_config.ici_parallelism.model': Input should be greater than 0, got 0"),
    ('missing_suite_name', ":1: required key 'suite_name' is missing"),
    ('negative_repeats', ":2: key 'num_repeats': Input should be greater than 0, got -2"),
    ('negative_timeout', ":2: key 'timeout_s': Input should be greater than 0, got -5"),
    ('negative_warmups', ":2: key 'num_warmups': Input should be greater than or equal to 0, got -1"),
    ('no_benchmarks', ":2: key 'benchmarks': List should have at least 1 item after validation, not 0, got []"),
    ('not_divisible', ":5: key 'checkpoint_config.spec.layer.w.shape': dimension 0 of size 6 is not divisible by the 4 devices of axes ['x'] in mesh x4"),
    ('not_utf8', ': is not UTF-8 text (byte 0)'),
    ('only_comment', ': the suite file is empty'),
    ('option_timeout_negative', ":4: key 'benchmarks[0].options.timeout_s': timeout_s must be a positive number of seconds, got -1.0"),
    ('path_is_a_file', ":3: key 'checkpoint_config.path': checkpoint path 'path_is_a_file.yaml' is not an Orbax checkpoint directory (no _CHECKPOINT_METADATA or _METADATA or manifest.ocdbt in it)"),
    ('path_missing', ":3: key 'checkpoint_config.path': checkpoint path 'no_such_checkpoint' does not exist"),
    ('path_not_a_checkpoint', ":3: key 'checkpoint_config.path': checkpoint path '.' is not an Orbax checkpoint directory (no _CHECKPOINT_METADATA or _METADATA or manifest.ocdbt in it)"),
    ('shape_float', ":4: key 'checkpoint_config.spec.w.shape': shape must be a list of positive integers, got [8, 2.5]"),
    ('shape_negative', ":4: key 'checkpoint_config.spec.w.shape': shape must be a list of positive integers, got [8, -1]"),
    ('shape_not_a_list', ":4: key 'checkpoint_config.spec.w.shape': shape must be a list of positive integers, got '8x8'"),
    ('shape_zero', ":4: key 'checkpoint_config.spec.w.shape': shape must be a list of positive integers, got [0]"),
    ('sharding_axis_not_in_mesh', ":4: key 'checkpoint_config.spec.w.sharding': sharding axis 'model' is not an axis of mesh x2 (mesh_axes: ['x'])"),
    ('sharding_config_without_path', ":2: key 'checkpoint_config': sharding_config_path needs path (it gives the shardings of that checkpoint)"),
    ('sharding_longer_than_shape', ":4: key 'checkpoint_config.spec.w': sharding has 2 entries but the shape [8] has only 1 dimensions"),
    ('sharding_without_mesh', ":3: key 'checkpoint_config.spec': the spec shards arrays but the suite has no mesh_config"),
    ('spec_and_path', ":2: key 'checkpoint_config': give only one of spec, path and preset (got spec and path)"),
    ('top_level_list', ':1: a suite is a mapping of keys (suite_name, benchmarks, ...), got list'),
    ('unknown_key_array', ":4: key 'checkpoint_config.spec.w.shardings': unknown key; an array takes dtype, shape and sharding"),
    ('unknown_key_benchmark', ":4: key 'benchmarks[0].option': unknown key 'option'; did you mean 'options'?"),
    ('unknown_key_checkpoint', ":4: key 'checkpoint_config.random_sed': unknown key 'random_sed'; did you mean 'random_seed'?"),
    ('unknown_key_mesh', ":4: key 'mesh_configs[0].ici_paralelism': unknown key 'ici_paralelism'; did you mean 'ici_parallelism'?"),
    ('unknown_key_top', ":2: key 'num_repeat': unknown key 'num_repeat'; did you mean 'num_repeats'?"),
    ('unknown_option', ":6: key 'benchmarks[0].options.use_ocdtb': SaveRestoreOptions has no option 'use_ocdtb'; did you mean 'use_ocdbt'?"),
    ('wrong_type_benchmarks', ":2: key 'benchmarks': Input should be a valid list, got 'save_restore'"),
    ('wrong_type_option', ":4: key 'benchmarks[0].options.chunk_byte_size': option 'chunk_byte_size' expects int | None | Sequence[int | None], got 1.5 (float)"),
    ('wrong_type_option_in_sweep', ":5: key 'benchmarks[0].options.use_compression[1]': option 'use_compression' expects bool, got 'no' (str)"),
    ('wrong_type_suite_name', ":1: key 'suite_name': Input should be a valid string, got 42"),
    ('yaml_bad_indent', ':2: invalid YAML: mapping values are not allowed here'),
    ('yaml_duplicate_key', ":2: key 'suite_name': duplicate key (first given on line 1)"),
    ('yaml_python_tag', ":1: key 'suite_name': YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed: a suite holds plain data only"),
    ('yaml_set_tag', ":2: key 'benchmarks': YAML tag 'tag:yaml.org,2002:set' is not allowed: a suite holds plain data only"),
    ('yaml_tab', ":3: invalid YAML: found character '\\t' that cannot start any token"),
    ('yaml_unclosed_flow', ":2: invalid YAML: expected ',' or ']', but got ':'"),
    ('zero_repeats', ":2: key 'num_repeats': Input should be greater than 0, got 0"),
]  # fmt: skip


def test_the_corpus_is_complete():
  assert sorted(p.stem for p in CORPUS.glob("*.yaml")) == sorted(stem for stem, _ in EXPECTED)
  assert len(EXPECTED) >= 30


@pytest.mark.parametrize("stem, expected", EXPECTED, ids=[stem for stem, _ in EXPECTED])
def test_malformed_suite_is_one_located_line(stem, expected, tmp_path, capsys):
  suite = CORPUS / f"{stem}.yaml"
  out = tmp_path / "out"
  assert main(["run", str(suite), "-o", str(out)]) == 2
  captured = capsys.readouterr()
  assert captured.err == f"ckptbench: error: {suite}{expected}\n"
  assert "Traceback" not in captured.out
  assert not out.exists()


def test_output_directory_that_cannot_be_written(tmp_path, capsys):
  suite = tmp_path / "ok.yaml"
  suite.write_text("suite_name: s\nbenchmarks: [{generator: sample_benchmarks.FlakyBenchmark}]\n")
  a_file = tmp_path / "file"
  a_file.write_text("x")
  assert main(["run", str(suite), "-o", str(a_file / "out")]) == 2
  assert capsys.readouterr().err == (
      f"ckptbench: error: output directory {a_file / 'out'} cannot be written: Not a directory\n"
  )
  assert main(["run", str(suite), "-o", str(a_file)]) == 2
  assert capsys.readouterr().err == (
      f"ckptbench: error: output directory {a_file} exists and is not a directory\n"
  )
  assert a_file.read_text() == "x"


def test_suite_too_big_for_memory_is_refused_before_any_data(tmp_path, capsys):
  suite = tmp_path / "huge.yaml"
  suite.write_text(
      "suite_name: huge\ncheckpoint_config:\n  spec:\n"
      "    w: {dtype: float32, shape: [1048576, 1048576], sharding: [x]}\n"
      "mesh_config: {mesh_axes: [x], ici_parallelism: {x: 8}}\n"
      "benchmarks: [{generator: save_restore}]\n"
  )
  out = tmp_path / "out"
  assert main(["run", str(suite), "-o", str(out)]) == 2
  err = capsys.readouterr().err
  assert re.fullmatch(
      r"ckptbench: error: benchmark SaveRestoreBenchmark needs about 12288\.0 GiB of memory"
      r" \(4096\.0 GiB of local shards on 8 device\(s\) x 3 for the restored copy and save buffers\)"
      r" but the limit is \d+\.\d (GiB|MiB) \((available memory|cgroup memory\.max .*)\); use smaller"
      r" shapes or more processes, or pass --no_memory_check\n",
      err,
  ), err
  assert not out.exists()


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["yaml_tab", "binary", "generator_import_fails"])
def test_in_a_fresh_process_too(stem, tmp_path):
  suite = CORPUS / f"{stem}.yaml"
  out = tmp_path / "out"
  done = run_cli("run", str(suite), "-o", str(out))
  assert done.returncode == 2
  assert done.stderr == f"ckptbench: error: {suite}{dict(EXPECTED)[stem]}\n"
  assert not out.exists()
