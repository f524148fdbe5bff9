"""The records a run writes, typed: one `RunRecord` per run x host, and the suite's summary.

They are what results.jsonl and summary.json hold (docs/ARCHITECTURE.md): `to_json()`
is what is written, `from_json()` reads it back and refuses a schema it does not
know. The metric values inside them are typed too (`api/_values.py`): a
`MetricEntry` per tag and run, a `MetricStatistics` per tag and benchmark.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import traceback
from collections.abc import Mapping
from typing import Any, Iterable

from ckptbench.api._tags import current_tag
from ckptbench.api._values import MetricEntry, MetricStatistics, SchemaError, json_fields

SCHEMA_VERSION = 1
SUMMARY_SCHEMA_VERSION = 2  # 2: `verdicts` and `repeats` added


def check_version(data: Any, what: str, known: int = SCHEMA_VERSION) -> None:
  """Raises SchemaError unless `data` is of schema version `known`."""
  version = data.get("schema_version") if isinstance(data, Mapping) else None
  if version != known:
    raise SchemaError(f"{what} schema_version {version!r}; this ckptbench reads {known}")


def _error_text(kind: str, message: str) -> str:
  return f"{kind}: {message}" if message else kind


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

  @property
  def text(self) -> str:
    """`Type: message`, as the tables show it."""
    return _error_text(self.type, self.message)

  def to_json(self) -> dict[str, str]:
    return dataclasses.asdict(self)

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> ErrorRecord:
    fields = json_fields(cls, data, "error")
    return cls(str(fields["type"]), str(fields.get("message", "")), str(fields.get("traceback", "")))


class RecordKind(enum.Enum):
  """What a results.jsonl record is. Every reader selects records through the selectors below
  (`timed_runs`, `sampled_records`, `measured_records`, `warmup_runs`, `memory_pass_records`), never a
  filter of its own, so that a new kind changes one place; a record's `kind` is read only to show it."""

  TIMED = "timed"  # a timed repeat: it counts as a run; its timings, failures and repeat number are the run's
  WARMUP = "warm-up"  # before the timed repeats: no sample, not a run
  # A run of the memory pass (engine/memory/_pass.py): its metrics are samples (host memory, and what a
  # test_fn derived from it), but it is not a run: it is neither counted nor a timing.
  MEMORY_PASS = "memory pass"


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
  metrics: dict[str, MetricEntry]  # by tag
  inventory: dict[str, Any] | None = None
  notes: list[str] = dataclasses.field(default_factory=list)  # what the benchmark emulated or left out
  error: ErrorRecord | None = None
  # A run of the memory pass (engine/memory/_pass.py): a fresh process that measured host memory only;
  # its metrics are the host-memory tags, the timed runs' records have none of them.
  memory_pass: bool = False
  schema_version: int = SCHEMA_VERSION

  @property
  def failed(self) -> bool:
    return self.error is not None

  @property
  def kind(self) -> RecordKind:
    if self.memory_pass:
      return RecordKind.MEMORY_PASS
    return RecordKind.WARMUP if self.warmup else RecordKind.TIMED

  def value(self, tag: str) -> float | None:
    """The number measured for `tag`; None when absent or not a finite number (what every statistic,
    verdict, baseline and history reads: an infinity or NaN never reaches one)."""
    entry = self.metrics.get(tag)
    return None if entry is None or not math.isfinite(entry.value) else entry.value

  def to_json(self) -> dict[str, Any]:
    """The results.jsonl form (schema_version first, as the docs show it)."""
    data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "schema_version"}
    data["metrics"] = {tag: entry.to_json() for tag, entry in self.metrics.items()}
    data["error"] = None if self.error is None else self.error.to_json()
    return {"schema_version": self.schema_version, **data}

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> RunRecord:
    """Reads a results.jsonl record.

    Raises:
      SchemaError: another schema_version, or a field missing.
    """
    check_version(data, "record")
    fields = json_fields(cls, data, "record")
    if not isinstance(fields["metrics"], Mapping):
      raise SchemaError("record metrics is not a JSON object")
    fields["metrics"] = {current_tag(tag): MetricEntry.from_json(e, tag) for tag, e in fields["metrics"].items()}
    fields["error"] = None if not fields.get("error") else ErrorRecord.from_json(fields["error"])
    return cls(**fields)


def timed_runs(records: Iterable[RunRecord]) -> list[RunRecord]:
  """The runs of `records`, failed ones included: what "runs" counts, the timings, the repeats done."""
  return [r for r in records if r.kind is RecordKind.TIMED]


def warmup_runs(records: Iterable[RunRecord]) -> list[RunRecord]:
  """The warm-ups of `records`: what an export that keeps warm-ups apart, or a plot that shows them, reads."""
  return [r for r in records if r.kind is RecordKind.WARMUP]


def memory_pass_records(records: Iterable[RunRecord]) -> list[RunRecord]:
  """The memory pass's records of `records`, failed ones included."""
  return [r for r in records if r.kind is RecordKind.MEMORY_PASS]


def measured_records(records: Iterable[RunRecord]) -> list[RunRecord]:
  """Every record but the warm-ups, failed ones included: the timed runs and the memory pass's, in order."""
  return [r for r in records if r.kind is not RecordKind.WARMUP]


def sampled_records(records: Iterable[RunRecord]) -> list[RunRecord]:
  """The records whose metrics are samples: the timed runs and the memory pass's, those that succeeded.

  A tag's samples come from one kind only (the memory pass keeps only the tags the timed runs lack),
  so a reader takes `record.value(tag)` from these and needs no filter of its own.
  """
  return [r for r in measured_records(records) if not r.failed]


@dataclasses.dataclass(frozen=True)
class RunFailure:
  """A failed run in summary.json: which repeat on which host, and its error."""

  repeat: int
  host: int
  type: str
  message: str

  @property
  def text(self) -> str:
    return _error_text(self.type, self.message)


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
  errors: list[RunFailure]
  metrics: dict[str, MetricStatistics]  # by tag

  def to_json(self) -> dict[str, Any]:
    data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
    data["errors"] = [dataclasses.asdict(e) for e in self.errors]
    data["metrics"] = {tag: stats.to_json() for tag, stats in self.metrics.items()}
    return data

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> BenchmarkSummary:
    """Reads a summary.json entry.

    Raises:
      SchemaError: a field missing.
    """
    fields = json_fields(cls, data, "benchmark summary")
    fields["errors"] = [RunFailure(**json_fields(RunFailure, e, "benchmark error")) for e in fields["errors"]]
    if not isinstance(fields["metrics"], Mapping):
      raise SchemaError("benchmark summary metrics is not a JSON object")
    fields["metrics"] = {current_tag(tag): MetricStatistics.from_json(s, tag) for tag, s in fields["metrics"].items()}
    return cls(**fields)


@dataclasses.dataclass(frozen=True)
class SkippedMesh:
  """A mesh of the suite that this machine cannot build, and why."""

  mesh: str
  reason: str


@dataclasses.dataclass(frozen=True)
class NotRun:
  """A sweep point left out (an invalid combination, or unsupported here), and why."""

  generator: str
  options: dict[str, Any]
  reason: str


@dataclasses.dataclass(frozen=True)
class SuiteSummary:
  """summary.json: statistics per benchmark, and what the plan left out and why."""

  suite: str
  benchmarks: list[BenchmarkSummary]
  reference: dict[str, Any] | None = None  # the variant the verdict compares the others with
  interrupted: bool = False
  skipped_meshes: list[SkippedMesh] = dataclasses.field(default_factory=list)
  notes: list[str] = dataclasses.field(default_factory=list)
  invalid_combinations: list[NotRun] = dataclasses.field(default_factory=list)
  unsupported: list[NotRun] = dataclasses.field(default_factory=list)
  # One per compared headline metric (api._verdict_record.VerdictRecord); the console and report read these.
  verdicts: list[Any] = dataclasses.field(default_factory=list)
  # A sweep of two or more factors: their main effects and two-factor interactions (api._effect_record).
  effects: list[Any] = dataclasses.field(default_factory=list)
  interactions: list[Any] = dataclasses.field(default_factory=list)
  # The suite's `floor:` variant, and each other variant's share of it (api._floor_record.FloorShareRecord).
  floor: dict[str, Any] | None = None
  floor_shares: list[Any] = dataclasses.field(default_factory=list)
  repeats: Mapping[str, Any] | None = None  # how the repeats were decided: {"mode": "auto"|"fixed", ...}
  schema_version: int = SUMMARY_SCHEMA_VERSION

  def to_json(self) -> dict[str, Any]:
    """The summary.json form, in the order docs/outputs.md shows."""
    return {
        "schema_version": self.schema_version,
        "suite": self.suite,
        "reference": self.reference,
        "interrupted": self.interrupted,
        "skipped_meshes": [dataclasses.asdict(s) for s in self.skipped_meshes],
        "notes": list(self.notes),
        "invalid_combinations": [dataclasses.asdict(n) for n in self.invalid_combinations],
        "unsupported": [dataclasses.asdict(n) for n in self.unsupported],
        "repeats": None if self.repeats is None else dict(self.repeats),
        "verdicts": [v.to_json() for v in self.verdicts],
        "effects": [e.to_json() for e in self.effects],
        "interactions": [i.to_json() for i in self.interactions],
        "floor": self.floor,
        "floor_shares": [f.to_json() for f in self.floor_shares],
        "benchmarks": [b.to_json() for b in self.benchmarks],
    }

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> SuiteSummary:
    """Reads summary.json (version 1, from before verdicts were data, reads with none).

    Raises:
      SchemaError: another schema_version, or a field missing.
    """
    from ckptbench.api._effect_record import EffectRecord, InteractionRecord  # noqa: PLC0415  (as below)
    from ckptbench.api._floor_record import FloorShareRecord  # noqa: PLC0415  (as below)
    from ckptbench.api._verdict_record import VerdictRecord  # noqa: PLC0415  (it imports this module)

    if not (isinstance(data, Mapping) and data.get("schema_version") == 1):
      check_version(data, "summary", SUMMARY_SCHEMA_VERSION)
    fields = json_fields(cls, data, "summary")
    fields["verdicts"] = [VerdictRecord.from_json(v) for v in fields.get("verdicts", [])]
    fields["effects"] = [EffectRecord.from_json(e) for e in fields.get("effects", [])]
    fields["interactions"] = [InteractionRecord.from_json(i) for i in fields.get("interactions", [])]
    fields["floor_shares"] = [FloorShareRecord.from_json(f) for f in fields.get("floor_shares", [])]
    fields["benchmarks"] = [BenchmarkSummary.from_json(b) for b in fields["benchmarks"]]
    fields["skipped_meshes"] = [SkippedMesh(**json_fields(SkippedMesh, s, "skipped mesh"))
                                for s in fields.get("skipped_meshes", [])]  # fmt: skip
    for name in ("invalid_combinations", "unsupported"):
      fields[name] = [NotRun(**json_fields(NotRun, n, name)) for n in fields.get(name, [])]
    return cls(**fields)

  @property
  def runs(self) -> int:
    return sum(b.runs for b in self.benchmarks)

  @property
  def failed(self) -> int:
    return sum(b.failed for b in self.benchmarks)
