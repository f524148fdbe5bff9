"""One run in a history: its label, time, environment and, per benchmark and headline metric,
the median, its interval and the samples (`HistoryEntry`), built from a finished OUT."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import math
import pathlib
import uuid
from typing import Any, Mapping

from ckptbench.analysis import host_memory_mode
from ckptbench.api import RunRecord, SchemaError, finite_number, is_judged, json_fields, sampled_records
from ckptbench.errors import CkptbenchError
from ckptbench.results import decode_document, read_outputs
from ckptbench.stats import Direction, median_interval, metric_direction, per_repeat_across_hosts

SCHEMA_VERSION = 1
MAX_SAMPLES = 64  # per point: enough for the two-level bootstrap, small enough for 10,000 entries
# A sample's largest size: its square and the sums of 64 of them stay finite in the statistics.
MAX_MAGNITUDE = 1e150
_VERSIONED = ("ckptbench", "orbax-checkpoint", "jax", "jaxlib", "tensorstore", "torch", "python")


@dataclasses.dataclass(frozen=True)
class Environment:
  """Where a run ran. `machine` is the series key: runs on different hardware or backends never share a series."""

  versions: Mapping[str, str | None]
  backend: str | None
  device_kind: str | None
  device_count: int | None
  process_count: int | None
  host: str | None
  fingerprint: str  # the hardware: CPU model, cores, memory, architecture (not the host name)
  # How host memory was measured (engine/memory/_pass.py): its series are never mixed across ways.
  host_memory: str = "inline"

  @property
  def machine(self) -> str:
    return f"{self.fingerprint} {self.backend} {self.device_count}x{self.device_kind}"

  def differences(self, earlier: Environment) -> list[str]:
    """What changed since `earlier`: versions and the host, as `name old -> new`."""
    changed = [f"{name} {earlier.versions.get(name)} -> {self.versions.get(name)}"
               for name in sorted(set(self.versions) | set(earlier.versions))
               if self.versions.get(name) != earlier.versions.get(name)]  # fmt: skip
    if self.host != earlier.host:
      changed.append(f"host {earlier.host} -> {self.host}")
    if self.host_memory != earlier.host_memory:
      changed.append(f"host memory measured {earlier.host_memory} -> {self.host_memory}")
    return changed


@dataclasses.dataclass(frozen=True)
class Point:
  """One benchmark variant's headline metric in one run."""

  benchmark: str
  key: str
  metric: str
  unit: str
  median: float
  low: float
  high: float
  samples: tuple[float, ...]


@dataclasses.dataclass(frozen=True)
class HistoryEntry:
  name: str  # unique: its object's name in the history
  label: str
  time: str  # ISO 8601, UTC: when the run started
  suite: str
  environment: Environment
  points: tuple[Point, ...]

  def to_json(self) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, **dataclasses.asdict(self)}, sort_keys=True)

  @classmethod
  def from_json(cls, data: bytes, where: str) -> HistoryEntry:
    """Reads an entry back, the one reader of history entries (`where` names it in errors).

    Every sample is a finite number (`MAX_MAGNITUDE` at most), so no statistic or gate meets one that
    is not.

    Raises:
      CkptbenchError: naming `where`: bytes that are not UTF-8 JSON, another schema version, a field
        missing or of another type, a sample that is not a finite number.
    """
    doc = decode_document(data, where)
    version = doc.get("schema_version") if isinstance(doc, Mapping) else None
    if version != SCHEMA_VERSION:
      raise CkptbenchError(f"{where}: history entry schema_version {version!r}, expected {SCHEMA_VERSION}")
    try:
      fields = json_fields(cls, doc, "history entry")
      environment = Environment(**json_fields(Environment, fields["environment"], "environment"))
      if not all(isinstance(v, str) or v is None for v in environment.versions.values()):
        raise SchemaError("environment versions are not strings")
      points = tuple(_point(p, f"point {i}") for i, p in enumerate(fields["points"]))
    except SchemaError as e:
      raise CkptbenchError(f"{where}: not a ckptbench history entry: {e}") from None
    return cls(fields["name"], fields["label"], fields["time"], fields["suite"], environment, points)


def _point(data: Any, what: str) -> Point:
  fields = json_fields(Point, data, what)
  samples = fields["samples"]
  if not 0 < len(samples) <= MAX_SAMPLES:
    raise SchemaError(f"{what} has {len(samples)} samples; an entry keeps 1 to {MAX_SAMPLES}")
  for name in ("median", "low", "high"):
    fields[name] = _sample(fields[name], f"{what} {name}")
  fields["samples"] = tuple(_sample(v, f"{what} sample {i}") for i, v in enumerate(samples))
  return Point(**fields)


def _sample(value: Any, what: str) -> float:
  number = finite_number(value, what)
  if abs(number) > MAX_MAGNITUDE:
    raise SchemaError(f"{what} is {number:g}, beyond the {MAX_MAGNITUDE:g} a measurement may be")
  return number


def default_label(manifest: Mapping[str, Any] | None) -> str:
  """The git commit the run was made from (`-dirty` with changes), else the run's start time."""
  git = (manifest or {}).get("git") or {}
  if git.get("sha"):
    return git["sha"][:12] + ("-dirty" if git.get("dirty") else "")
  return str((manifest or {}).get("started_at") or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))


def environment_of(manifest: Mapping[str, Any]) -> Environment:
  versions = manifest.get("versions") or {}
  machine = manifest.get("machine") or {}
  hardware = [machine.get("cpu_model"), machine.get("arch"), machine.get("memory_bytes"), manifest.get("cpu_count"),
              manifest.get("platform", "").split("-")[0] if not machine else None]  # fmt: skip
  fingerprint = hashlib.sha256(json.dumps(hardware).encode()).hexdigest()[:12]
  return Environment(
      versions={name: versions.get(name) for name in _VERSIONED},
      backend=manifest.get("backend"),
      device_kind=manifest.get("device_kind"),
      device_count=manifest.get("device_count"),
      process_count=manifest.get("process_count"),
      host=manifest.get("hostname"),
      fingerprint=fingerprint,
      host_memory=host_memory_mode(manifest),
  )


def _samples(records: list[RunRecord], key: str, tag: str, direction: Direction) -> list[float]:
  by_host: dict[int, dict[int, float]] = {}
  for r in sampled_records(records):
    value = r.value(tag) if r.key == key else None
    if value is not None and math.isfinite(value):
      by_host.setdefault(r.host, {})[r.repeat] = value
  return per_repeat_across_hosts(by_host, direction)


def entry_from_outputs(out_dir: str | pathlib.Path, label: str | None = None) -> HistoryEntry:
  """The history entry of a finished run's OUT (its summary, results and manifest).

  Raises:
    CkptbenchError: naming OUT when it has no summary.json or manifest.json, or no headline metric.
  """
  outputs = read_outputs(out_dir)
  if outputs.summary is None or outputs.manifest is None:
    raise CkptbenchError(f"{out_dir}: a history entry needs summary.json and manifest.json (a finished run)")
  points = []
  for bench in outputs.summary.benchmarks:
    for tag, stats in sorted(bench.metrics.items()):
      if not is_judged(tag) or not stats.n:  # what a suite is judged on, the one rule
        continue
      samples = _samples(outputs.results, bench.key, tag, metric_direction(tag, stats.unit))
      interval = median_interval(samples)
      if interval is None:
        continue
      points.append(Point(bench.name, bench.key, tag, stats.unit, interval.median, interval.low, interval.high,
                          tuple(samples[:MAX_SAMPLES])))  # fmt: skip
  if not points:
    raise CkptbenchError(f"{out_dir}: no headline metric with a finite sample to keep in a history")
  started = outputs.manifest.get("started_at") or datetime.datetime.now(datetime.timezone.utc).isoformat()
  stamp = started.replace("-", "").replace(":", "")[:15]
  return HistoryEntry(
      name=f"{stamp}-{uuid.uuid4().hex[:16]}",
      label=label or default_label(outputs.manifest),
      time=started,
      suite=outputs.suite,
      environment=environment_of(outputs.manifest),
      points=tuple(points),
  )
