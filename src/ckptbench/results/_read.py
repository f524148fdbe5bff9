"""Reading a finished (or half-finished) output directory back, typed.

Every output writer (TensorBoard, HTML report, exports) works from the files a
run leaves in OUT (see docs/ARCHITECTURE.md), so each also works after the
fact, on a copy of someone else's results.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import Any, Callable, TypeVar

from ckptbench.api import BenchmarkSummary, RunRecord, SuiteSummary
from ckptbench.errors import CkptbenchError
from ckptbench.results._comparison_record import Comparison
from ckptbench.results._files import read_document
from ckptbench.results._results import RESULTS_FILE, read_records
from ckptbench.results._writers import MANIFEST_FILE, SUMMARY_FILE

COMPARISON_FILE = "comparison.json"
_T = TypeVar("_T")


@dataclasses.dataclass(frozen=True)
class RunOutputs:
  """What an output directory holds; absent files are None (or empty)."""

  out_dir: pathlib.Path
  results: list[RunRecord]
  summary: SuiteSummary | None
  manifest: dict[str, Any] | None
  comparison: Comparison | None

  @property
  def suite(self) -> str:
    for source in (self.summary, *self.results[:1]):
      if source is not None and source.suite:
        return source.suite
    return self.out_dir.name

  @property
  def benchmarks(self) -> list[BenchmarkSummary]:
    """The benchmark entries of summary.json (empty without one)."""
    return [] if self.summary is None else self.summary.benchmarks

  @property
  def reference(self) -> dict[str, Any] | None:
    """The suite's `reference:` variant, as summary.json records it."""
    return None if self.summary is None else self.summary.reference


def read_outputs(out_dir: str | pathlib.Path) -> RunOutputs:
  """Reads results.jsonl, summary.json, manifest.json and comparison.json.

  Raises:
    CkptbenchError: when `out_dir` is not a directory or holds neither
      results.jsonl nor summary.json, or a file is not valid JSON or is of
      another schema version.
  """
  out = check_output_dir(out_dir)
  results = read_records(out)
  summary = _read_typed(out / SUMMARY_FILE, SuiteSummary.from_json)
  if not results and summary is None:
    raise _not_an_output_dir(out)
  manifest = read_document(out / MANIFEST_FILE)
  return RunOutputs(
      out_dir=out,
      results=results,
      summary=summary,
      manifest=manifest if isinstance(manifest, dict) else None,
      comparison=_read_typed(out / COMPARISON_FILE, Comparison.from_json),
  )


def _read_typed(path: pathlib.Path, from_json: Callable[[Any], _T]) -> _T | None:
  data = read_document(path)
  if data is None:
    return None
  try:
    return from_json(data)
  except (ValueError, TypeError, KeyError, AttributeError) as e:  # SchemaError, an unknown verdict, a bad shape
    raise CkptbenchError(f"{path}: not a file this ckptbench can read: {e}") from None


def check_output_dir(out_dir: str | os.PathLike) -> pathlib.Path:
  """`out_dir` as a path, once it is known to hold a run's results; else a one-line CkptbenchError."""
  out = pathlib.Path(out_dir)
  if not out.is_dir():
    raise CkptbenchError(f"{out} is not a directory; pass the output directory of `ckptbench run`")
  if not (out / RESULTS_FILE).is_file() and not (out / SUMMARY_FILE).is_file():
    raise _not_an_output_dir(out)
  return out


def _not_an_output_dir(out: pathlib.Path) -> CkptbenchError:
  return CkptbenchError(
      f"{out} holds no {RESULTS_FILE} or {SUMMARY_FILE}; is it the output directory of `ckptbench run`?"
  )
