"""The CI gate over a history (`ckptbench history HIST --fail_on_change`, exit 3): per series,
the newest run worse than its segment on arrival, and the newest confirmed change worse."""

from __future__ import annotations

from typing import Sequence

from ckptbench.history._analysis import Arrival, Change, Series


def gate(series: Sequence[Series]) -> list[Arrival | Change]:
  """What fails the gate, per series in order: its newest run when flagged worse on arrival (it
  names the run that brought the regression, the night it arrives), then its newest confirmed
  change when that is worse (the newest segment is worse than the one before it)."""
  failing: list[Arrival | Change] = []
  for s in series:
    failing += [f for f in (s.newest_is_worse, s.newest_change_is_worse) if f is not None]
  return failing
