"""How the processes of a run agree: barriers and gathering small JSON values."""

from __future__ import annotations

from typing import Any, Protocol


class Coordinator(Protocol):
  process_index: int
  process_count: int

  def barrier(self, name: str) -> None:
    """Returns once every process reached the barrier of this name."""

  def allgather_json(self, value: Any) -> list[Any]:
    """Every process's `value`, in process order, on every process."""


class LocalCoordinator:
  """The single-process case: nothing to wait for."""

  process_index = 0
  process_count = 1

  def barrier(self, name: str) -> None:
    del name

  def allgather_json(self, value: Any) -> list[Any]:
    return [value]
