"""results.jsonl: appended and fsynced run by run, read back typed, tolerating a torn last line."""

from __future__ import annotations

import json
import logging
import os
import pathlib
from typing import Any, Sequence

from ckptbench.api import RunRecord, SchemaError
from ckptbench.errors import CkptbenchError

RESULTS_FILE = "results.jsonl"
_log = logging.getLogger(__name__)


def append_records(path: pathlib.Path, records: Sequence[RunRecord]) -> None:
  """Appends one JSON line per record to `path` and makes them durable before returning."""
  lines = "".join(json.dumps(r.to_json(), default=_json_default, allow_nan=True) + "\n" for r in records)
  try:
    with open(path, "a+b") as f:
      if f.tell() and not _ends_with_newline(f):  # a torn last line (killed mid-write)
        lines = "\n" + lines  # keeps the next record on a line of its own
      f.write(lines.encode("utf-8"))
      f.flush()
      os.fsync(f.fileno())
  except OSError as e:
    raise CkptbenchError(f"cannot append to {path}: {e.strerror or e}") from None


def _ends_with_newline(f) -> bool:
  f.seek(-1, os.SEEK_END)
  last = f.read(1)
  f.seek(0, os.SEEK_END)
  return last == b"\n"


def _json_default(value: Any) -> Any:
  if hasattr(value, "item"):  # numpy scalars
    return value.item()
  return str(value)


def read_records(out_dir: str | pathlib.Path) -> list[RunRecord]:
  """The records of OUT/results.jsonl, typed and checked; a torn last line (a killed run) is skipped.

  Raises:
    CkptbenchError: naming the file and line of a record of another schema
      version, or of a line that is not a record.
  """
  path = pathlib.Path(out_dir) / RESULTS_FILE
  if not path.exists():
    return []
  records = []
  with open(path, encoding="utf-8") as f:
    for number, line in enumerate(f, 1):
      if not line.strip():
        continue
      try:
        data = json.loads(line)
      except json.JSONDecodeError:
        _log.warning("%s:%d: skipping an incomplete record (interrupted write)", path, number)
        continue
      try:
        records.append(RunRecord.from_json(data))
      except (SchemaError, TypeError) as e:
        raise CkptbenchError(f"{path}:{number}: not a record this ckptbench can read: {e}") from None
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
