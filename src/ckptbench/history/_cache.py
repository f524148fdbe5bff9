"""The statistics of each series kept in the history's index, so a read computes only what changed.

A series' changes and its runs judged on arrival depend on its runs alone (and the threshold
and the method), so they are kept by series and a digest of its entries (their names in order,
hence their count) beside the index: `HIST/index/changes/<time>-<random>.parquet`, one row per
series. A read takes the newest part, analyses only the series whose runs differ from it (the
ones a new run reached, usually every one once a night) and writes a new part holding every
row it knows: its own and the older part's for series it did not read (`-k`). Parts are only
added, as the entry index is: a reader never meets one half-written; concurrent readers each
write a whole part, either serves. A part from another version of the method matches nothing.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import io
import json
import uuid
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ckptbench.errors import CkptbenchError
from ckptbench.stats import (
    GROUP_ALPHAS,
    SCAN_ALPHA,
    ArrivalTest,
    ChangePoint,
    Direction,
    arrival_tests,
    level_changes,
    run_levels,
)
from ckptbench.storage import read_location, write_location

if TYPE_CHECKING:
  from ckptbench.history._store import HistoryStore

CHANGES = "index/changes"
# Bumped whenever what a row holds or how it is computed changes: older rows then match nothing.
METHOD = f"2026-11-29 scan {SCAN_ALPHA} arrival {GROUP_ALPHAS} heavy-tailed"


@dataclasses.dataclass(frozen=True)
class SeriesAnalysis:
  """A series' confirmed changes, its runs flagged worse on arrival, and its newest run's test
  (None when too few runs came before it in its segment)."""

  changes: tuple[ChangePoint, ...]
  flagged: tuple[ArrivalTest, ...]
  newest: ArrivalTest | None

  def to_json(self) -> str:
    def fields(record: ChangePoint | ArrivalTest) -> list:  # dataclasses.astuple copies deeply, 10x slower
      return [getattr(record, f.name) for f in dataclasses.fields(record)]

    return json.dumps([[fields(c) for c in self.changes], [fields(t) for t in self.flagged],
                       fields(self.newest) if self.newest else None])  # fmt: skip

  @classmethod
  def from_json(cls, text: str) -> SeriesAnalysis:
    changes, flagged, newest = json.loads(text)
    return cls(tuple(ChangePoint(*c) for c in changes), tuple(ArrivalTest(*t) for t in flagged),
               ArrivalTest(*newest) if newest else None)  # fmt: skip


def analyse_series(
    samples: Sequence[Sequence[float]], direction: Direction, threshold: float, floor: float
) -> SeriesAnalysis | None:
  """The statistics of one series of runs (each its samples, oldest first); None when a run has no
  sample or one that is not finite and positive (changes are ratios)."""
  if any(not run for run in samples):
    return None
  log_medians, within = run_levels(samples)
  if not np.all(np.isfinite(log_medians)) or not np.all(np.isfinite(within)):
    return None
  changes = level_changes(log_medians, direction, threshold=threshold, floor=floor)
  arrivals = arrival_tests(log_medians, within, [c.index for c in changes], direction, threshold=threshold, floor=floor)
  return SeriesAnalysis(tuple(changes), arrivals.flagged, arrivals.newest)


class AnalysisCache:
  """Series analyses by series and digest of their entries; `added` counts those computed here."""

  def __init__(self, rows: dict[str, tuple[str, str]] | None = None):
    self._rows = dict(rows or {})  # series -> (digest, SeriesAnalysis as JSON)
    self.added = 0

  def analysis(
      self, series: str, names: Sequence[str], samples: Sequence[Sequence[float]], direction: Direction,
      threshold: float, floor: float,
  ) -> SeriesAnalysis | None:
    """The analysis of `series`, whose runs are the entries `names` with these samples: kept, or
    computed (`analyse_series`) and kept."""
    digest = hashlib.sha1("\n".join([METHOD, repr(threshold), repr(floor), *names]).encode()).hexdigest()
    kept = self._rows.get(series)
    if kept is not None and kept[0] == digest:
      return SeriesAnalysis.from_json(kept[1]) if kept[1] != "null" else None
    found = analyse_series(samples, direction, threshold, floor)
    self._rows[series] = (digest, found.to_json() if found is not None else "null")
    self.added += 1
    return found

  def __len__(self) -> int:
    return len(self._rows)

  def rows(self) -> dict[str, tuple[str, str]]:
    return dict(self._rows)


def load_cache(store: HistoryStore) -> AnalysisCache:
  """The newest part of the history's analysis cache (empty when there is none).

  Raises:
    CkptbenchError: naming the part when it is not one.
  """
  import pyarrow  # noqa: PLC0415
  import pyarrow.parquet  # noqa: PLC0415

  parts = store._names(CHANGES, ".parquet")
  if not parts:
    return AnalysisCache()
  where = store._child(CHANGES, parts[-1])
  try:
    table = pyarrow.parquet.read_table(io.BytesIO(read_location(where)))
    columns = [table.column(c).to_pylist() for c in ("series", "digest", "analysis")]
  except (pyarrow.ArrowException, KeyError) as e:
    raise CkptbenchError(f"{where}: not a ckptbench history analysis cache ({e})") from None
  return AnalysisCache({s: (d, a) for s, d, a in zip(*columns)})


def save_cache(store: HistoryStore, cache: AnalysisCache) -> str | None:
  """Writes a new part holding every row of `cache` when this read computed any; returns where."""
  import pyarrow  # noqa: PLC0415
  import pyarrow.parquet  # noqa: PLC0415

  if not cache.added:
    return None
  rows = cache.rows()
  table = pyarrow.table({"series": list(rows), "digest": [d for d, _ in rows.values()],
                         "analysis": [a for _, a in rows.values()]})  # fmt: skip
  buffer = io.BytesIO()
  pyarrow.parquet.write_table(table, buffer, compression="zstd")
  stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%f")
  where = store._child(CHANGES, f"{stamp}-{uuid.uuid4().hex[:16]}.parquet")
  write_location(where, buffer.getvalue())
  return where
