"""The CI gate over a history (`ckptbench history HIST --fail_on_regression`, exit 3): per series,
the newest run worse than its segment on arrival, and the newest confirmed change worse."""

from __future__ import annotations

from typing import Sequence

from ckptbench.history._analysis import Arrival, Change, Series
from ckptbench.history._store import History
from ckptbench.stats import MIN_REFERENCE_RUNS


def gate(series: Sequence[Series]) -> list[Arrival | Change]:
  """What fails the gate, per series in order: its newest run when flagged worse on arrival (it
  names the run that brought the regression, the night it arrives), then its newest confirmed
  change when that is worse (the newest segment is worse than the one before it)."""
  failing: list[Arrival | Change] = []
  for s in series:
    failing += [f for f in (s.newest_is_worse, s.newest_change_is_worse) if f is not None]
  return failing


def unjudged(history: History, series: Sequence[Series]) -> list[str]:
  """What the gate could not judge, one line each: the entries skipped as unreadable, the series not tested.

  A gate over a history with any of these never passes (`ckptbench history --fail_on_regression` exits 5).
  """
  lines = [f"skipped an unreadable entry: {why}" for why in history.skipped]
  lines += [f"{s.suite} | {s.benchmark} | {s.metric} on {s.machine}: {s.note}" for s in series if s.note]
  if not any(s.newest is not None or s.changes for s in series):  # a gate never passes because nothing was compared
    lines.append("nothing was compared: no series has a newest run judged on arrival (each needs"
                 f" {MIN_REFERENCE_RUNS} runs before it in its segment) or a change found")
  return lines
