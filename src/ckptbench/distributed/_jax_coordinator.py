"""The multi-process `Coordinator`, built on JAX's own collectives.

Barriers are `multihost_utils.sync_global_devices` (which also checks that
every process reached the barrier of the same name); JSON gathers are two
`process_allgather` calls: the lengths, then the UTF-8 bytes padded to a
common length. Nothing goes through a shared filesystem.
"""

from __future__ import annotations

import json
from typing import Any

import jax
import numpy as np
from jax.experimental import multihost_utils

from ckptbench.distributed._coordinator import Coordinator, LocalCoordinator


def _bucket(n: int) -> int:
  """Rounds a byte count up to a power of two (at least 256) to reuse compiled gathers."""
  return max(256, 1 << (n - 1).bit_length())


class JaxCoordinator:
  """Coordinates the processes of a `jax.distributed` run.

  Every process must make the same calls in the same order: each barrier and
  gather is a collective over all processes.
  """

  @property
  def process_index(self) -> int:
    return jax.process_index()

  @property
  def process_count(self) -> int:
    return jax.process_count()

  def barrier(self, name: str) -> None:
    """Blocks until every process has reached the barrier called `name`.

    Raises:
      AssertionError: some process reached a barrier with another name (the
        processes have diverged).
    """
    multihost_utils.sync_global_devices(name)

  def allgather_json(self, obj: Any) -> list[Any]:
    """Gathers one JSON-serialisable value from each process.

    Returns:
      The values of all processes, in process order, on every process.
    """
    data = np.frombuffer(json.dumps(obj).encode("utf-8"), dtype=np.uint8)
    sizes = np.asarray(multihost_utils.process_allgather(np.int32(data.size))).reshape(-1)
    padded = np.zeros(_bucket(int(sizes.max())), dtype=np.uint8)
    padded[: data.size] = data
    rows = np.asarray(multihost_utils.process_allgather(padded))
    return [json.loads(rows[i, : int(n)].tobytes().decode("utf-8")) for i, n in enumerate(sizes)]


def make_coordinator() -> Coordinator:
  """The coordinator for this run: `JaxCoordinator` when there are several processes.

  Call after `initialize()`; it starts the JAX backend.
  """
  return JaxCoordinator() if jax.process_count() > 1 else LocalCoordinator()
