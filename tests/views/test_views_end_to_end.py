"""A real `ckptbench run` in a subprocess, then every output read back.

One tiny suite (the save/restore built-in with traces, and a user benchmark
that compiles a jitted function and fails once) runs with --enable_hlo_dump;
the tests read its TensorBoard logs with TensorBoard's reader, render the
report and load the DataFrame.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2

import ckptbench
from ckptbench.results import read_outputs
from ckptbench.views import tensorboard_run_name, write_report, write_tensorboard

pytestmark = pytest.mark.slow
SRC = pathlib.Path(__file__).resolve().parents[2] / "src"

USER_BENCHMARK = '''
import dataclasses

import jax

from ckptbench import BenchmarkOptions, BenchmarksGenerator, Metrics, TestResult, benchmark_options


@dataclasses.dataclass(frozen=True, kw_only=True)
class JitOptions(BenchmarkOptions):
  scale: float | list[float] = 2.0


@benchmark_options(JitOptions)
class JitBenchmark(BenchmarksGenerator):
  def test_fn(self, context):
    metrics = Metrics()
    with metrics.measure("compute", ["time"]):
      jax.jit(lambda x: x * context.options.scale)(context.pytree["params"]).block_until_ready()
    if context.options.scale == 2.0 and context.repeat_index == 1:
      raise RuntimeError("planted failure")
    return TestResult(metrics=metrics)
'''

SUITE = """
suite_name: "outputs end to end"
num_repeats: 2
num_warmups: 0
checkpoint_config:
  spec:
    params: {dtype: float32, shape: [64, 64], sharding: [fsdp]}
mesh_config:
  mesh_axes: ["fsdp"]
  ici_parallelism: {"fsdp": 2}
benchmarks:
  - generator: save_restore
    options:
      use_ocdbt: [true, false]
      enable_trace: true
  - generator: user_jit_benchmark.JitBenchmark
    options:
      scale: [1.0, 2.0]
"""


@pytest.fixture(scope="module")
def run_out(tmp_path_factory) -> pathlib.Path:
  root = tmp_path_factory.mktemp("e2e")
  (root / "user_jit_benchmark.py").write_text(textwrap.dedent(USER_BENCHMARK))
  (root / "suite.yaml").write_text(SUITE)
  out = root / "out"
  # A fresh process, as a user starts it: no XLA_FLAGS from this test process, so the
  # CLI sets the device count and the HLO dump flags itself before JAX starts.
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env["PYTHONPATH"] = os.pathsep.join([str(root), str(SRC)])
  done = subprocess.run(
      [sys.executable, "-m", "ckptbench", "run", str(root / "suite.yaml"), "-o", str(out),
       "--enable_hlo_dump", "--no-progress"],
      env=env, capture_output=True, text=True, timeout=240,
  )
  assert done.returncode == 1, done.stderr  # the planted failure
  assert "planted failure" in done.stdout + done.stderr
  return out


def test_hlo_dump_files_appear(run_out):
  dumped = list((run_out / "hlo_dump").glob("*"))
  assert any(p.name.endswith(".pb") for p in dumped), sorted(p.name for p in dumped)[:10]
  assert any("jit__lambda" in p.name for p in dumped)


def test_tensorboard_reads_back_scalars_hparams_cards_and_traces(run_out):
  logdir = write_tensorboard(run_out)
  benches = {b.name: b for b in read_outputs(run_out).benchmarks}
  assert len(benches) == 4
  save_restore = next(n for n in benches if "use_ocdbt=True" in n)
  jit_failing = next(n for n in benches if "scale=2)" in n)  # a whole float is said as a whole number

  host = EventAccumulator(str(logdir / tensorboard_run_name(save_restore) / "host_0"), size_guidance={"tensors": 0})
  host.Reload()
  assert [e.step for e in host.Tensors("save_0_basics/time_s")] == [0, 1]

  bench = EventAccumulator(str(logdir / tensorboard_run_name(save_restore)), size_guidance={"tensors": 0})
  bench.Reload()
  session = plugin_data_pb2.HParamsPluginData.FromString(
      bench.PluginTagToContent("hparams")["_hparams_/session_start_info"]
  ).session_start_info
  assert session.hparams["use_ocdbt"].bool_value is True
  assert session.hparams["mesh.ici_parallelism.fsdp"].number_value == 2
  assert bench.Tensors("save_0_basics/time_s/mean")
  assert "use_ocdbt=True\\)" in bench.Tensors("configuration")[0].tensor_proto.string_val[0].decode()  # literal Markdown

  root = EventAccumulator(str(logdir))
  root.Reload()
  experiment = plugin_data_pb2.HParamsPluginData.FromString(
      root.PluginTagToContent("hparams")["_hparams_/experiment"]
  ).experiment
  assert {"use_ocdbt", "scale"} <= {i.name for i in experiment.hparam_infos}

  failing = EventAccumulator(str(logdir / tensorboard_run_name(jit_failing) / "host_0"), size_guidance={"tensors": 0})
  failing.Reload()
  assert "RuntimeError: planted failure" in failing.Tensors("error")[0].tensor_proto.string_val[0].decode()

  # First repeat only, one Profile-tab run per operation, next to the benchmark's scalars.
  traces = sorted(p.relative_to(logdir).parts[0] for p in logdir.glob("*/plugins/profile/*/*.xplane.pb"))
  assert f"{tensorboard_run_name(save_restore)}__save" in traces
  assert f"{tensorboard_run_name(save_restore)}__load" in traces


def test_report_and_dataframe_of_a_real_run(run_out):
  page = write_report(run_out).read_text()
  assert page.count('class="plotly-graph-div"') >= 2 and "<h2>verdict</h2>" in page
  assert "RuntimeError: planted failure" in page
  assert "SaveRestoreBenchmark" in page and "JitBenchmark" in page

  df = ckptbench.load_results(run_out)
  compute = df[df.tag == "compute_0_basics/time_s"]
  assert sorted(compute.scale.unique()) == [1.0, 2.0]
  assert len(compute) == 4  # 2 sweep points x 2 repeats; the failed one kept its metric
  assert df[df.error.notna()].scale.unique().tolist() == [2.0]
