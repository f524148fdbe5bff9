"""The bytes of every file ckptbench reads back, and what it does with bytes it cannot read.

The policy, one per kind of file:
- a JSON document (summary.json, manifest.json, comparison.json, a baseline, a history entry,
  scale.json): UTF-8 and JSON, or refused in one line naming the file, the line and the column;
- JSON lines (results.jsonl): a line that is not UTF-8 or not JSON is skipped and counted (a torn
  write, a damaged byte), and one warning names the file and the lines; the others are read.

Finiteness and types are each format's own reader's (`from_json`), through `api.finite_number`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import pathlib
from typing import Any, Iterator

from ckptbench.errors import CkptbenchError

_log = logging.getLogger(__name__)


def decode_document(data: bytes, where: str) -> Any:
  """The JSON value of `data`, the whole of the file (or object) `where`.

  Raises:
    CkptbenchError: `where:line:column:` for a byte that is not UTF-8 or text that is not JSON.
  """
  try:
    text = data.decode("utf-8")
  except UnicodeDecodeError as e:
    line = data.count(b"\n", 0, e.start) + 1
    column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
    raise CkptbenchError(f"{where}:{line}:{column}: byte 0x{data[e.start]:02x} is not UTF-8 text") from None
  try:
    return json.loads(text)
  except json.JSONDecodeError as e:
    raise CkptbenchError(f"{where}:{e.lineno}:{e.colno}: not valid JSON ({e.msg})") from None
  except RecursionError:
    raise CkptbenchError(f"{where}: not a file ckptbench wrote (JSON nested too deep)") from None


def read_document(path: str | pathlib.Path) -> Any:
  """The JSON value of the file at `path`; None when there is no such file.

  Raises:
    CkptbenchError: naming the file, for bytes that are not UTF-8 JSON or a file that cannot be read.
  """
  path = pathlib.Path(path)
  try:
    data = path.read_bytes()
  except FileNotFoundError:
    return None
  except OSError as e:
    raise CkptbenchError(f"cannot read {path}: {e.strerror or e}") from None
  return decode_document(data, str(path))


@dataclasses.dataclass(frozen=True)
class JsonLine:
  number: int  # 1-based, as editors count
  value: Any


def read_json_lines(path: str | pathlib.Path) -> Iterator[JsonLine]:
  """Each JSON line of `path` (none when it is absent); unreadable lines are skipped and named once."""
  path = pathlib.Path(path)
  if not path.exists():
    return
  skipped = []
  with open(path, "rb") as f:
    for number, raw in enumerate(f, 1):
      if not raw.strip():
        continue
      try:
        value = json.loads(raw.decode("utf-8"))
      except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        skipped.append(number)
        continue
      yield JsonLine(number, value)
  if skipped:
    shown = ", ".join(map(str, skipped[:10])) + (f" and {len(skipped) - 10} more" if len(skipped) > 10 else "")
    _log.warning("%s: skipped %d line(s) that are not UTF-8 JSON (a torn or damaged write): line %s",
                 path, len(skipped), shown)  # fmt: skip
