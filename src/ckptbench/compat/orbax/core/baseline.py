"""Orbax's `core.baseline` on ckptbench: one benchmark's baseline file, recorded and compared.

Orbax's format (schema version 1, `<dir>/<sha>.json`, per metric a
`{stat: value}` of cross-host aggregates), so files written by Orbax's
framework and by this one read alike, read and written through ckptbench's
`read_location`/`write_location` (a local file replaced whole; gs:// and s3://
with ckptbench's stores). The comparison is Orbax's: per shared metric the raw
ratio baseline/current of one statistic, with no judgement of noise; ckptbench's
own baselines (`ckptbench run --baseline_path`, docs/baselines.md) judge each
change with an interval.
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
  """One benchmark's captured state: its config, per metric `{stat: value}` across hosts (max, min,
  mean; p50 and p99 with more than one host), per-leaf SHA-256 digests, inventory and run manifest."""

  benchmark_name: str
  captured_at: str  # ISO 8601 UTC
  captured_at_sha: str  # the code's git sha: the file's name
  fixture: str  # the checkpoint or data the benchmark ran on
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
    """The baseline in `payload`, metric values as floats; ValueError for another schema version (or none)."""
    raw = json.loads(payload)
    version = raw.pop("schema_version", None)
    if version != _SCHEMA_VERSION:
      raise ValueError(
          f"Baseline schema_version {version} != supported {_SCHEMA_VERSION}; regenerate the baseline against the"
          " current framework."
      )
    raw["metrics"] = {key: {stat: float(v) for stat, v in stats.items()} for key, stats in raw.get("metrics", {}).items()}
    return cls(**raw)


class BaselineRecorder:
  """Writes baselines into a directory (local, gs:// or s3://) as `<sha>.json` (`unknown.json` without a sha)."""

  def __init__(self, sink_path: str | os.PathLike):
    self._sink = str(sink_path)

  def write(self, baseline: Baseline) -> pathlib.Path | str:
    """Writes `baseline`, replacing a file of the same sha; its path, or its URL in a store."""
    name = f"{baseline.captured_at_sha or 'unknown'}.json"
    target = f"{self._sink.rstrip('/')}/{name}" if "://" in self._sink else pathlib.Path(self._sink) / name
    ckptbench.write_location(target, baseline.to_json().encode())
    return target


@dataclasses.dataclass(frozen=True)
class MetricDelta:
  """One metric against its baseline: `ratio` is baseline / current (None when current is 0), so for a
  time 2.0 means the run took half as long, for a rate the opposite."""

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
  """Why `baseline` must not be compared with a run on `current_backend` (timings of different
  backends are not comparable), or None; a baseline that records no backend is compared."""
  recorded = baseline.manifest.get("backend", "unknown")
  if recorded in ("unknown", current_backend):
    return None
  return f"baseline ran on {recorded}, this run on {current_backend}"


class BaselineComparer:
  """Reads a baseline file and compares a run's metrics with it."""

  def __init__(self, source_path: str | os.PathLike):
    self._source = source_path

  def load(self) -> Baseline:
    """The baseline in the file (CkptbenchError when it cannot be read, ValueError for another schema)."""
    return Baseline.from_json(ckptbench.read_location(self._source).decode("utf-8"))

  def compare(
      self, current_metrics: dict[str, dict[str, float]], baseline: Baseline | None = None, *, stat: str = "mean"
  ) -> ComparisonReport:
    """The run's `stat` ("mean", "max", ...) of every metric both sides carry it for, against the
    baseline's (read from the file when None)."""
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
