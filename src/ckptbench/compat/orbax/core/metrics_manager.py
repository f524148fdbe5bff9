"""Orbax's `core.metrics_manager` on ckptbench: a suite's runs, aggregated, reported, and on TensorBoard.

The statistics are ckptbench's: over repeats `ckptbench.metric_statistics`
(`std` the sample's, as in summary.json; Orbax's is the population's), across
hosts `ckptbench.host_statistics`. TensorBoard is written by ckptbench's
`TensorBoardWriter` (`metric_writers`): every run's scalars as it is added, and
at `generate_report` the cross-host `__summary__` run with the configuration,
HParams and the `markdown_cards`. Hosts exchange their means through JSON files
beside the run (`<benchmark>/host_<i>/_per_host_means.json`, ckptbench's
`write_location`: a shared directory or a bucket).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import os
from typing import Any, Sequence

import numpy as np
from absl import logging as absl_logging
from etils import epath

import ckptbench
from ckptbench.compat.orbax.core import markdown_cards, metric_writers, multihost
from ckptbench.compat.orbax.core import run_manifest as run_manifest_lib

MetricStats = dict[str, float]  # statistic -> value, such as {"mean": 1.5, "max": 2.0}
BenchmarkSummary = dict[str, MetricStats]  # metric key -> its statistics across hosts
Run = tuple[Any, Exception | None]  # (Metrics, the run's error)

_SIDECAR = "_per_host_means.json"
_ERROR_REPR_LIMIT = 1000


def _summary_aggregates(per_host_matrix: np.ndarray, keys: Sequence[str]) -> BenchmarkSummary:
  """Per key (a column; NaN where a host reported none), max, min, mean across hosts, p50 and p99 with >1."""
  if per_host_matrix.size == 0 or not keys:
    return {}
  out: BenchmarkSummary = {}
  for j, key in enumerate(keys):
    stats = ckptbench.host_statistics({h: [v] for h, v in enumerate(per_host_matrix[:, j]) if not math.isnan(v)})
    if stats is None:
      continue
    out[key] = {"max": stats.max, "min": stats.min, "mean": stats.mean}
    if stats.n > 1:
      out[key].update(p50=stats.p50, p99=stats.p99)
  return out


@dataclasses.dataclass
class AggregatedStats:
  """One metric over a benchmark's successful repeats (`std`: the sample standard deviation)."""

  mean: float
  std: float
  min: float
  max: float
  count: int


def _as_plain_dict(obj: Any) -> dict[str, Any] | None:
  if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
    return dataclasses.asdict(obj)
  if hasattr(obj, "model_dump"):  # ckptbench's configs are pydantic models
    return obj.model_dump(exclude_none=True)
  return obj if isinstance(obj, dict) else None


def _numeric(metrics: Any) -> dict[str, tuple[float, str]]:
  return {k: (float(v), unit) for k, (v, unit) in metrics.results.items() if isinstance(v, (int, float))}


def _slice(values: dict[str, Any], name: str) -> dict[str, Any]:
  """The entries keyed `<name>::<tag>`, keyed `<tag>`."""
  prefix = f"{name}::"
  return {k[len(prefix) :]: v for k, v in values.items() if k.startswith(prefix)}


class MetricsManager:
  """A suite's runs: added one by one, reported at the end, written to TensorBoard when given a directory."""

  def __init__(self, name: str, num_repeats: int, tensorboard_dir: epath.Path | str | os.PathLike | None = None,
               enable_per_host_metrics: bool = True):  # fmt: skip
    """TensorBoard's runs go into `tensorboard_dir` (none without it): with `enable_per_host_metrics`
    every process writes its own run `<benchmark>/host_<i>`, otherwise only the first `<benchmark>`."""
    self._name = name
    self._num_repeats = num_repeats
    self._tensorboard_dir = tensorboard_dir
    self._enable_per_host_metrics = enable_per_host_metrics
    self._runs: dict[str, list[Run]] = collections.defaultdict(list)
    self._benchmark_options: dict[str, Any] = {}
    self._checkpoint_configs: dict[str, Any] = {}
    self._inventories: dict[str, Any] = {}
    self._writers: dict[str, Any] = {}
    self._cross_host_aggregates: dict[str, BenchmarkSummary] = {}
    self._suite_run_manifest = run_manifest_lib.capture_run_manifest()

  @property
  def run_manifest(self) -> run_manifest_lib.RunManifest:
    """The code and machine, captured when the manager was made."""
    return self._suite_run_manifest

  def add_result(self, benchmark_name: str, metrics: Any, *, benchmark_options: Any | None = None,
                 checkpoint_config: Any | None = None, error: Exception | None = None,
                 inventory: Any | None = None) -> None:  # fmt: skip
    """Adds one run of `benchmark_name` (failed with `error`); its scalars go to TensorBoard now. The
    first options, checkpoint config and inventory given for a benchmark are kept."""
    self._runs[benchmark_name].append((metrics, error))
    self._benchmark_options.setdefault(benchmark_name, benchmark_options)
    self._checkpoint_configs.setdefault(benchmark_name, checkpoint_config)
    if inventory is not None:
      self._inventories.setdefault(benchmark_name, inventory)
    if self._tensorboard_dir:
      self._write_run(benchmark_name, metrics, error, len(self._runs[benchmark_name]) - 1)

  def _writer(self, benchmark_name: str) -> Any:
    if benchmark_name not in self._writers:
      host = multihost.get_process_index()
      if self._enable_per_host_metrics:
        writer = metric_writers.create_default_writer(self._tensorboard_dir, collection=f"{benchmark_name}/host_{host}")
      else:
        writer = metric_writers.create_default_writer(self._tensorboard_dir, just_logging=host != 0, collection=benchmark_name)
      self._writers[benchmark_name] = writer
    return self._writers[benchmark_name]

  def _write_run(self, benchmark_name: str, metrics: Any, error: Exception | None, step: int) -> None:
    writer = self._writer(benchmark_name)
    if error is not None:  # TensorBoard renders text as Markdown: the user's text is escaped
      writer.write_texts(step=step, texts={"error": ckptbench.markdown_code(repr(error))})
    else:
      for key, (value, _) in metrics.results.items():
        tag = key.replace("::", "/")  # the operation's name becomes a TensorBoard group
        if isinstance(value, (int, float)):
          writer.write_scalars(step=step, scalars={tag: value})
        else:
          writer.write_texts(step=step, texts={tag: ckptbench.markdown_text(value)})
    writer.flush()

  def _aggregate_metrics(self, runs: Sequence[Run]) -> tuple[dict[str, AggregatedStats], dict[str, str]]:
    """Per metric of the successful runs, its statistics over them, and its unit."""
    samples: dict[str, list[float]] = collections.defaultdict(list)
    units: dict[str, str] = {}
    for metrics, error in runs:
      if error is None:
        for key, (value, unit) in _numeric(metrics).items():
          samples[key].append(value)
          units[key] = unit
    stats = {key: ckptbench.metric_statistics(units[key], values) for key, values in samples.items()}
    return {key: AggregatedStats(s.mean, s.std, s.min, s.max, s.n) for key, s in stats.items()}, units

  def mean_metrics(self, benchmark_name: str) -> dict[str, float]:
    """Each metric's mean over the benchmark's successful repeats."""
    stats, _ = self._aggregate_metrics(self._runs[benchmark_name])
    return {key: s.mean for key, s in stats.items()}

  def cross_host_aggregates(self, benchmark_name: str) -> BenchmarkSummary | None:
    """The benchmark's statistics across hosts, once `generate_report` gathered them (first process, TensorBoard on)."""
    return self._cross_host_aggregates.get(benchmark_name)

  def _report_lines(self) -> list[str]:
    runs = [run for runs in self._runs.values() for run in runs]
    failed = [(metrics, error) for metrics, error in runs if error is not None]
    lines = [f"\n{f' Test Suite Report: {self._name} ':=^80}", f"Total benchmark configurations: {len(self._runs)}",
             f"Total runs ({self._num_repeats} repeats): {len(runs)}, Passed: {len(runs) - len(failed)},"
             f" Failed: {len(failed)}"]  # fmt: skip
    if self._num_repeats > 1:
      lines += ["\n" + "-" * 80, "--- Aggregated Metrics per Benchmark ---"]
      for benchmark_name, bench_runs in self._runs.items():
        lines.append(f"\nBenchmark: {benchmark_name}")
        stats, units = self._aggregate_metrics(bench_runs)
        if not stats:
          lines.append("  No successful runs to aggregate.")
        for key, s in stats.items():
          lines.append(f"  {key}: {s.mean:.4f} +/- {s.std:.4f} {units[key]} (min: {s.min:.4f}, max: {s.max:.4f}, n={s.count})")
    if failed:
      lines += ["\n" + "-" * 80, "--- Failed Runs ---"]
      for metrics, error in failed:
        text = repr(error)[:_ERROR_REPR_LIMIT] + ("..." if len(repr(error)) > _ERROR_REPR_LIMIT else "")
        lines.append(f"Test: {getattr(metrics, 'name', '')}, Error: {text}")
    return lines + ["\n" + "=" * 80]

  def generate_report(self) -> None:
    """Logs the suite's report; with a TensorBoard directory, writes each benchmark's summary and closes the writers."""
    absl_logging.info("\n".join(self._report_lines()))  # absl's, where Orbax's report goes
    if not self._tensorboard_dir:
      return
    for benchmark_name, runs in self._runs.items():
      self._summarize(benchmark_name, runs)
    for writer in self._writers.values():
      writer.flush()
      writer.close()
    self._writers.clear()

  def _gather_root(self, benchmark_name: str) -> str:
    root = f"{os.fspath(self._tensorboard_dir).rstrip('/')}/{benchmark_name}"
    return root if self._enable_per_host_metrics else f"{root}/_per_host_means"

  def _summarize(self, benchmark_name: str, runs: Sequence[Run]) -> None:
    """Every host writes its means; the first reads them all and writes the `__summary__` run."""
    stats, _ = self._aggregate_metrics(runs)
    host = multihost.get_process_index()
    keys = sorted(stats)
    sidecar = f"{self._gather_root(benchmark_name)}/host_{host}/{_SIDECAR}"
    ckptbench.write_location(sidecar, json.dumps({"keys": keys, "means": [stats[k].mean for k in keys]}).encode())
    multihost.sync_global_processes(f"metrics:summary:{benchmark_name}")
    if host == 0:
      per_host = self._read_means(benchmark_name)
      keys = sorted(set().union(*(values for _, values in per_host)))
      matrix = np.array([[values.get(k, np.nan) for k in keys] for _, values in per_host], dtype=np.float64)
      aggregates = _summary_aggregates(matrix.reshape(len(per_host), len(keys)), keys)
      if aggregates:
        self._cross_host_aggregates[benchmark_name] = aggregates
        self._write_summary(benchmark_name, runs, aggregates, per_host)
    multihost.sync_global_processes(f"metrics:summary-done:{benchmark_name}")

  def _read_means(self, benchmark_name: str) -> list[tuple[int, dict[str, float]]]:
    """(host, metric -> mean) of every host that wrote its means, by host."""
    out = []
    for host in range(multihost.get_process_count()):
      try:
        data = json.loads(ckptbench.read_location(f"{self._gather_root(benchmark_name)}/host_{host}/{_SIDECAR}"))
      except ckptbench.CkptbenchError as e:
        absl_logging.warning("%s: host %d's means are missing (%s); the summary leaves it out", benchmark_name, host, e)
        continue
      out.append((host, dict(zip(data["keys"], data["means"]))))
    return out

  def _write_summary(self, benchmark_name: str, runs: Sequence[Run], aggregates: BenchmarkSummary,
                     per_host: list[tuple[int, dict[str, float]]]) -> None:  # fmt: skip
    if self._enable_per_host_metrics:
      writer = metric_writers.create_default_writer(self._tensorboard_dir, collection=f"{benchmark_name}/__summary__")
    else:
      writer = self._writer(benchmark_name)
    try:
      for key, stats in aggregates.items():
        tag = key.replace("::", "/")
        writer.write_scalars(step=0, scalars={f"{tag}_{stat}": v for stat, v in stats.items()})
      self._write_configuration(writer, benchmark_name)
      stats, units = self._aggregate_metrics(runs)
      cards = {}
      for name in sorted({k.split("::", 1)[0] for k in aggregates if "::" in k}):
        title = f"{benchmark_name} · {name}"
        cards[f"at_a_glance/{name}"] = markdown_cards.render_glance_card(
            title, _slice(aggregates, name), [(h, _slice(v, name)) for h, v in per_host],
            self._inventories.get(benchmark_name), self._suite_run_manifest,
        )  # fmt: skip
        cards[f"aggregated_metrics/{name}"] = markdown_cards.render_aggregated_metrics(title, _slice(stats, name), _slice(units, name))
      if cards:
        writer.write_texts(step=0, texts=cards)
      writer.flush()
    finally:
      if self._enable_per_host_metrics:
        writer.close()

  def _write_configuration(self, writer: Any, benchmark_name: str) -> None:
    options = self._benchmark_options.get(benchmark_name)
    if options is None:
      return
    as_dict, checkpoint_config = _as_plain_dict(options), _as_plain_dict(self._checkpoint_configs.get(benchmark_name))
    if as_dict is not None:
      writer.write_texts(step=0, texts={"configuration": markdown_cards.render_configuration(benchmark_name, as_dict, checkpoint_config)})
    hparams = markdown_cards.options_to_hparams(options)
    if hparams:
      writer.write_hparams(hparams)
