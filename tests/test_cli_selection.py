"""`-k PATTERN` and `--set KEY=VALUE` on the command line, end to end and at load time."""

from __future__ import annotations

import json

import pytest

import ckptbench
from conftest import run_cli, timed_records
from ckptbench.config import load_suite
from ckptbench.config._overrides import parse_key_path
from ckptbench.errors import CkptbenchError, ConfigError

SUITE = """\
suite_name: select
num_repeats: 1
checkpoint_config: {spec: {params: {dtype: float32, shape: [32, 16], sharding: [fsdp]}}}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 2}}
benchmarks:
  - generator: save_restore
    options:
      use_ocdbt: [true, false]
      async_enabled: [true, false]
"""


@pytest.fixture
def suite(tmp_path):
  path = tmp_path / "s.yaml"
  path.write_text(SUITE)
  return path


def test_key_paths_read_like_the_errors_print_them():
  assert parse_key_path("benchmarks[0].options.use_ocdbt") == ("benchmarks", 0, "options", "use_ocdbt")
  assert parse_key_path("num_repeats") == ("num_repeats",)
  for bad in ("[0].x", "a..b", "a[x]", ".a"):
    with pytest.raises(ValueError):
      parse_key_path(bad)


def test_overrides_change_the_suite_and_are_validated_like_the_file(suite):
  loaded = load_suite(suite, ["num_repeats=5", "benchmarks[0].options.use_ocdbt=[true]", "num_warmups=2"])
  assert loaded.config.num_repeats == 5 and loaded.config.num_warmups == 2
  assert loaded.entries[0].options.axes == {"use_ocdbt": [True], "async_enabled": [True, False]}
  assert loaded.raw["num_repeats"] == 5  # the manifest records the suite that ran

  with pytest.raises(ConfigError) as bad_value:
    load_suite(suite, ["benchmarks[0].options.use_ocdbt=[ture]"])
  assert str(bad_value.value).startswith(
      "--set benchmarks[0].options.use_ocdbt=[ture]: key 'benchmarks[0].options.use_ocdbt[0]': ")
  with pytest.raises(ConfigError, match=r"^--set num_repeats=0: key 'num_repeats': .*greater than 0"):
    load_suite(suite, ["num_repeats=0"])
  with pytest.raises(ConfigError, match=r"^--set num_repeat=3: key 'num_repeat': unknown key .*num_repeats"):
    load_suite(suite, ["num_repeat=3"])
  with pytest.raises(CkptbenchError, match=r"^--set benchmarks\[3\].options.x=1: the suite has no benchmarks\[3\]"):
    load_suite(suite, ["benchmarks[3].options.x=1"])
  with pytest.raises(CkptbenchError, match="expected KEY=VALUE"):
    load_suite(suite, ["num_repeats"])
  with pytest.raises(ConfigError, match=r"^--set benchmarks\[0\].generator=save_restor: .*did you mean"):
    load_suite(suite, ["benchmarks[0].generator=save_restor"])
  # An error in the file still names its line, overrides or not.
  suite.write_text(SUITE.replace("fsdp: 2}}", "fsdp: 0}}"))
  with pytest.raises(ConfigError, match=r"s.yaml:4: key 'mesh_config.ici_parallelism.fsdp'"):
    load_suite(suite, ["num_repeats=2"])


def test_overrides_apply_to_a_suite_text_and_a_loaded_suite_refuses_them(tmp_path):
  loaded = ckptbench.load_suite_text(SUITE, overrides=["num_repeats=7"])
  assert loaded.config.num_repeats == 7
  # `run` applies settings.overrides to a file it loads; a Suite given whole would silently drop them.
  settings = ckptbench.RunSettings(output_dir=tmp_path / "out", overrides=("num_repeats=3",))
  with pytest.raises(CkptbenchError, match=r"overrides \['num_repeats=3'\] apply to a suite file"):
    ckptbench.run(loaded, settings)
  assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_k_runs_only_matching_benchmarks_and_set_overrides_repeats(suite, tmp_path):
  out = tmp_path / "out"
  done = run_cli("run", str(suite), "-o", str(out), "-k", "use_ocdbt=False", "--set", "num_repeats=2",
                 "--set", "num_warmups=0", "--no-progress", "--no-probe", "--no-views")
  assert done.returncode == 0, done.stderr
  records = timed_records(out)
  assert {r["benchmark"] for r in records} == {
      "SaveRestoreBenchmark(use_ocdbt=False, async_enabled=True)",
      "SaveRestoreBenchmark(use_ocdbt=False, async_enabled=False)",
  }
  assert len(records) == 4
  manifest = json.loads((out / "manifest.json").read_text())
  assert manifest["config"]["num_repeats"] == 2 and "--set" in manifest["argv"]


@pytest.mark.slow
def test_k_in_plan_with_a_glob_and_a_pattern_that_matches_nothing(suite):
  plan = run_cli("plan", str(suite), "-k", "*async_enabled=False)")
  assert plan.returncode == 0, plan.stderr
  rows = "\n".join(line for line in plan.stdout.splitlines()
                   if "largest run's checkpoint" not in line and not line.startswith("reference: "))  # the table's rows
  assert rows.count("SaveRestoreBenchmark(") == 2 and "async_enabled=True" not in plan.stdout
  none = run_cli("plan", str(suite), "-k", "use_zarr3")
  assert none.returncode == 2 and "-k use_zarr3 matches no benchmark; the suite has:" in none.stderr
  bad = run_cli("run", str(suite), "-o", "unused", "--set", "num_repeats=-1")
  assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
  assert "--set num_repeats=-1: key 'num_repeats'" in bad.stderr
