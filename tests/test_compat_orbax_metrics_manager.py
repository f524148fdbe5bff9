"""compat.orbax's metrics_manager: Orbax's suite report and TensorBoard runs, aggregated as ckptbench aggregates."""

from __future__ import annotations

import dataclasses
import logging
import re

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2

from ckptbench.compat.orbax.core import metric, metrics_manager


def _metrics(**results: tuple[float | str, str]) -> metric.Metrics:
  m = metric.Metrics(name="run")
  m.results = {key.replace("__", "::").replace("_ns_", "/"): value for key, value in results.items()}
  return m


@dataclasses.dataclass(frozen=True)
class _Options:
  async_enabled: bool = True
  chunk_byte_size: int | None = None


def _events(run_dir) -> EventAccumulator:
  acc = EventAccumulator(str(run_dir), size_guidance={"tensors": 0})
  acc.Reload()
  return acc


def _tensors(acc: EventAccumulator, plugin: str) -> dict[str, list[tuple[int, object]]]:
  """Per tag of `plugin` (scalars, text), its (step, value) events."""
  read = {"scalars": lambda t: float(t.float_val[0]), "text": lambda t: t.string_val[0].decode()}[plugin]
  return {tag: [(e.step, read(e.tensor_proto)) for e in acc.Tensors(tag)] for tag in acc.PluginTagToContent(plugin)}


def test_the_report_counts_runs_and_aggregates_repeats_with_the_sample_std(caplog):
  manager = metrics_manager.MetricsManager(name="Suite", num_repeats=3)
  manager.add_result("bench1", _metrics(op__0_basics_ns_time_s=(1.0, "s")))
  manager.add_result("bench1", _metrics(op__0_basics_ns_time_s=(1.2, "s")))
  manager.add_result("bench1", _metrics(), error=RuntimeError("Run 3 failed"))
  manager.add_result("bench2", _metrics(), error=ValueError("x"))
  with caplog.at_level(logging.INFO, logger="absl"):
    manager.generate_report()
  report = caplog.text
  assert "Test Suite Report: Suite" in report and "Total benchmark configurations: 2" in report
  assert "Total runs (3 repeats): 4, Passed: 2, Failed: 2" in report
  # std is the sample standard deviation, as in summary.json (Orbax's would read 0.1000)
  assert "op::0_basics/time_s: 1.1000 +/- 0.1414 s (min: 1.0000, max: 1.2000, n=2)" in report
  assert "Benchmark: bench2\n  No successful runs to aggregate." in report
  assert "Test: run, Error: RuntimeError('Run 3 failed')" in report
  assert manager.mean_metrics("bench1") == {"op::0_basics/time_s": pytest.approx(1.1)}


def test_tensorboard_gets_each_run_as_added_and_a_summary_run_with_the_cards(tmp_path):
  manager = metrics_manager.MetricsManager(name="TB", num_repeats=2, tensorboard_dir=tmp_path)
  opts = _Options(async_enabled=False)
  manager.add_result("bench", _metrics(save__0_basics_ns_time_s=(1.0, "s"), save__9_other_ns_note=("x", "text")), benchmark_options=opts)
  assert _tensors(_events(tmp_path / "bench" / "host_0"), "scalars") == {"save/0_basics/time_s": [(0, 1.0)]}  # as added
  manager.add_result("bench", _metrics(), benchmark_options=opts, error=ValueError("failure"))
  manager.generate_report()

  assert _tensors(_events(tmp_path / "bench" / "host_0"), "text") == {
      "save/9_other/note": [(0, "x")], "error": [(1, "`ValueError('failure')`")]}
  summary = _events(tmp_path / "bench" / "__summary__")
  assert _tensors(summary, "scalars") == {
      "save/0_basics/time_s_max": [(0, 1.0)], "save/0_basics/time_s_min": [(0, 1.0)], "save/0_basics/time_s_mean": [(0, 1.0)]}
  texts = {tag: events[0][1] for tag, events in _tensors(summary, "text").items()}
  assert "| `async_enabled` | `False` |" in texts["configuration"]
  assert "## bench · save — at a glance" in texts["at_a_glance/save"] and "| Total time | 1.00 s |" in texts["at_a_glance/save"]
  assert "### 0_basics" in texts["aggregated_metrics/save"]
  session = plugin_data_pb2.HParamsPluginData.FromString(
      summary.PluginTagToContent("hparams")["_hparams_/session_start_info"]).session_start_info
  assert session.hparams["async_enabled"].bool_value is False and session.hparams["chunk_byte_size"].string_value == "None"
  assert manager.cross_host_aggregates("bench") == {"save::0_basics/time_s": {"max": 1.0, "min": 1.0, "mean": 1.0}}
  assert {p.name.rsplit(".", 1)[1] for p in tmp_path.rglob("events.out.tfevents.*")} == {"orbax-metrics"}
  with pytest.raises(ValueError, match="TensorBoard runs are written to a local directory, not gs://b/tb"):
    metrics_manager.MetricsManager(name="TB", num_repeats=1, tensorboard_dir="gs://b/tb").add_result("b", _metrics())


def test_cross_host_aggregates_are_ckptbench_host_statistics_with_percentiles_from_two_hosts():
  matrix = np.array([[22.4, 4.21], [21.8, np.nan], [18.0, 5.10], [7.8, 8.20]])
  out = metrics_manager._summary_aggregates(matrix, ["gbps", "blocking_s"])
  assert out["gbps"] == pytest.approx({"max": 22.4, "min": 7.8, "mean": 17.5, "p50": 19.9, "p99": 22.382})
  assert out["blocking_s"]["max"] == 8.2 and out["blocking_s"]["mean"] == pytest.approx((4.21 + 5.10 + 8.20) / 3)
  assert metrics_manager._summary_aggregates(np.array([[1.5]]), ["m"]) == {"m": {"max": 1.5, "min": 1.5, "mean": 1.5}}
  assert metrics_manager._summary_aggregates(np.zeros((0, 0)), []) == {}



_HOSTILE = "a|b <script>alert(1)</script> `tick` *x*"
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")


def test_names_values_and_errors_reach_tensorboard_escaped(tmp_path):
  manager = metrics_manager.MetricsManager(name=_HOSTILE, num_repeats=1, tensorboard_dir=tmp_path)
  manager.add_result("bench", _metrics(save__0_basics_ns_time_s=(1.0, "s"), save__9_other_ns_note=(_HOSTILE, "")),
                     benchmark_options={_HOSTILE: _HOSTILE}, checkpoint_config={"path": _HOSTILE})
  manager.add_result("bench", _metrics(), error=ValueError(_HOSTILE))
  manager.generate_report()
  run = {tag: events[0][1] for tag, events in _tensors(_events(tmp_path / "bench" / "host_0"), "text").items()}
  summary = {tag: events[0][1] for tag, events in _tensors(_events(tmp_path / "bench" / "__summary__"), "text").items()}
  for text in [*run.values(), *summary.values()]:
    assert "<script>" not in _CODE_SPAN.sub("", text)  # HTML only inside code spans, where it is shown literally
    assert "a|b" not in text  # a bare bar would split a table's cell
  assert run["save/9_other/note"] == r"a\|b &lt;script\>alert\(1\)&lt;/script\> \`tick\` \*x\*"
  assert run["error"] == "``ValueError('a\\|b <script>alert(1)</script> `tick` *x*')``"
  assert "| ``a\\|b <script>alert(1)</script> `tick` *x*`` |" in summary["configuration"]
  assert "| `path` | ``a\\|b <script>alert(1)</script> `tick` *x*`` |" in summary["configuration"]
