"""TensorBoard logs written without TensorFlow, read back with TensorBoard's own reader."""

from __future__ import annotations

import os
import pathlib

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2

from ckptbench import BenchmarkOptions, TestContext
from ckptbench.views import tensorboard_run_name, write_tensorboard
from views_sample import sample_out  # noqa: F401  (fixture)

OCDBT = "SaveRestore use_ocdbt=True"
NO_OCDBT = "SaveRestore use_ocdbt=False"


def _load(run_dir: pathlib.Path) -> EventAccumulator:
  acc = EventAccumulator(str(run_dir), size_guidance={"tensors": 0})
  acc.Reload()
  return acc


def _scalars(acc: EventAccumulator, tag: str) -> list[tuple[int, float]]:
  return [(e.step, float(e.tensor_proto.float_val[0])) for e in acc.Tensors(tag)]


def _text(acc: EventAccumulator, tag: str) -> str:
  return acc.Tensors(tag)[0].tensor_proto.string_val[0].decode()


def _hparams_data(acc: EventAccumulator, tag: str) -> plugin_data_pb2.HParamsPluginData:
  return plugin_data_pb2.HParamsPluginData.FromString(acc.PluginTagToContent("hparams")[tag])


def test_every_metric_of_every_run_is_a_scalar_per_host(sample_out):
  logdir = write_tensorboard(sample_out)

  host = _load(logdir / tensorboard_run_name(OCDBT) / "host_0")
  assert _scalars(host, "save_0_basics/time_s") == [
      (0, pytest.approx(0.4)), (1, pytest.approx(0.42)), (2, pytest.approx(0.44))
  ]
  assert len(host.Tags()["tensors"]) == 16 + 1  # the fixture's 16 metrics and run/duration_s


def test_a_failed_run_keeps_its_metrics_and_shows_its_error(sample_out):
  logdir = write_tensorboard(sample_out)

  host = _load(logdir / tensorboard_run_name(NO_OCDBT) / "host_0")
  # Repeat 1 failed after its save: the save time is there, the load time is not.
  assert [step for step, _ in _scalars(host, "save_0_basics/time_s")] == [0, 1, 2]
  assert [step for step, _ in _scalars(host, "load_0_basics/time_s")] == [0, 2]
  (error,) = host.Tensors("error")
  assert error.step == 1
  assert "ValueError: restored data differs" in error.tensor_proto.string_val[0].decode()


def test_aggregated_statistics_and_cross_host_block(sample_out):
  logdir = write_tensorboard(sample_out)

  bench = _load(logdir / tensorboard_run_name(OCDBT))
  assert _scalars(bench, "save_0_basics/time_s/mean") == [(0, pytest.approx(0.42))]
  assert _scalars(bench, "save_0_basics/time_s/n") == [(0, 3.0)]
  for stat in ("std", "min", "max", "median"):
    assert bench.Tensors(f"save_0_basics/time_s/{stat}")
  assert _scalars(bench, "save_0_basics/time_s/hosts/p99") == [(0, pytest.approx(0.44))]
  assert _scalars(bench, "save_0_basics/time_s/hosts/slowest_host") == [(0, 0.0)]


def test_hparams_describe_options_mesh_checkpoint_and_headline_metrics(sample_out):
  logdir = write_tensorboard(sample_out)

  session = _hparams_data(_load(logdir / tensorboard_run_name(OCDBT)), "_hparams_/session_start_info")
  hparams = session.session_start_info.hparams
  assert hparams["use_ocdbt"].bool_value is True
  assert hparams["mesh.ici_parallelism.fsdp"].number_value == 8
  assert "bfloat16" in hparams["checkpoint.spec"].string_value
  assert session.session_start_info.group_name == "3f9a1c0d2e"

  experiment = _hparams_data(_load(logdir), "_hparams_/experiment").experiment
  names = {info.name for info in experiment.hparam_infos}
  assert {"use_ocdbt", "use_zarr3", "mesh.mesh_axes", "checkpoint.spec"} <= names
  use_ocdbt = next(i for i in experiment.hparam_infos if i.name == "use_ocdbt")
  assert sorted(v.bool_value for v in use_ocdbt.domain_discrete.values) == [False, True]
  metric_tags = {m.name.tag for m in experiment.metric_infos}
  # Exactly the metrics a suite is judged on (the rule: ckptbench.api.JUDGED), as the verdicts and the gate.
  assert metric_tags == {"save_0_basics/time_s/mean", "load_0_basics/time_s/mean",
                         "save_4_throughput/save_total_gbps/mean", "load_4_throughput/load_total_gbps/mean",
                         "save_7_memory/device_peak_diff_gb/mean"}
  # Every headline metric names a scalar that the session run holds.
  bench_tags = set(_load(logdir / tensorboard_run_name(OCDBT)).Tags()["tensors"])
  assert metric_tags <= bench_tags


def test_text_cards_configuration_inventory_and_summary(sample_out):
  logdir = write_tensorboard(sample_out)

  bench = _load(logdir / tensorboard_run_name(NO_OCDBT))
  assert "| use_ocdbt | false |" in _text(bench, "configuration")  # literal Markdown: an underscore inside a word starts no emphasis
  assert '"mesh_axes"' in _text(bench, "configuration")
  assert "save_5_inventory/total_gib" in _text(bench, "inventory")
  summary = _text(bench, "run_summary")
  assert "3 runs, 2 passed, 1 failed" in summary
  assert "ValueError: restored data differs" in summary and "Traceback" in summary


def test_writing_again_replaces_instead_of_duplicating(sample_out):
  logdir = write_tensorboard(sample_out)
  write_tensorboard(sample_out)

  run = logdir / tensorboard_run_name(OCDBT) / "host_0"
  assert len(list(run.glob("events.out.tfevents.*"))) == 1
  assert len(_scalars(_load(run), "save_0_basics/time_s")) == 3


def test_profiler_trace_lands_where_the_profile_tab_reads_it(tmp_path, sample_out):
  """A real jax.profiler trace through TestContext.trace, beside the scalars."""
  import jax.numpy as jnp

  context = TestContext(
      pytree=None, path=tmp_path / "run", options=BenchmarkOptions(enable_trace=True),
      name=OCDBT, trace_root=sample_out / "tensorboard",
  )
  with context.trace("save") as trace_dir:
    jnp.arange(64.0).sum().block_until_ready()
  logdir = write_tensorboard(sample_out)  # must leave the trace alone

  # The Profile tab lists run `<bench>__<op>` from <logdir>/<run>/plugins/profile/<session>/*.xplane.pb.
  assert trace_dir == logdir / f"{tensorboard_run_name(OCDBT)}__save"
  (xplane,) = trace_dir.glob("plugins/profile/*/*.xplane.pb")
  assert xplane.stat().st_size > 0
  # A later repeat is not traced unless trace_every_repeat is set.
  later = TestContext(
      pytree=None, path=tmp_path / "run1", options=BenchmarkOptions(enable_trace=True),
      repeat_index=1, name=OCDBT, trace_root=sample_out / "tensorboard",
  )
  assert later.trace_path("save") is None


def test_scalars_are_the_bytes_the_scalars_plugin_writes():
  from tensorboard.plugins.scalar import summary_v2 as scalar_summary

  from ckptbench.views._tensorboard import scalar_value

  for value in (0.0, 1.5, -3.25e-7, 12345.678):
    expected = scalar_summary.scalar_pb("save_0_basics/time_s", value).value[0]
    assert scalar_value("save_0_basics/time_s", value).SerializeToString() == expected.SerializeToString()


def test_a_tags_metadata_is_written_once_per_run_and_every_step_reads_as_a_scalar(sample_out):
  from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

  logdir = write_tensorboard(sample_out)
  run_dir = logdir / tensorboard_run_name(OCDBT) / "host_0"
  (events_file,) = run_dir.glob("events.out.tfevents.*")
  with_metadata = [
      (event.step, value.tag)
      for event in EventFileLoader(str(events_file)).Load()
      for value in event.summary.value
      if value.tag == "save_0_basics/time_s" and value.HasField("metadata")
  ]
  assert with_metadata == [(0, "save_0_basics/time_s")]  # as TensorFlow's FileWriter strips it after the first
  host = _load(run_dir)
  assert "save_0_basics/time_s" in host.PluginTagToContent("scalars")
  assert [step for step, _ in _scalars(host, "save_0_basics/time_s")] == [0, 1, 2]


def _hparams_content(summary) -> plugin_data_pb2.HParamsPluginData:
  """The plugin data of a one-value HParams summary, parsed; the summary keeps the rest."""
  content = summary.value[0].metadata.plugin_data.content
  summary.value[0].metadata.plugin_data.content = b""
  return plugin_data_pb2.HParamsPluginData.FromString(content)


def test_our_summaries_are_the_ones_tensorboards_helpers_make():
  from tensorboard.plugins.hparams import summary_v2 as hp
  from tensorboard.plugins.text import summary_v2 as text

  from ckptbench.views._tfevents import experiment_summary, session_summary, text_summary

  assert text_summary("card", "| a | b |\n**é**") == text.text_pb("card", "| a | b |\n**é**")
  values = {"use_ocdbt": True, "mesh.fsdp": 8.0, "generator": "g", "n": 3}
  ours, theirs = session_summary(values, "key", 12.5), hp.hparams_pb(values, trial_id="key", start_time_secs=12.5)
  assert _hparams_content(ours) == _hparams_content(theirs)  # a map: serialized in no fixed order
  assert ours == theirs
  domains = [("a", [2.0, 1.0]), ("b", [True, False]), ("c", ["y", "x"]), ("d", None)]
  theirs = hp.hparams_config_pb(
      [hp.HParam(name, None if seen is None else hp.Discrete(seen)) for name, seen in domains],
      [hp.Metric("save/time_s/mean", display_name="save/time_s")],
  )
  assert experiment_summary(domains, [("save/time_s/mean", "save/time_s")]) == theirs


def test_event_files_are_tfrecords_tensorboards_reader_checks(tmp_path):
  from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
  from tensorboard.compat.proto import event_pb2, summary_pb2
  from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c as theirs

  from ckptbench.views import _tfevents

  data = bytes(range(256)) * 40
  assert _tfevents.masked_crc32c(data) == theirs(data)
  assert _tfevents._crc32c_python(b"123456789") == 0xE3069283  # CRC-32C's check value
  assert _tfevents._crc32c_python(data) == _tfevents._crc32c(data)
  events = _tfevents.EventFile(tmp_path, suffix=".x")
  events.add(event_pb2.Event(step=3, summary=summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="t")])))
  events.close()
  read = list(EventFileLoader(str(events.path)).Load())
  assert read[0].file_version == "brain.Event:2" and read[1].step == 3 and read[1].summary.value[0].tag == "t"


@pytest.mark.slow
def test_the_view_imports_neither_tensorflows_stub_nor_numpy():
  import subprocess
  import sys

  code = "import sys, ckptbench.views._tensorboard; print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'numpy') or 'tensorflow_stub' in m))"
  done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
  assert done.stdout.strip() == "[]", done.stdout
