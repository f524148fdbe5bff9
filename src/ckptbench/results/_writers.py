"""What a run writes as it goes, behind one small protocol (as the collectors are).

The runner calls every writer of `run_writers(OUT)` on process 0 only: `start`
once the plan is known, `add` with each run's records (every host's) as the run
ends, `finish` with the summary. The views (TensorBoard, the report) come later,
once the baseline comparison is on disk (`views/_views.py`).
"""

from __future__ import annotations

import pathlib
from typing import Any, Mapping, Protocol, Sequence

from ckptbench.api import RunRecord, SuiteSummary
from ckptbench.results._results import RESULTS_FILE, append_records, write_json_atomic

SUMMARY_FILE = "summary.json"
MANIFEST_FILE = "manifest.json"


class RunWriter(Protocol):
  """A file of OUT written during a run; a writer subclassing this inherits no-ops for what it skips."""

  def start(self, manifest: Mapping[str, Any]) -> None:
    """The run is about to start."""

  def add(self, records: Sequence[RunRecord]) -> None:
    """One run ended: its records, durable before this returns."""

  def finish(self, summary: SuiteSummary, manifest: Mapping[str, Any]) -> None:
    """The run ended (possibly interrupted)."""


class ResultsFile(RunWriter):
  """results.jsonl: one line per record, appended and fsynced as each run ends."""

  def __init__(self, out_dir: pathlib.Path):
    self.path = pathlib.Path(out_dir) / RESULTS_FILE

  def add(self, records: Sequence[RunRecord]) -> None:
    append_records(self.path, records)


class SummaryFile(RunWriter):
  """summary.json, written atomically at the end."""

  def __init__(self, out_dir: pathlib.Path):
    self.path = pathlib.Path(out_dir) / SUMMARY_FILE

  def finish(self, summary: SuiteSummary, manifest: Mapping[str, Any]) -> None:
    write_json_atomic(self.path, summary.to_json())


class ManifestFile(RunWriter):
  """manifest.json: written at the start (so a killed run has one) and again with the end time."""

  def __init__(self, out_dir: pathlib.Path):
    self.path = pathlib.Path(out_dir) / MANIFEST_FILE

  def start(self, manifest: Mapping[str, Any]) -> None:
    write_json_atomic(self.path, manifest)

  def finish(self, summary: SuiteSummary, manifest: Mapping[str, Any]) -> None:
    write_json_atomic(self.path, manifest)


def run_writers(out_dir: pathlib.Path) -> tuple[RunWriter, ...]:
  """The files every run writes: results.jsonl, summary.json, manifest.json."""
  return ResultsFile(out_dir), SummaryFile(out_dir), ManifestFile(out_dir)
