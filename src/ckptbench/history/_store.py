"""A history on disk or in a bucket: one object per entry, named uniquely, written whole.

Layout below HIST (a local directory, or gs://... / s3://... through the ObjectStores):

  entries/<start time>-<random>.json   one run each; never rewritten, never deleted
  index/<time>-<random>.parquet        entries already read, one row each (name + JSON)

Concurrent appends never overwrite: every entry has its own random name. A half-written
entry is never read: a store object is one PUT (readers see all of it or nothing), a local
file is written beside its target under a dot-name that listings skip, synced, and renamed.
Reading lists entries/ and index/, takes every entry an index part holds and reads the
rest one by one (in parallel on a bucket); when that was more than INDEX_AFTER, it writes
a new index part holding them, so the next read of a 10,000-entry history fetches a few
Parquet files instead of 10,000 objects. Index parts are only added (a part may repeat an
entry another holds; the reader keeps one), so a reader never meets a part half-replaced.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime
import io
import os
import pathlib
import uuid
from typing import Iterator

from ckptbench.errors import CkptbenchError
from ckptbench.history._entry import HistoryEntry
from ckptbench.storage import is_store_url, list_objects, parse_store_url, read_location, write_location

ENTRIES = "entries"
INDEX = "index"
INDEX_AFTER = 64
_READERS = 16


@dataclasses.dataclass(frozen=True)
class History:
  """A history as read: its entries, oldest first, and each object skipped as unreadable (`where: why`).

  It reads as the sequence of its entries (`len`, iteration, `history[-1]`).
  """

  entries: tuple[HistoryEntry, ...]
  skipped: tuple[str, ...] = ()

  def __len__(self) -> int:
    return len(self.entries)

  def __iter__(self) -> Iterator[HistoryEntry]:
    return iter(self.entries)

  def __getitem__(self, index: int) -> HistoryEntry:
    return self.entries[index]


class HistoryStore:
  """The history at `location` (a directory path or a store URL)."""

  def __init__(self, location: str | os.PathLike):
    self.location = str(location).rstrip("/")
    self.remote = is_store_url(self.location)
    if "://" in self.location:
      parse_store_url(self.location)  # an unknown scheme is an error naming it, before anything runs
    elif not self.remote:  # checked before a run starts, not when its entry is added at the end
      existing = next(p for p in (pathlib.Path(self.location), *pathlib.Path(self.location).absolute().parents)
                      if p.exists())  # fmt: skip
      if not existing.is_dir():
        raise CkptbenchError(f"{existing}: a history is a directory, and this is a file")

  def _child(self, *parts: str) -> str:
    return "/".join([self.location, *parts]) if self.remote else str(pathlib.Path(self.location, *parts))

  def _names(self, folder: str, suffix: str) -> list[str]:
    if self.remote:
      keys = [o.key for o in list_objects(self._child(folder))]
    else:
      directory = pathlib.Path(self.location, folder)
      keys = os.listdir(directory) if directory.is_dir() else []
    # Dot-names are local files being written; anything in a sub-folder is not ours.
    return sorted(k for k in keys if k.endswith(suffix) and "/" not in k and not k.startswith("."))

  def append(self, entry: HistoryEntry) -> str:
    """Writes `entry` as its own object; returns where."""
    where = self._child(ENTRIES, f"{entry.name}.json")
    write_location(where, entry.to_json().encode())
    return where

  def read(self, *, write_index: bool = True) -> History:
    """Every readable entry, oldest first (by start time, then name), and the unreadable ones, named.

    An entry or index part that cannot be read (bytes that are not UTF-8 JSON, a field of another
    type, a sample that is not a finite number) is skipped and named in `History.skipped`: one bad
    object never blocks the history, and whoever judges it says what it left out.

    Raises:
      CkptbenchError: when HIST does not exist or holds no entry, or no entry can be read.
    """
    if not self.remote and not pathlib.Path(self.location).is_dir():
      raise CkptbenchError(f"{self.location}: no such history (a directory written by --history or `history add`)")
    names = [n[: -len(".json")] for n in self._names(ENTRIES, ".json")]
    if not names:
      raise CkptbenchError(f"{self.location}: the history holds no entry yet")
    texts: dict[str, bytes | CkptbenchError] = {}
    skipped: list[str] = []
    for part in self._names(INDEX, ".parquet"):
      try:
        texts.update(_read_index(self._child(INDEX, part)))
      except CkptbenchError as e:  # its entries are read from entries/ instead
        skipped.append(str(e))
    missing = [n for n in names if n not in texts]
    with concurrent.futures.ThreadPoolExecutor(_READERS if self.remote else 1) as pool:
      texts.update(zip(missing, pool.map(self._fetch, missing)))
    entries: dict[str, HistoryEntry] = {}
    for name in names:
      try:
        text = texts[name]
        if isinstance(text, CkptbenchError):
          raise text
        entries[name] = HistoryEntry.from_json(text, self._child(ENTRIES, f"{name}.json"))
      except CkptbenchError as e:
        skipped.append(str(e))
    if not entries:
      raise CkptbenchError(f"{self.location}: no entry of the history can be read; {skipped[0]}")
    indexed = [n for n in missing if n in entries]  # an index holds only entries that read
    if write_index and len(indexed) > INDEX_AFTER:
      self._write_index({n: entries[n].to_json() for n in indexed})
    return History(tuple(sorted(entries.values(), key=lambda e: (e.time, e.name))), tuple(skipped))

  def _fetch(self, name: str) -> bytes | CkptbenchError:
    try:
      return read_location(self._child(ENTRIES, f"{name}.json"))
    except CkptbenchError as e:  # skipped and named, as an entry that does not parse
      return e

  def _write_index(self, texts: dict[str, str]) -> None:
    import pyarrow  # noqa: PLC0415
    import pyarrow.parquet  # noqa: PLC0415

    table = pyarrow.table({"name": list(texts), "entry": list(texts.values())})
    buffer = io.BytesIO()
    pyarrow.parquet.write_table(table, buffer, compression="zstd")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S")
    write_location(self._child(INDEX, f"{stamp}-{uuid.uuid4().hex[:16]}.parquet"), buffer.getvalue())


def _read_index(where: str) -> dict[str, bytes]:
  import pyarrow.parquet  # noqa: PLC0415

  try:
    table = pyarrow.parquet.read_table(io.BytesIO(read_location(where)))
    names, texts = table.column("name").to_pylist(), table.column("entry").to_pylist()
    return {name: text.encode() for name, text in zip(names, texts) if isinstance(name, str) and isinstance(text, str)}
  except (pyarrow.ArrowException, KeyError, UnicodeEncodeError) as e:
    raise CkptbenchError(f"{where}: not a ckptbench history index ({e})") from None
