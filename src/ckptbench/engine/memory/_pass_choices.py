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
# The most readings a memory pass takes of one benchmark. It stops reading a benchmark once its figures are
# precise enough (stats/_settled.py); one still noisy here is compared with the error its readings give. At
# 6, two A/A figures whose readings spread 7 MiB around 40 MiB ended `equivalent` 19% of the time, at 10 57%
# (docs/performance.md, *Host-memory verdicts*); steady figures stop at 3 readings whatever the cap.
MEMORY_READINGS_CAP = 10


def memory_readings_cap(timed_count: int, auto: bool) -> int:
  """The most readings of a benchmark in a run's memory pass: `MEMORY_READINGS_CAP` with auto repeats, a fixed
  repeat count's own count otherwise (the pass stops earlier once settled: it never costs more than the timed
  runs, and a larger count is how to read a noisy figure more often)."""
  return MEMORY_READINGS_CAP if auto else max(1, timed_count)


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
