"""results.jsonl: appended and fsynced run by run, read back tolerating a torn last line."""

from __future__ import annotations

import json
import logging
import os
import pathlib
from typing import Any, Iterator

from ckptbench.api._records import RunRecord, SchemaError
from ckptbench.errors import CkptbenchError

RESULTS_FILE = "results.jsonl"
_log = logging.getLogger(__name__)


class ResultsWriter:
  """Appends one JSON line per record and makes it durable before returning."""

  def __init__(self, out_dir: pathlib.Path):
    self.path = pathlib.Path(out_dir) / RESULTS_FILE

  def append(self, records: list[dict[str, Any]]) -> None:
    lines = "".join(json.dumps(r, default=_json_default, allow_nan=True) + "\n" for r in records)
    try:
      with open(self.path, "a+b") as f:
        if f.tell() and not _ends_with_newline(f):  # a torn last line (killed mid-write)
          lines = "\n" + lines  # keeps the next record on a line of its own
        f.write(lines.encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())
    except OSError as e:
      raise CkptbenchError(f"cannot append to {self.path}: {e.strerror or e}") from None


def _ends_with_newline(f) -> bool:
  f.seek(-1, os.SEEK_END)
  last = f.read(1)
  f.seek(0, os.SEEK_END)
  return last == b"\n"


def _json_default(value: Any) -> Any:
  if hasattr(value, "item"):  # numpy scalars
    return value.item()
  return str(value)


def iter_results(out_dir: str | pathlib.Path) -> Iterator[dict[str, Any]]:
  """Yields the records of OUT/results.jsonl; a torn last line (a killed run) is skipped."""
  path = pathlib.Path(out_dir) / RESULTS_FILE
  if not path.exists():
    return
  with open(path, encoding="utf-8") as f:
    for number, line in enumerate(f, 1):
      if not line.strip():
        continue
      try:
        yield json.loads(line)
      except json.JSONDecodeError:
        _log.warning("%s:%d: skipping an incomplete record (interrupted write)", path, number)


def read_results(out_dir: str | pathlib.Path) -> list[dict[str, Any]]:
  """The records of OUT/results.jsonl in their JSON form (for views and exports)."""
  return list(iter_results(out_dir))


def read_records(out_dir: str | pathlib.Path) -> list[RunRecord]:
  """The records of OUT/results.jsonl, typed and checked (for resuming a run).

  Raises:
    CkptbenchError: a record of another schema version, or not a record at all.
  """
  records = []
  for number, data in enumerate(iter_results(out_dir), 1):
    try:
      records.append(RunRecord.from_json(data))
    except (SchemaError, TypeError, AttributeError) as e:
      raise CkptbenchError(f"{pathlib.Path(out_dir) / RESULTS_FILE}: record {number} cannot be resumed: {e}") from None
  return records


def write_json_atomic(path: pathlib.Path, data: Any) -> None:
  """Writes JSON through a temporary file and a rename, so readers never see half a file."""
  path = pathlib.Path(path)
  tmp = path.with_name(f".{path.name}.tmp")
  try:
    with open(tmp, "w", encoding="utf-8") as f:
      json.dump(data, f, indent=1, default=_json_default)
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
  except OSError as e:  # e.g. a full disk: say which file, keep the previous version
    tmp.unlink(missing_ok=True)
    raise CkptbenchError(f"cannot write {path}: {e.strerror or e}") from None
