"""The records a run writes, typed: one `RunRecord` per run x host, its `ErrorRecord`.

They are what results.jsonl holds (docs/outputs.md): `to_json()` is the line
written, `from_json()` reads one back and refuses a schema it does not know.
"""

from __future__ import annotations

import dataclasses
import traceback
from typing import Any, Mapping

SCHEMA_VERSION = 1


class SchemaError(ValueError):
  """A record written by an incompatible ckptbench (another schema_version)."""


@dataclasses.dataclass(frozen=True)
class ErrorRecord:
  """Why a run failed: an exception's type and message, with its traceback."""

  type: str
  message: str
  traceback: str = ""

  @classmethod
  def from_exception(cls, error: BaseException, *, type: str | None = None, message: str | None = None) -> ErrorRecord:
    """The record of `error`; `type` and `message` replace the exception's own when given."""
    return cls(
        type=type or error.__class__.__name__,
        message=str(error) if message is None else message,
        traceback="".join(traceback.format_exception(error)),
    )

  def to_json(self) -> dict[str, str]:
    return dataclasses.asdict(self)

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> ErrorRecord:
    return cls(str(data["type"]), str(data.get("message", "")), str(data.get("traceback", "")))


@dataclasses.dataclass(frozen=True)
class RunRecord:
  """One run of one benchmark on one host: its identity, measurements and outcome."""

  suite: str
  benchmark: str
  key: str
  generator: str
  options: dict[str, Any]
  varying: dict[str, Any]
  mesh: dict[str, Any] | None
  checkpoint_config: dict[str, Any] | None
  repeat: int
  warmup: bool
  host: int
  num_hosts: int
  path: str
  started_at: str
  duration_s: float
  metrics: dict[str, dict[str, Any]]  # tag -> {"value": v, "unit": u}
  inventory: dict[str, Any] | None = None
  notes: list[str] = dataclasses.field(default_factory=list)  # what the benchmark emulated or left out
  error: ErrorRecord | None = None
  schema_version: int = SCHEMA_VERSION

  @property
  def failed(self) -> bool:
    return self.error is not None

  def to_json(self) -> dict[str, Any]:
    """The results.jsonl form (schema_version first, as the docs show it)."""
    data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "schema_version"}
    data["error"] = None if self.error is None else self.error.to_json()
    return {"schema_version": self.schema_version, **data}

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> RunRecord:
    """Reads a results.jsonl record.

    Raises:
      SchemaError: another schema_version, or a field missing.
    """
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
      raise SchemaError(f"record schema_version {version!r}; this ckptbench reads {SCHEMA_VERSION}")
    names = {f.name for f in dataclasses.fields(cls)}
    missing = sorted(f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING and f.name not in data)
    if missing:
      raise SchemaError(f"record lacks {', '.join(missing)}")
    fields = {k: v for k, v in data.items() if k in names}
    error = data.get("error")
    fields["error"] = None if not error else ErrorRecord.from_json(error)
    return cls(**fields)


@dataclasses.dataclass(frozen=True)
class BenchmarkSummary:
  """One benchmark's entry in summary.json: identity, run counts, errors, statistics per metric."""

  name: str
  key: str
  generator: str | None
  options: dict[str, Any] | None
  varying: dict[str, Any] | None
  mesh: dict[str, Any] | None
  checkpoint_config: dict[str, Any] | None
  runs: int  # distinct measured repeats
  failed: int  # repeats in which some host's run failed
  errors: list[dict[str, Any]]  # {"repeat", "host", "type", "message"}
  metrics: dict[str, dict[str, Any]]  # tag -> {"unit", "n", "mean", "std", "min", "max", "median", ["hosts"]}

  def to_json(self) -> dict[str, Any]:
    return dataclasses.asdict(self)

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> BenchmarkSummary:
    """Reads a summary.json entry.

    Raises:
      SchemaError: a field missing.
    """
    missing = sorted(f.name for f in dataclasses.fields(cls) if f.name not in data)
    if missing:
      raise SchemaError(f"benchmark summary lacks {', '.join(missing)}")
    return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)})
