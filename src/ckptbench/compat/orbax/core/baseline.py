"""Orbax's `core.baseline` on ckptbench: one benchmark's baseline file, recorded and compared.

Orbax's format (schema version 1, `<dir>/<sha>.json`, per metric a
`{stat: value}` of cross-host aggregates) is kept so files written by Orbax's
framework and by this one read alike. The files are read and written through
ckptbench's `read_location`/`write_location`: a local file is replaced whole
(written beside it and renamed), and a gs:// or s3:// location is one object,
with the stores, credentials and emulators ckptbench uses.

The comparison is Orbax's: per shared metric the raw ratio baseline/current
of one statistic, with no judgement of noise. ckptbench's own baselines
(`ckptbench run --baseline_path`, docs/baselines.md) keep every repeat's
sample and judge each change with an interval; use them to decide whether a
change is real.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
from typing import Any

import ckptbench

_SCHEMA_VERSION = 1


@dataclasses.dataclass
class Baseline:
  """One benchmark's captured state, which later runs compare with.

  Attributes:
    benchmark_name: the benchmark (its generator's class name).
    captured_at: when, ISO 8601 UTC.
    captured_at_sha: the code's git sha (the file's name).
    fixture: the checkpoint or data the benchmark ran on.
    config: its options, checkpoint and mesh configs.
    metrics: per metric key, `{stat: value}` across hosts (max, min, mean; p50
      and p99 with more than one host).
    digests: per leaf, the SHA-256 of its data (empty when not captured).
    inventory: the checkpoint's inventory.
    manifest: the run manifest (code, versions, environment, topology).
  """

  benchmark_name: str
  captured_at: str
  captured_at_sha: str
  fixture: str
  config: dict[str, Any]
  metrics: dict[str, dict[str, float]]
  digests: dict[str, str] = dataclasses.field(default_factory=dict)
  inventory: dict[str, Any] = dataclasses.field(default_factory=dict)
  manifest: dict[str, Any] = dataclasses.field(default_factory=dict)
  schema_version: int = _SCHEMA_VERSION

  def to_json(self, *, indent: int | None = 2) -> str:
    """The file's text: keys sorted, so two captures diff line by line."""
    return json.dumps(dataclasses.asdict(self), indent=indent, sort_keys=True)

  @classmethod
  def from_json(cls, payload: str) -> Baseline:
    """The baseline in `payload`; metric values as floats.

    Raises:
      ValueError: another schema version (or none).
    """
    raw = json.loads(payload)
    version = raw.pop("schema_version", None)
    if version != _SCHEMA_VERSION:
      raise ValueError(
          f"Baseline schema_version {version} != supported {_SCHEMA_VERSION}; regenerate the baseline against the"
          " current framework."
      )
    # JSON reads 3 as an int; ratios of ints would be ints in a later division's caller.
    raw["metrics"] = {key: {stat: float(v) for stat, v in stats.items()} for key, stats in raw.get("metrics", {}).items()}
    return cls(**raw)


class BaselineRecorder:
  """Writes baselines into a directory (local, gs:// or s3://) as `<sha>.json`."""

  def __init__(self, sink_path: str | os.PathLike):
    self._sink = str(sink_path)

  def write(self, baseline: Baseline) -> pathlib.Path | str:
    """Writes `baseline` (replacing a file of the same sha); returns its path, or its URL in a store.

    A baseline without a sha is written as `unknown.json`.
    """
    name = f"{baseline.captured_at_sha or 'unknown'}.json"
    target = f"{self._sink.rstrip('/')}/{name}" if "://" in self._sink else pathlib.Path(self._sink) / name
    ckptbench.write_location(target, baseline.to_json().encode())
    return target


@dataclasses.dataclass(frozen=True)
class MetricDelta:
  """One metric of a run against its baseline.

  `ratio` is baseline / current (None when current is 0): for a time, 2.0
  means the run took half as long; for a rate, the opposite. Which direction
  is better is the caller's to say.
  """

  key: str
  baseline: float
  current: float
  delta_abs: float  # current - baseline
  ratio: float | None


@dataclasses.dataclass
class ComparisonReport:
  """A run against a baseline: the shared metrics' deltas and the metrics only one side has."""

  baseline: Baseline
  deltas: list[MetricDelta]
  missing_in_current: list[str]
  missing_in_baseline: list[str]


def backend_mismatch(baseline: Baseline, current_backend: str) -> str | None:
  """Why `baseline` must not be compared with a run on `current_backend`, or None.

  Timings of different backends (SimDevice and TPU, CPU and GPU) are not
  comparable; a baseline that records no backend is compared.
  """
  recorded = baseline.manifest.get("backend", "unknown")
  if recorded in ("unknown", current_backend):
    return None
  return f"baseline ran on {recorded}, this run on {current_backend}"


class BaselineComparer:
  """Reads a baseline file and compares a run's metrics with it."""

  def __init__(self, source_path: str | os.PathLike):
    self._source = source_path

  def load(self) -> Baseline:
    """The baseline in the file.

    Raises:
      ckptbench.CkptbenchError: the file does not exist or cannot be read.
      ValueError: another schema version.
    """
    return Baseline.from_json(ckptbench.read_location(self._source).decode("utf-8"))

  def compare(
      self,
      current_metrics: dict[str, dict[str, float]],
      baseline: Baseline | None = None,
      *,
      stat: str = "mean",
  ) -> ComparisonReport:
    """The run's `stat` of every metric both sides carry it for, against the baseline's.

    Args:
      current_metrics: per metric key, `{stat: value}` of the run.
      baseline: the baseline; read from the file when None.
      stat: which statistic to compare ("mean", "max", ...).
    """
    baseline = self.load() if baseline is None else baseline
    deltas = []
    for key in sorted(set(baseline.metrics) & set(current_metrics)):
      if stat not in baseline.metrics[key] or stat not in current_metrics[key]:
        continue
      before, now = float(baseline.metrics[key][stat]), float(current_metrics[key][stat])
      deltas.append(MetricDelta(key, before, now, now - before, before / now if now != 0 else None))
    return ComparisonReport(
        baseline=baseline,
        deltas=deltas,
        missing_in_current=sorted(set(baseline.metrics) - set(current_metrics)),
        missing_in_baseline=sorted(set(current_metrics) - set(baseline.metrics)),
    )
