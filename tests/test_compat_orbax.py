"""ckptbench.compat.orbax: Orbax's framework names on ckptbench, and the semantics ported code relies on."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import textwrap

import jax
import numpy as np
import pytest
from etils import epath
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from orbax.checkpoint import v1 as ocp

import ckptbench
from builtin_support import errors, ok_metrics, run_text
from ckptbench.compat.orbax.core import checkpoint_generation, core, inventory, mesh_utils, metric, pytree_utils
from ckptbench.compat.orbax.v1 import benchmark as v1_benchmark
from ckptbench.compat.orbax.v1 import multi_slice_util

pytestmark = pytest.mark.host_memory("inline", reason=(
    "these tests check Orbax's framework names on ckptbench (generators defined in the tests); host "
    "memory is not what they read"
))


def _mesh(shape=(2, 4), axes=("data", "model")) -> Mesh:
  return Mesh(np.asarray(jax.devices()).reshape(shape), axes)


def _tree(mesh: Mesh) -> dict:
  sharded = NamedSharding(mesh, PartitionSpec(mesh.axis_names[0], mesh.axis_names[1]))
  return {
      "params": {"w": jax.device_put(np.arange(64 * 16, dtype=np.float32).reshape(64, 16), sharded)},
      "b": jax.device_put(np.ones(16, np.float32), NamedSharding(mesh, PartitionSpec())),
  }


def _module(tmp_path, name: str, body: str) -> None:
  (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))


def test_a_ported_module_deletes_its_data_and_assigns_the_context_yet_every_run_gets_intact_data(tmp_path):
  _module(tmp_path, "deleting", """
      import dataclasses
      import jax
      from etils import epath
      from ckptbench.compat.orbax.core import core as benchmarks_core
      from ckptbench.compat.orbax.core import metric as metric_lib
      from ckptbench.compat.orbax.core import pytree_utils
      from ckptbench.compat.orbax.v1 import benchmark

      @dataclasses.dataclass(frozen=True)
      class Options(benchmarks_core.BenchmarkOptions):
        label: str | list[str] = "a"

      @benchmarks_core.benchmark_options(Options)
      class Deleting(benchmarks_core.BenchmarksGenerator):
        def test_fn(self, context):
          assert isinstance(context.path, epath.Path) and context.path.exists()
          (context.path / "sub").mkdir(mode=None, parents=True)   # Orbax's own mkdir passes mode=None
          (context.path / "sub").rmtree()
          expected = jax.tree.map(lambda x: x.copy(), context.pytree)
          pytree_utils.assert_pytree_equal(expected, context.pytree)   # intact, not deleted
          metrics = metric_lib.Metrics()
          with metrics.measure("clear", metric_lib.default_metrics()):
            context.pytree = benchmark.clear_pytree(context.pytree)   # assignable, as in Orbax
          return benchmarks_core.TestResult(metrics=metrics)
  """)
  outcome = run_text(tmp_path, """
      suite_name: deleting
      num_repeats: 3
      mesh_config: {mesh_axes: [data, model], ici_parallelism: {data: 2, model: 4}}
      checkpoint_config:
        spec: {w: {dtype: float32, shape: [16, 8], sharding: [data, model]}}
      benchmarks:
        - generator: deleting.Deleting
          options: {label: [a, b]}
  """)
  runs = ok_metrics(outcome)
  assert len(runs) == 6 and all("clear_0_basics/time_s" in m for m in runs)


def test_an_error_in_the_result_fails_the_run_and_orbax_inventory_objects_become_the_record(tmp_path):
  _module(tmp_path, "results", """
      import dataclasses
      from ckptbench.compat.orbax.core import core as benchmarks_core
      from ckptbench.compat.orbax.core import inventory as inventory_lib
      from ckptbench.compat.orbax.core import metric as metric_lib

      @dataclasses.dataclass(frozen=True)
      class Options(benchmarks_core.BenchmarkOptions):
        fail: bool | list[bool] = False

      @benchmarks_core.benchmark_options(Options)
      class Results(benchmarks_core.BenchmarksGenerator):
        def test_fn(self, context):
          (context.path / "data.bin").write_bytes(b"x" * 3000)
          (context.path / "_METADATA").write_bytes(b"{}")
          error = ValueError("caught by the test") if context.options.fail else None
          return benchmarks_core.TestResult(
              metrics=metric_lib.Metrics(), error=error, inventory=inventory_lib.scan_checkpoint(context.path))
  """)
  outcome = run_text(tmp_path, """
      suite_name: results
      benchmarks:
        - generator: results.Results
          options: {fail: [false, true]}
  """)
  assert errors(outcome) == [("ValueError", "caught by the test")]
  good = next(r for r in outcome.records if not r.failed)
  assert good.inventory["total_bytes"] == 3002 and good.inventory["file_count"] == 2
  assert good.inventory["smallest_file_bytes"] == 2 and good.inventory["metadata_files"] == 1
  assert good.metrics["checkpoint_5_inventory/file_count"].value == 2


def test_orbax_own_inventory_object_is_taken_and_anything_else_fails_that_run_only(tmp_path):
  from orbax.checkpoint._src.testing.benchmarks.core import inventory as orbax_inventory

  assert orbax_inventory.CheckpointInventory  # the wheel's own class, which a user's unported result carries
  _module(tmp_path, "native_inv", """
      import ckptbench
      from orbax.checkpoint._src.testing.benchmarks.core import inventory as orbax_inventory

      class Orbaxs(ckptbench.BenchmarksGenerator):
        def test_fn(self, context):
          (context.path / "f").write_bytes(b"abc")
          return ckptbench.TestResult(metrics=ckptbench.Metrics(), inventory=orbax_inventory.scan_checkpoint(context.path))

      class Odd(ckptbench.BenchmarksGenerator):
        def test_fn(self, context):
          return ckptbench.TestResult(metrics=ckptbench.Metrics(), inventory=42)

      class OddDict(ckptbench.BenchmarksGenerator):
        def test_fn(self, context):
          return ckptbench.TestResult(metrics=ckptbench.Metrics(), inventory={"total_bytes": "many"})
  """)
  outcome = run_text(tmp_path, """
      suite_name: inventories
      benchmarks:
        - generator: native_inv.Orbaxs
        - generator: native_inv.Odd
        - generator: native_inv.OddDict
  """)
  by_name = {r.benchmark: r for r in outcome.records}
  assert not by_name["Orbaxs"].failed
  assert by_name["Orbaxs"].inventory["total_bytes"] == 3 and by_name["Orbaxs"].inventory["other_files"] == 1
  for odd in ("Odd", "OddDict"):  # a wrong type is that run's error, never a silent gap nor a lost summary
    assert by_name[odd].failed and by_name[odd].error.message.startswith("handling the run's result failed:")
  assert (tmp_path / "out" / "summary.json").exists()


def test_a_dataclass_typed_option_and_a_from_dict_override_are_honoured(tmp_path):
  _module(tmp_path, "typed", """
      import dataclasses
      from typing import Any, Sequence
      from ckptbench.compat.orbax.core import core as benchmarks_core
      from ckptbench.compat.orbax.core import metric as metric_lib

      @dataclasses.dataclass(frozen=True)
      class Policy:
        kind: str
        n: int = 1

      @dataclasses.dataclass(frozen=True)
      class Plain(benchmarks_core.BenchmarkOptions):
        policy: Policy | Sequence[Policy] = Policy("none")

      @dataclasses.dataclass(frozen=True)
      class Group:
        policies: list[Policy]

      @dataclasses.dataclass(frozen=True)
      class Custom(benchmarks_core.BenchmarkOptions):
        group: Group | Sequence[Group] = Group([])

        @classmethod
        def from_dict(cls, d: dict[str, Any]) -> "Custom":  # as Orbax's checkpoint_policy module does
          return cls(group=[Group([Policy(**p) for p in g["policies"]]) for g in d["group"]])

      SEEN = []

      def _record(context):
        SEEN.append(context.options)
        with open(context.path.parent.parent / "seen.txt", "a") as f:
          f.write(repr(context.options) + "\\n")
        return benchmarks_core.TestResult(metrics=metric_lib.Metrics())

      @benchmarks_core.benchmark_options(Plain)
      class UsesPlain(benchmarks_core.BenchmarksGenerator):
        def test_fn(self, context):
          assert isinstance(context.options.policy, Policy)
          return _record(context)

      @benchmarks_core.benchmark_options(Custom)
      class UsesCustom(benchmarks_core.BenchmarksGenerator):
        def test_fn(self, context):
          assert all(isinstance(p, Policy) for p in context.options.group.policies)
          return _record(context)
  """)
  outcome = run_text(tmp_path, """
      suite_name: typed
      benchmarks:
        - generator: typed.UsesPlain
          options:
            policy: [{kind: latest, n: 3}, {kind: every}]
        - generator: typed.UsesCustom
          options:
            group: [{policies: [{kind: a}]}, {policies: [{kind: b, n: 2}, {kind: c}]}]
  """)
  ok_metrics(outcome)
  assert len(outcome.records) == 4  # each sweeps two points
  seen = (tmp_path / "out" / "seen.txt").read_text()
  assert "Policy(kind='latest', n=3)" in seen and "Policy(kind='b', n=2), Policy(kind='c', n=1)" in seen


def test_a_from_dict_that_raises_is_a_config_error_naming_the_options(tmp_path):
  _module(tmp_path, "badfd", """
      import dataclasses
      from ckptbench.compat.orbax.core import core as benchmarks_core

      @dataclasses.dataclass(frozen=True)
      class Options(benchmarks_core.BenchmarkOptions):
        x: int = 0

        @classmethod
        def from_dict(cls, d):
          raise KeyError("wanted")

      @benchmarks_core.benchmark_options(Options)
      class Bad(benchmarks_core.BenchmarksGenerator):
        def test_fn(self, context):
          raise AssertionError("never runs")
  """)
  with pytest.raises(ckptbench.ConfigError, match="Options.from_dict rejected the options: KeyError") as e:
    run_text(tmp_path, "suite_name: bad\nbenchmarks:\n  - generator: badfd.Bad\n    options: {x: 1}\n")
  assert e.value.line == 5  # the options mapping (run_text puts num_repeats: 1 first)


def test_a_module_calling_torch_cuda_set_device_is_refused_as_unsupported_with_the_reason(tmp_path):
  _module(tmp_path, "cuda_only", """
      import dataclasses
      import torch
      import torch.distributed as dist
      from ckptbench.compat.orbax.core import core as benchmarks_core

      @dataclasses.dataclass(frozen=True)
      class Options(benchmarks_core.BenchmarkOptions):
        size: int | list[int] = 1

      @benchmarks_core.benchmark_options(Options)
      class CudaOnly(benchmarks_core.BenchmarksGenerator):
        def test_fn(self, context):
          torch.cuda.set_device(torch.device("cuda:0"))
  """)
  # Nothing of the suite can run here: refused up front (as `plan` refuses it), naming why, never an
  # empty run that exits 0.
  with pytest.raises(ckptbench.ConfigError, match="nothing would run") as refused:
    run_text(tmp_path, "suite_name: cuda\nbenchmarks:\n  - generator: cuda_only.CudaOnly\n    options: {size: [1, 2]}\n")
  reason = "cuda_only calls torch.cuda.set_device: needs a CUDA device; torch sees none on this machine"
  assert str(refused.value).count(reason) == 2  # both sweep points, each with its reason
  assert not (tmp_path / "out").exists()


def test_absl_flags_are_parsed_and_a_torch_distributed_module_gets_its_process_group(tmp_path):
  _module(tmp_path, "needs_setup", """
      import dataclasses
      from absl import flags
      import torch.distributed as dist
      from ckptbench.compat.orbax.core import core as benchmarks_core
      from ckptbench.compat.orbax.core import metric as metric_lib
      from ckptbench.compat.orbax.core import multihost

      @benchmarks_core.benchmark_options(benchmarks_core.BenchmarkOptions)
      class NeedsSetup(benchmarks_core.BenchmarksGenerator):
        def test_fn(self, context):
          assert flags.FLAGS.is_parsed()
          flags.FLAGS.experimental_orbax_use_distributed_process_id = False   # raises when unparsed
          assert dist.is_initialized() and dist.get_world_size() == 1 and multihost.get_process_index() == 0
          multihost.sync_global_processes("fine")
          return benchmarks_core.TestResult(metrics=metric_lib.Metrics())
  """)
  import orbax.checkpoint  # noqa: F401  (defines the experimental flags)

  ok_metrics(run_text(tmp_path, "suite_name: setup\nbenchmarks:\n  - generator: needs_setup.NeedsSetup\n"))


def test_the_context_has_orbax_fields_and_a_trace_path_under_ckptbench_tensorboard(tmp_path):
  @dataclasses.dataclass(frozen=True)
  class Opts(core.BenchmarkOptions):
    enable_trace: bool = True

  native = ckptbench.TestContext(
      pytree={"a": 1}, path=tmp_path / "run", options=Opts(), repeat_index=0, local_path=tmp_path / "local",
      name="Bench(x=1)", key="abc", trace_root=tmp_path / "out" / "tensorboard",
  )  # fmt: skip
  ctx = core.TestContext.from_native(native)
  assert isinstance(ctx.path, epath.Path) and isinstance(ctx.local_path, epath.Path)
  assert ctx.output_dir == epath.Path(tmp_path / "out") and ctx.name == "Bench(x=1)" and ctx.key == "abc"
  assert ctx.trace_path("save") == epath.Path(native.trace_path("save"))
  ctx.pytree = None  # Orbax's context is mutable
  by_hand = core.TestContext(pytree=None, path=epath.Path(tmp_path), options=Opts(), repeat_index=1, output_dir=tmp_path, name="n")
  assert by_hand.trace_path("save") is None  # first repeat only, as in Orbax
  assert metric.default_metrics() == ckptbench.default_collectors() and metric.default_metrics() is not metric.default_metrics()


def test_pytree_comparisons_and_digests():
  mesh = _mesh()
  tree = _tree(mesh)
  same = jax.tree.map(lambda x: x.copy(), tree)
  pytree_utils.assert_pytree_equal(tree, same)
  changed = {**same, "b": same["b"] + 1}
  with pytest.raises(AssertionError, match="b"):
    pytree_utils.assert_pytree_equal(tree, changed)
  with pytest.raises(AssertionError, match="structure"):
    pytree_utils.assert_pytree_equal(tree, {"b": same["b"]})
  with pytest.raises(AssertionError, match="Type mismatch"):
    pytree_utils.assert_pytree_equal({"x": 1}, {"x": "1"})
  digests = pytree_utils.digest_pytree(tree)
  assert set(digests) == {"['b']", "['params']['w']"}
  pytree_utils.assert_digests_match(digests, same)
  with pytest.raises(AssertionError, match=r"Digest mismatch at \['b'\]"):
    pytree_utils.assert_digests_match(digests, changed)
  with pytest.raises(AssertionError, match="missing in pytree"):
    pytree_utils.assert_digests_match(digests, {"b": same["b"]})
  pytree_utils.log_pytree("tree", tree)


def test_local_replica_mesh_is_the_replica_holding_this_process():
  mesh = _mesh((2, 4), ("replica", "model"))
  local = mesh_utils.get_local_replica_mesh(mesh, 0)
  assert local.axis_names == ("replica", "model") and local.devices.shape == (1, 4)
  assert [d.id for d in local.devices.flat] == [d.id for d in mesh.devices[0]]
  mesh_utils.pretty_log_mesh("mesh", mesh)


def test_orbax_sharding_files_written_by_ckptbench_read_back_and_widen_to_every_replica(tmp_path):
  replica = Mesh(np.asarray(jax.devices()[:4]).reshape(2, 2), ("fsdp", "tensor"))
  tree = _tree(replica)
  ocp.save(tmp_path / "ckpt", tree)
  ckptbench.write_sharding_config(tmp_path / "abstract_state.json", tree, layout="orbax")
  entries = json.loads((tmp_path / "abstract_state.json").read_text())
  assert entries["params.w"] == {
      "shape": [64, 16], "dtype": "float32",
      "sharding": {"mesh": {"shape": [2, 2], "axes": ["fsdp", "tensor"]}, "spec": ["fsdp", "tensor"]},
  }  # fmt: skip
  metadata = ocp.metadata(tmp_path / "ckpt").metadata
  abstract = checkpoint_generation.get_abstract_state_from_sharding_config(
      tmp_path / "abstract_state.json", metadata, devices=jax.devices()[4:]
  )
  w = abstract["params"]["w"]
  assert w.shape == (64, 16) and w.sharding.spec == PartitionSpec("fsdp", "tensor")
  assert [d.id for d in w.sharding.mesh.devices.flat] == [d.id for d in jax.devices()[4:]]
  restored = ocp.load(tmp_path / "ckpt", abstract)
  np.testing.assert_array_equal(np.asarray(restored["params"]["w"]), np.asarray(tree["params"]["w"]))

  everywhere = _mesh((2, 4), ("replica", "model"))
  wide = multi_slice_util.get_multi_slice_abstract_state(
      v1_benchmark.BenchmarkOptions().context, everywhere,
      reference_checkpoint_path=tmp_path / "ckpt", reference_sharding_path=tmp_path / "abstract_state.json",
  )  # fmt: skip
  mesh = wide["params"]["w"].sharding.mesh
  assert mesh.axis_names == ("replica", "fsdp", "tensor") and mesh.devices.shape == (2, 2, 2)

  (tmp_path / "broken.json").write_text(json.dumps({"params.w": {"shape": [64, 16]}, "b": entries["b"]}))
  with pytest.raises(ckptbench.CkptbenchError, match="entry 'params.w' is not a sharding entry"):
    checkpoint_generation.get_abstract_state_from_sharding_config(tmp_path / "broken.json", metadata, devices=jax.devices()[:4])


def test_scan_checkpoint_has_orbax_fields(tmp_path):
  (tmp_path / "d").mkdir()
  (tmp_path / "d" / "manifest.ocdbt").write_bytes(b"m" * 10)
  (tmp_path / "_CHECKPOINT_METADATA").write_bytes(b"{}")
  (tmp_path / "big").write_bytes(b"0" * (2 << 20))
  inv = inventory.scan_checkpoint(tmp_path)
  assert inv.total_bytes == 12 + (2 << 20) and inv.file_count == 3 and inv.small_file_count == 2
  assert inv.small_file_pct == pytest.approx(2 / 3) and inv.largest_file_bytes == 2 << 20 and inv.smallest_file_bytes == 2
  assert inv.format == {"ocdbt": 1, "metadata": 1, "other": 1}
  assert inventory.scan_checkpoint(tmp_path / "absent") == inventory.CheckpointInventory()


def test_v1_options_build_the_context_and_list_bad_combinations():
  opts = v1_benchmark.BenchmarkOptions(use_zarr3=False, save_concurrent_gb=2, chunk_byte_size=1 << 20)
  ctx = opts.context
  assert ctx.array.saving.use_zarr3 is False and ctx.memory.write_concurrent_bytes == 2 << 30
  assert ctx.array.saving.storage_options.chunk_byte_size == 1 << 20
  bad = v1_benchmark.BenchmarkOptions(enable_replica_parallel_separate_folder=True)
  assert not bad.is_valid() and "needs use_replica_parallel" in bad.invalid_reason()
  assert v1_benchmark.get_metrics_to_measure(v1_benchmark.BenchmarkOptions(metric_tracemalloc_enabled=True))[-1] == "tracemalloc"


def test_setup_test_directory_gives_a_clean_directory(tmp_path):
  from ckptbench.compat.orbax.core import directory_setup

  path = directory_setup.setup_test_directory("bench", str(tmp_path), repeat_index=1)
  assert path == epath.Path(tmp_path) / "bench" / "repeat_1" and path.is_dir()
  (path / "old").write_text("x")
  assert list(directory_setup.setup_test_directory("bench", str(tmp_path), repeat_index=1).iterdir()) == []


@pytest.mark.slow
def test_a_generator_module_in_the_current_directory_is_importable(tmp_path):
  """Through the `ckptbench` console script, which (unlike `python -m`) puts no directory of the user's on sys.path."""
  import os
  import subprocess
  import sys

  from conftest import REPO

  work, suites = tmp_path / "work", tmp_path / "suites"
  work.mkdir()
  suites.mkdir()
  _module(work, "here_mod", """
      import ckptbench

      class Here(ckptbench.BenchmarksGenerator):
        def test_fn(self, context):
          return ckptbench.TestResult(metrics=ckptbench.Metrics())
  """)
  (suites / "s.yaml").write_text("suite_name: cwd\nbenchmarks:\n  - generator: here_mod.Here\n")
  script = pathlib.Path(sys.executable).parent / "ckptbench"
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | {"PYTHONPATH": str(REPO / "src")}
  done = subprocess.run(
      [sys.executable, str(script), "run", str(suites / "s.yaml"), "-o", str(tmp_path / "out"), "--no-progress",
       "--no-probe", "--no-views"], cwd=work, env=env, capture_output=True, text=True, timeout=240,
  )  # fmt: skip
  assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_an_is_valid_that_asks_jax_sees_the_simulated_devices(tmp_path):
  """Orbax's options ask JAX in is_valid (is it Pathways?): JAX is set up before the loader checks them."""
  from conftest import run_cli

  _module(tmp_path, "asks_jax", """
      import dataclasses
      import jax
      from ckptbench.compat.orbax.core import core as benchmarks_core
      from ckptbench.compat.orbax.core import metric as metric_lib

      @dataclasses.dataclass(frozen=True)
      class Options(benchmarks_core.BenchmarkOptions):
        devices: int | list[int] = 8

        def is_valid(self):
          return self.devices <= jax.device_count()

      @benchmarks_core.benchmark_options(Options)
      class AsksJax(benchmarks_core.BenchmarksGenerator):
        def test_fn(self, context):
          assert jax.device_count() == 8
          return benchmarks_core.TestResult(metrics=metric_lib.Metrics())
  """)
  (tmp_path / "s.yaml").write_text(
      "suite_name: asks\nnum_repeats: 1\nmesh_config: {mesh_axes: [data], ici_parallelism: {data: 8}}\n"
      "benchmarks:\n  - generator: asks_jax.AsksJax\n    options: {devices: [8, 9]}\n"
  )
  done = run_cli("run", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "out"), "--no-progress", "--no-probe", "--no-views")
  assert done.returncode == 0, done.stderr
  summary = json.loads((tmp_path / "out" / "summary.json").read_text())
  assert [b["runs"] for b in summary["benchmarks"]] == [1] and len(summary["invalid_combinations"]) == 1
