"""Reading a finished (or half-finished) output directory back.

Every output writer (TensorBoard, HTML report, exports) works from the files a
run leaves in OUT (see docs/ARCHITECTURE.md), so each also works after the
fact, on a copy of someone else's results.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import pathlib
from typing import Any

from ckptbench.errors import CkptbenchError
from ckptbench.outputs._results import RESULTS_FILE, read_results

_log = logging.getLogger(__name__)

SUMMARY_FILE = "summary.json"
MANIFEST_FILE = "manifest.json"
COMPARISON_FILE = "comparison.json"

@dataclasses.dataclass(frozen=True)
class RunOutputs:
  """What an output directory holds; absent files are None (or empty)."""

  out_dir: pathlib.Path
  results: list[dict[str, Any]]
  summary: dict[str, Any] | None
  manifest: dict[str, Any] | None
  comparison: list[dict[str, Any]] | None

  @property
  def suite(self) -> str:
    for source in (self.summary, *self.results[:1]):
      if source and source.get("suite"):
        return str(source["suite"])
    return self.out_dir.name

  @property
  def benchmarks(self) -> list[dict[str, Any]]:
    """The benchmark entries of summary.json (empty without one)."""
    if not self.summary:
      return []
    return [b for b in self.summary.get("benchmarks") or [] if isinstance(b, dict)]

  def measured_runs(self) -> list[dict[str, Any]]:
    """The results records that count (warmup runs left out)."""
    return [r for r in self.results if not r.get("warmup")]


def read_outputs(out_dir: str | pathlib.Path) -> RunOutputs:
  """Reads results.jsonl, summary.json, manifest.json and comparison.json.

  Raises:
    CkptbenchError: when `out_dir` is not a directory or holds neither
      results.jsonl nor summary.json, or a file is not valid JSON.
  """
  out = pathlib.Path(out_dir)
  if not out.is_dir():
    raise CkptbenchError(f"{out} is not a directory; pass the output directory of `ckptbench run`")
  results = [r for r in read_results(out) if isinstance(r, dict)]
  summary = _read_json(out / SUMMARY_FILE)
  if not results and summary is None:
    raise CkptbenchError(
        f"{out} holds no {RESULTS_FILE} or {SUMMARY_FILE}; is it the output directory"
        " of `ckptbench run`?"
    )
  comparison = _read_json(out / COMPARISON_FILE)
  if isinstance(comparison, dict):  # tolerate {"rows": [...]} as well as a bare list
    comparison = comparison.get("rows") or comparison.get("comparisons")
  if comparison is not None and not isinstance(comparison, list):
    _log.warning("%s: expected a list of rows; ignoring it", out / COMPARISON_FILE)
    comparison = None
  return RunOutputs(
      out_dir=out,
      results=results,
      summary=summary if isinstance(summary, dict) else None,
      manifest=_as_dict(_read_json(out / MANIFEST_FILE)),
      comparison=[row for row in comparison if isinstance(row, dict)] if comparison else None,
  )


def _as_dict(value: Any) -> dict[str, Any] | None:
  return value if isinstance(value, dict) else None


def _read_json(path: pathlib.Path) -> Any:
  if not path.exists():
    return None
  try:
    return json.loads(path.read_text())
  except json.JSONDecodeError as e:
    raise CkptbenchError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None


def metric_value(entry: Any) -> float | None:
  """The number of a results metric entry (`{"value": v, "unit": u}` or a bare number)."""
  if isinstance(entry, dict):
    entry = entry.get("value")
  if isinstance(entry, bool) or not isinstance(entry, (int, float)):
    return None
  return float(entry)


def error_text(error: Any) -> str:
  """`Type: message` of a recorded error (a dict, a string or None)."""
  if not error:
    return ""
  if isinstance(error, dict):
    kind, message = error.get("type") or "Error", error.get("message") or ""
    return f"{kind}: {message}" if message else str(kind)
  return str(error)
