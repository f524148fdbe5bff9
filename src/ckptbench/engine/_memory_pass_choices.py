"""The memory pass's modes and settings (engine/_memory_pass.py), in a module of their own so that
`ckptbench plan` can say what a run's pass will add without loading what runs it."""

HOST_MEMORY_MODES = ("pass", "inline", "off")
# Where `host_memory` is not given: this environment variable, else "pass". A test suite or CI job
# that reads no memory sets it to inline or off (tests/conftest.py does) so no run starts a second process.
HOST_MEMORY_ENV = "CKPTBENCH_HOST_MEMORY"
# Set, the mmap threshold also fixes the trim threshold at its default (128 KiB); why 64 KiB: the docstring
# of engine/_memory_pass.py.
MEMORY_PASS_ENV = {"MALLOC_MMAP_THRESHOLD_": str(64 << 10)}
# The memory pass's runs per benchmark when the timed runs repeat automatically (a fixed count gets as
# many as it asked for): its readings repeat to within a few percent, but a rank-based verdict needs 6
# pairs before its 95% interval can exclude 1 (the signed-rank test's smallest p is then 2/64).
AUTO_MEMORY_REPEATS = 6
