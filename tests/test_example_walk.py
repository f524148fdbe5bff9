"""Every shipped example runs as a user first runs it: `ckptbench run NAME -o OUT --set num_repeats=1`,
in the default modes (the memory pass, the views, the storage probe). Each exits 0 with no failed
record, or refuses before anything runs in one line naming what it needs first (a command, an extra,
a store's credentials). The list is `ckptbench examples`' own, so a new example is walked the day it
lands. Each command runs in a process forked from one that imported ckptbench, JAX and Orbax once
(tests/warm_cli.py): the command line's entry point, its own JAX start and memory pass. Slow (every
example, twice over with its memory pass): `make test-examples` runs the walk on every core; `make
test` leaves it out, and CI runs both in one pool (`make test WITH_EXAMPLES=1`) (docs/builtins.md, "Adding a built-in"). The examples that took longest in the last
profile (docs/performance.md, *The test suite*) start first, so that no worker is left with a long one
while the other idles; the rest follow in name order.
"""

from __future__ import annotations

import re

import pytest

import ckptbench
from ckptbench.cli._examples import example_names
from ckptbench.results import read_records
from conftest import cli_env
from warm_cli import run_cli_forked

pytestmark = [pytest.mark.slow, pytest.mark.examples]

# What a refusal names: a command to run first (in backquotes), a variable to set, or an extra to install.
_NEEDS = re.compile(r"`[^`]+`|\bset [A-Z][A-Z_]+|pip install")

# Longest first, as `pytest --durations=0` measured them: pytest-xdist's `--dist load` hands tests out in
# this order (a few to each worker, then more to whichever runs low), so the long ones start early and
# the short ones fill the end. A name no longer shipped is ignored; a new example runs among the rest.
_LONGEST_FIRST = ("mlperf_storage", "repro_mlperf_sizes", "training_interference", "checkpoint_manager", "deleter",
                  "repro_async_dcp", "preemption_recovery", "pytorch_dcp", "three_factor", "safetensors_load", "pytorch",
                  "repro_disk_share", "resharding", "replicated_restore_memory", "replica_parallel")  # fmt: skip


def _longest_first(names: list[str]) -> list[str]:
  first = [name for name in _LONGEST_FIRST if name in names]
  return first + [name for name in names if name not in first]


@pytest.mark.timeout(1800)  # as run_cli_forked's own: the largest examples pass 300 s on a busy machine
@pytest.mark.parametrize("name", _longest_first(example_names()))
def test_every_shipped_example_runs_by_default_or_refuses_in_one_line(name, tmp_path):
  out = tmp_path / "out"
  done = run_cli_forked(["run", name, "-o", str(out), "--set", "num_repeats=1"], tmp_path, cli_env(), timeout=1800)
  if (out / "results.jsonl").exists():  # it ran: a failed run (exit 1) is named with its error
    records = read_records(out)
    failed = [f"{r.benchmark} ({r.kind.value}): {r.error.text}" for r in records if r.failed]
    assert not failed, failed
    assert done.returncode == 0, done.stderr[-3000:]
    assert ckptbench.timed_runs(records), "nothing ran"
    return
  errors = [line for line in done.stderr.splitlines() if line.startswith("ckptbench: error: ")]
  assert done.returncode == 2 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
  assert _NEEDS.search(errors[0]), f"the refusal names nothing to do first: {errors[0]}"
