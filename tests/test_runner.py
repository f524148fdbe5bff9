"""Running suites in-process: real Orbax saves on 8 simulated CPU devices."""

from __future__ import annotations

import json
import textwrap

import jax
import numpy as np
import pytest

import ckptbench
from ckptbench.config import load_suite_text
from ckptbench.engine.loop._runner import run_suite
from ckptbench.engine._settings import RunSettings
from ckptbench.data import build_mesh, build_pytree
from ckptbench.config import MeshConfig

pytestmark = pytest.mark.host_memory("inline", reason=(
    "these tests check the runner's handling of results, failures and warm-ups, once per run; the "
    "default memory pass and its records are tests/test_record_kinds.py's and "
    "tests/test_memory_pass.py's"
))

SPEC = """\
checkpoint_config:
  spec:
    params: {dtype: bfloat16, shape: [64, 32], sharding: [fsdp]}
    opt: {mu: {dtype: float32, shape: [32], sharding: [fsdp]}, step: int, tag: str}
mesh_config:
  mesh_axes: [fsdp]
  ici_parallelism: {fsdp: 8}
"""


def run(tmp_path, body: str, **settings):
  suite = load_suite_text("suite_name: t\n" + SPEC + textwrap.dedent(body), str(tmp_path / "s.yaml"))
  return run_suite(suite, RunSettings(output_dir=tmp_path / "out", show_progress=False, **settings))


def test_save_restore_sweep_records_every_run(tmp_path):
  outcome = run(tmp_path, """\
      num_repeats: 2
      num_warmups: 0
      benchmarks:
        - generator: save_restore
          options: {use_ocdbt: [true, false], async_enabled: [true, false]}
      """)
  assert outcome.exit_code == 0
  lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
  records = ckptbench.timed_runs(ckptbench.RunRecord.from_json(json.loads(line)) for line in lines)
  assert len(records) == 8
  for r in records:
    assert r.error is None
    assert r.metrics["save_0_basics/time_s"].unit == "s"
    assert r.metrics["load_0_basics/time_s"].value > 0
    if r.options["async_enabled"]:
      assert r.value("save_blocking_0_basics/time_s") <= r.value("save_0_basics/time_s")
      assert "save_background_0_basics/time_s" in r.metrics
  summary = json.loads((tmp_path / "out" / "summary.json").read_text())
  assert [b["runs"] for b in summary["benchmarks"]] == [2, 2, 2, 2]
  stats = summary["benchmarks"][0]["metrics"]["save_0_basics/time_s"]
  assert stats["n"] == 2 and stats["min"] <= stats["median"] <= stats["max"]
  manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
  assert manifest["device_count"] == 8 and manifest["versions"]["orbax-checkpoint"] == "0.12.8"
  assert manifest["ended_at"] is not None


def test_guide_example_with_string_leaves_fails_cleanly(tmp_path):
  outcome = run(tmp_path, """\
      num_repeats: 1
      benchmarks:
        - generator: sample_benchmarks.SaveRestoreBenchmark
          options: {use_ocdbt: [true, false]}
      """)
  # The guide's abstract tree maps every leaf through to_shape_dtype_struct, which
  # Orbax rejects for string leaves: that failure is recorded, not a crash.
  assert outcome.exit_code == 1
  assert {r.error.type for r in outcome.records} == {"ValueError"}


def test_guide_example_class_runs_unchanged_on_arrays(tmp_path):
  suite = load_suite_text(textwrap.dedent("""\
      suite_name: guide
      num_repeats: 1
      checkpoint_config:
        spec: {params: {dtype: float32, shape: [64, 16], sharding: [data]}}
      mesh_config: {mesh_axes: [data], ici_parallelism: {data: 8}}
      benchmarks:
        - generator: sample_benchmarks.SaveRestoreBenchmark
          options: {use_ocdbt: [true, false]}
      """), str(tmp_path / "s.yaml"))
  outcome = run_suite(suite, RunSettings(output_dir=tmp_path / "out", show_progress=False))
  assert outcome.exit_code == 0
  assert all("load_0_basics/time_s" in r.metrics for r in ckptbench.timed_runs(outcome.records))


def test_a_failing_benchmark_keeps_its_metrics_and_the_others_run(tmp_path):
  outcome = run(tmp_path, """\
      num_repeats: 2
      num_warmups: 0
      benchmarks:
        - generator: sample_benchmarks.FlakyBenchmark
          options: {fail: [true, false], sleep_s: 0.01}
      """)
  assert outcome.exit_code == 1
  failed = [r for r in ckptbench.timed_runs(outcome.records) if r.failed]
  passed = [r for r in ckptbench.timed_runs(outcome.records) if not r.failed]
  assert len(failed) == 2 and len(passed) == 2
  assert failed[0].error.type == "RuntimeError"
  assert "planted failure" in failed[0].error.message
  assert "Traceback" in failed[0].error.traceback
  assert failed[0].value("work_0_basics/time_s") >= 0.01
  summary = outcome.summary.benchmarks
  assert [(b.runs, b.failed) for b in summary] == [(2, 2), (2, 0)]


def test_failing_data_generation_is_recorded_not_a_crash(tmp_path):
  bogus = tmp_path / "not_a_checkpoint"
  bogus.mkdir()
  (bogus / "_CHECKPOINT_METADATA").write_text("x")  # looks like a checkpoint, does not load
  suite = load_suite_text(textwrap.dedent(f"""\
      suite_name: t
      checkpoint_config: {{path: {bogus}}}
      benchmarks: [{{generator: save_restore}}]
      """), str(tmp_path / "s.yaml"))
  outcome = run_suite(suite, RunSettings(output_dir=tmp_path / "out", show_progress=False))
  assert outcome.exit_code == 1
  assert outcome.records[0].error.message


def test_remove_repeated_dir_and_existing_checkpoint_path(tmp_path):
  outcome = run(tmp_path, """\
      benchmarks: [{generator: save_restore, options: {async_enabled: false}}]
      """, remove_repeated_dir=True)
  assert outcome.exit_code == 0
  assert not any((tmp_path / "out").glob("*/repeat_0"))


def test_synthetic_data_is_deterministic_and_sharded():
  from ckptbench.config import load_suite_text as load

  suite = load("suite_name: d\n" + SPEC + "benchmarks: [{generator: save_restore}]\n", "d.yaml")
  mesh = build_mesh(suite.meshes[0])
  a = build_pytree(suite.checkpoints[0].spec, mesh, seed=1)
  b = build_pytree(suite.checkpoints[0].spec, mesh, seed=1)
  c = build_pytree(suite.checkpoints[0].spec, mesh, seed=2)
  assert ckptbench.pytree_checksums(a) == ckptbench.pytree_checksums(b)
  assert ckptbench.pytree_checksums(a) != ckptbench.pytree_checksums(c)
  assert a["params"].sharding.spec == jax.sharding.PartitionSpec("fsdp")
  assert len(a["params"].addressable_shards) == 8
  assert a["params"].addressable_shards[0].data.shape == (8, 32)
  assert isinstance(a["opt"]["step"], int) and isinstance(a["opt"]["tag"], str)


def test_verify_names_the_array_that_differs():
  mesh = build_mesh(MeshConfig(mesh_axes=("x",), ici_parallelism={"x": 8}))
  sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
  good = {"w": jax.device_put(np.arange(16, dtype=np.float32), sharding), "b": jax.numpy.ones(3)}
  altered = np.arange(16, dtype=np.float32)
  altered[3] = 99
  bad = {"w": jax.device_put(altered, sharding), "b": jax.numpy.ones(3)}
  assert ckptbench.verify_pytree(good, good) == 2
  with pytest.raises(ckptbench.DataMismatchError, match=r"differs .* in 1 array\(s\): w"):
    ckptbench.verify_pytree(good, bad)


def test_an_occupied_output_directory_names_the_keyword_from_python_and_the_flag_from_the_command_line(tmp_path):
  from ckptbench.errors import CkptbenchError
  from ckptbench.engine.output._output_dir import prepare_output_dir

  (tmp_path / "results.jsonl").write_text("")
  with pytest.raises(CkptbenchError, match=r"pass RunSettings\(resume=True\) to complete them, RunSettings\(overwrite=True\)"):
    prepare_output_dir(RunSettings(output_dir=tmp_path))
  with pytest.raises(CkptbenchError, match="pass --resume to complete them, --overwrite to replace them"):
    prepare_output_dir(RunSettings(output_dir=tmp_path, argv=("ckptbench", "run")))


def test_a_result_the_framework_cannot_take_fails_that_run_only(tmp_path):
  outcome = run(tmp_path, """\
      num_repeats: 1
      num_warmups: 0
      benchmarks:
        - generator: sample_benchmarks.BadResultBenchmark
          options: {bad: [inventory, notes, none]}
      """)
  assert outcome.exit_code == 1
  by_option = {r.options["bad"]: r for r in ckptbench.timed_runs(outcome.records)}
  assert not by_option["none"].failed
  for bad in ("inventory", "notes"):
    assert by_option[bad].failed
    assert by_option[bad].error.message.startswith("handling the run's result failed:")
  summary = json.loads((tmp_path / "out" / "summary.json").read_text())
  assert [b["failed"] for b in summary["benchmarks"]] == [1, 1, 0]


def test_the_first_run_of_each_generator_on_each_mesh_and_data_is_a_warmup(tmp_path):
  suite = load_suite_text(textwrap.dedent("""\
      suite_name: t
      num_repeats: 1
      checkpoint_configs:
        - spec: {params: {dtype: float32, shape: [64, 32], sharding: [fsdp]}}
        - spec: {params: {dtype: float32, shape: [32, 32], sharding: [fsdp]}}
      mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}
      benchmarks:
        - generator: sample_benchmarks.FlakyBenchmark
          options: {sleep_s: [0.0, 0.001]}
        - generator: sample_benchmarks.BadResultBenchmark
      """), str(tmp_path / "s.yaml"))  # fmt: skip
  outcome = run_suite(suite, RunSettings(output_dir=tmp_path / "out", show_progress=False))
  warmups = [(r.generator.rsplit(".")[-1], r.checkpoint_config["spec"]["params"]["shape"][0], r.options.get("sleep_s"))
             for r in ckptbench.warmup_runs(outcome.records)]  # fmt: skip
  assert warmups == [("FlakyBenchmark", 64, 0.0), ("FlakyBenchmark", 32, 0.0),
                     ("BadResultBenchmark", 64, None), ("BadResultBenchmark", 32, None)]  # fmt: skip
  assert len(ckptbench.timed_runs(outcome.records)) == 6
  assert outcome.records[0].warmup  # before the group's first measured run
