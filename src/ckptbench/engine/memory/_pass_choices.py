"""The memory pass's modes and settings (engine/memory/_pass.py), in a module of their own so that
`ckptbench plan` can say what a run's pass will add without loading what runs it."""

import os

from ckptbench.errors import CkptbenchError

HOST_MEMORY_MODES = ("pass", "inline", "off")
# Where `host_memory` is not given: this environment variable, else "pass". A test suite or CI job
# that reads no memory sets it to inline or off (tests/conftest.py does) so no run starts a second process.
HOST_MEMORY_ENV = "CKPTBENCH_HOST_MEMORY"
# Set, the mmap threshold also fixes the trim threshold at its default (128 KiB); why 64 KiB: the docstring
# of engine/memory/_pass.py.
MEMORY_PASS_ENV = {"MALLOC_MMAP_THRESHOLD_": str(64 << 10)}
# The most readings a memory pass takes of one benchmark. It stops repeating a benchmark once two readings in a
# row agree (stats/_settled.py); one that has not settled by then is compared by the rank-based rule, which
# needs 6 pairs before its 95% interval can exclude 1 (the signed-rank test's smallest p is then 2/64).
MEMORY_READINGS_CAP = 6


def memory_readings_cap(timed_count: int, auto: bool) -> int:
  """The most readings of a benchmark in a run's memory pass: `MEMORY_READINGS_CAP`, and never more than the
  timed runs' own repeats of a fixed count (the pass stops earlier; it never costs more than it did)."""
  return MEMORY_READINGS_CAP if auto else max(1, min(MEMORY_READINGS_CAP, timed_count))


def asked_host_memory(given: str | None, flag: str = "host_memory") -> str | None:
  """The host-memory mode a run was asked for: `given` (the setting, whose spelling `flag` names in an
  error), else $CKPTBENCH_HOST_MEMORY, else None (nothing asked: the default applies)."""
  asked = given or os.environ.get(HOST_MEMORY_ENV) or None
  if asked is not None and asked not in HOST_MEMORY_MODES:
    where = flag if given else f"{HOST_MEMORY_ENV}={asked}"
    raise CkptbenchError(f"{where}: host memory is measured {', '.join(HOST_MEMORY_MODES)}")
  return asked


def host_memory_mode(given: str | None, flag: str = "host_memory") -> str:
  """The host-memory mode a run uses: the one asked for (`asked_host_memory`), else "pass"."""
  return asked_host_memory(given, flag) or "pass"
