"""The memory pass's modes and settings (engine/_memory_pass.py), in a module of their own so that
`ckptbench plan` can say what a run's pass will add without loading what runs it."""

HOST_MEMORY_MODES = ("pass", "inline", "off")
# Where `host_memory` is not given: this environment variable, else "pass". A test suite or CI job
# that reads no memory sets it to inline or off (tests/conftest.py does) so no run starts a second process.
HOST_MEMORY_ENV = "CKPTBENCH_HOST_MEMORY"
# Set, the mmap threshold also fixes the trim threshold at its default (128 KiB); why 64 KiB: the docstring
# of engine/_memory_pass.py.
MEMORY_PASS_ENV = {"MALLOC_MMAP_THRESHOLD_": str(64 << 10)}
# The most readings a memory pass takes of one benchmark. It stops repeating a benchmark once two readings in a
# row agree (stats/_settled.py); one that has not settled by then is compared by the rank-based rule, which
# needs 6 pairs before its 95% interval can exclude 1 (the signed-rank test's smallest p is then 2/64).
MEMORY_READINGS_CAP = 6


def memory_readings_cap(timed_count: int, auto: bool) -> int:
  """The most readings of a benchmark in a run's memory pass: `MEMORY_READINGS_CAP`, and never more than the
  timed runs' own repeats of a fixed count (the pass stops earlier; it never costs more than it did)."""
  return MEMORY_READINGS_CAP if auto else max(1, min(MEMORY_READINGS_CAP, timed_count))
