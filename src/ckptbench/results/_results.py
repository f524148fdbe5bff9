"""results.jsonl: appended and fsynced run by run, read back typed, tolerating a torn last line."""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any, Sequence

from ckptbench.api import RunRecord, SchemaError
from ckptbench.errors import CkptbenchError
from ckptbench.results._files import read_json_lines

RESULTS_FILE = "results.jsonl"


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
  """The records of OUT/results.jsonl, typed and checked.

  A line that is not UTF-8 JSON (a torn last line of a killed run, a damaged byte) is skipped, and
  one warning names the lines (`results/_files.py`'s policy).

  Raises:
    CkptbenchError: naming the file and line of a record of another schema
      version, or of a JSON line that is not a record.
  """
  path = pathlib.Path(out_dir) / RESULTS_FILE
  records = []
  for line in read_json_lines(path):
    try:
      records.append(RunRecord.from_json(line.value))
    except (SchemaError, TypeError) as e:
      raise CkptbenchError(f"{path}:{line.number}: not a record this ckptbench can read: {e}") from None
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
