"""A baseline document, typed: per benchmark its summary and, per metric, the raw samples.

The JSON form (`to_json`, read back by `from_json`) is the one `_baseline.py`'s
docstring shows; each metric's `"unit"` and `"stats"` are the summary.json
statistics (`MetricStatistics`), the rest are the samples (`MetricSamples`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ckptbench.api import BenchmarkSummary, MetricStatistics, SchemaError, current_tag, finite_number
from ckptbench.errors import CkptbenchError
from ckptbench.results import run_backend
from ckptbench.stats import Direction, describe

SCHEMA_VERSION = 1
_FORMAT = "ckptbench-baseline"


@dataclasses.dataclass(frozen=True)
class Samples:
  """Per-repeat samples: one host's (with its repeat numbers), or across hosts (with the reduction)."""

  values: list[float]
  repeats: list[int] | None = None  # one host's samples
  reduce: str | None = None  # across hosts: how each repeat's hosts were reduced (max, min, mean)

  def to_json(self) -> dict[str, Any]:
    head = {"repeats": self.repeats} if self.repeats is not None else {"reduce": self.reduce}
    return {**head, "values": list(self.values), "stats": describe(self.values)}

  @classmethod
  def from_json(cls, data: Any) -> Samples:
    if not isinstance(data, Mapping) or not isinstance(data.get("values"), list):
      raise SchemaError("samples are not a {'values': [...]} object")
    values = [finite_number(v, f"sample {i}") for i, v in enumerate(data["values"])]  # what comparisons read
    repeats = data.get("repeats")
    if repeats is not None and not (isinstance(repeats, list) and all(type(r) is int for r in repeats)):
      raise SchemaError(f"repeats is {repeats!r}, not a list of integers")
    return cls(values, repeats, data.get("reduce"))


@dataclasses.dataclass(frozen=True)
class MetricSamples:
  """One metric of a baseline benchmark: how to compare it, and its samples per host and across hosts."""

  direction: Direction
  headline: bool
  hosts: dict[int, Samples]
  across_hosts: Samples  # one sample per repeat, the worst host's: what comparisons use


@dataclasses.dataclass(frozen=True)
class BaselineBenchmark:
  """A benchmark of a baseline: its summary.json entry (the sampled metrics'), and the samples."""

  summary: BenchmarkSummary
  samples: dict[str, MetricSamples]  # by tag, the same tags as summary.metrics

  @property
  def name(self) -> str:
    return self.summary.name

  def to_json(self) -> dict[str, Any]:
    """The summary.json entry without its key (the entry's name), each metric with its samples."""
    data = {k: v for k, v in self.summary.to_json().items() if k != "key"}
    data["metrics"] = {tag: self._metric_json(tag) for tag in self.samples}
    return data

  def _metric_json(self, tag: str) -> dict[str, Any]:
    stats, samples = self.summary.metrics[tag].to_json(), self.samples[tag]
    return {
        "unit": stats.pop("unit"),
        "direction": samples.direction.value,
        "headline": samples.headline,
        "stats": stats,
        "hosts": {str(h): s.to_json() for h, s in samples.hosts.items()},
        "across_hosts": samples.across_hosts.to_json(),
    }

  @classmethod
  def from_json(cls, key: str, data: Any) -> BaselineBenchmark:
    if not isinstance(data, Mapping) or not isinstance(data.get("metrics"), Mapping):
      raise SchemaError(f"benchmark {key} is not an object with metrics")
    metrics, samples = {}, {}
    for written, entry in data["metrics"].items():
      if not isinstance(entry, Mapping):
        raise SchemaError(f"metric {written} of {key} is not an object")
      tag = current_tag(written)  # a baseline captured before a tag was renamed compares under the new name
      metrics[tag] = MetricStatistics.from_json({"unit": entry.get("unit", ""), **(entry.get("stats") or {})}, tag)
      samples[tag] = MetricSamples(
          direction=Direction(entry.get("direction", "neutral")),
          headline=bool(entry.get("headline")),
          hosts={int(h): Samples.from_json(s) for h, s in (entry.get("hosts") or {}).items()},
          across_hosts=Samples.from_json(entry.get("across_hosts")),
      )
    summary = BenchmarkSummary.from_json({**data, "key": key, "metrics": {}})
    return cls(dataclasses.replace(summary, metrics=metrics), samples)


@dataclasses.dataclass(frozen=True)
class Baseline:
  """A baseline document (`_baseline.py`'s docstring shows its JSON form)."""

  label: str
  captured_at: str
  suite: str | None
  manifest: dict[str, Any]
  benchmarks: dict[str, BaselineBenchmark]  # by key
  # What the run ran on (`run_backend`): a comparison with a run on another backend is refused.
  # None: a baseline captured before backends were recorded, and without one in its manifest.
  backend: str | None = None
  schema_version: int = SCHEMA_VERSION

  def to_json(self) -> dict[str, Any]:
    return {
        "schema_version": self.schema_version, "format": _FORMAT, "label": self.label,
        "captured_at": self.captured_at, "suite": self.suite, "backend": self.backend, "manifest": self.manifest,
        "benchmarks": {key: b.to_json() for key, b in self.benchmarks.items()},
    }  # fmt: skip

  @classmethod
  def from_json(cls, document: Any, where: str) -> Baseline:
    """Reads a baseline document; `where` names it in errors.

    Raises:
      CkptbenchError: not a baseline, or of another schema version.
    """
    if not isinstance(document, dict) or document.get("format") != _FORMAT:
      raise CkptbenchError(f"{where} is not a ckptbench baseline (no \"format\": \"{_FORMAT}\")")
    version = document.get("schema_version")
    if version != SCHEMA_VERSION:
      raise CkptbenchError(
          f"{where} has schema_version {version!r}, this ckptbench reads {SCHEMA_VERSION!r};"
          " capture the baseline again with this version"
      )
    try:
      written = document.get("benchmarks") or {}
      if not isinstance(written, Mapping):
        raise SchemaError(f"benchmarks is {type(written).__name__}, not an object keyed by benchmark key")
      benchmarks = {key: BaselineBenchmark.from_json(key, entry) for key, entry in written.items()}
    except (SchemaError, TypeError, ValueError, AttributeError) as e:
      raise CkptbenchError(f"{where}: not a baseline this ckptbench can read: {e}") from None
    manifest = dict(document.get("manifest") or {})
    backend = document["backend"] if "backend" in document else run_backend(manifest)  # older: the manifest's
    if backend is not None and (not isinstance(backend, str) or not backend):
      raise CkptbenchError(f"{where}: \"backend\" is {backend!r}; a baseline's backend is a name such as \"cpu\"")
    return cls(
        label=str(document.get("label", "")), captured_at=str(document.get("captured_at", "")),
        suite=document.get("suite"), manifest=manifest, benchmarks=benchmarks, backend=backend,
    )  # fmt: skip
