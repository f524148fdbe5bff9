"""Host-memory verdicts in the default mode (a memory pass, auto repeats), read from summary.json as a user does:
an A/A pair is `equivalent`, a planted 64 MiB extra allocation is `worse` (stats/_settled.py's rule)."""

from __future__ import annotations

import json

import pytest

from ckptbench.engine.memory._pass_choices import HOST_MEMORY_ENV
from ckptbench.metrics._allocator import free_memory_released
from conftest import run_cli
from memory_benchmarks import LABELLED_PAIR_SUITE

pytestmark = pytest.mark.skipif(not free_memory_released(), reason="the memory pass fixes glibc's thresholds")

# The timed rounds' budget: the verdicts judged here are the memory pass's, which takes up to its own 10 readings
# a variant whatever number of timed rounds ran before it (engine/memory/_pass_choices.py).
SUITE = LABELLED_PAIR_SUITE + "time_budget_s: 4\n"
SAVE, LOAD = "save_7_memory/host_rss_peak_diff_mib", "load_7_memory/host_rss_peak_diff_mib"


@pytest.mark.slow
def test_an_a_a_pair_is_equivalent_and_a_planted_64_mib_is_worse(tmp_path):
  """A 1 MiB Orbax save and load whose figures sit near 1-2 MiB: under the fixed error of 6 MiB a side the
  rule had before, two of them could never be `equivalent` within the 8 MiB floor."""
  (tmp_path / "suite.yaml").write_text(SUITE)
  out = tmp_path / "out"
  done = run_cli("run", str(tmp_path / "suite.yaml"), "-o", str(out), "--no_views", "--no_progress",
                 env={HOST_MEMORY_ENV: ""}, timeout=400)  # fmt: skip
  assert done.returncode == 0, done.stdout + done.stderr
  summary = json.loads((out / "summary.json").read_text())
  assert summary["repeats"]["mode"] == "auto"
  assert any(n.startswith("host memory: from a memory pass after the timed runs") for n in summary["notes"])
  memory = {(v["variant"]["label"], v["variant"]["extra_mib"], v["metric"]): v for v in summary["verdicts"]
            if v["metric"] in (SAVE, LOAD)}  # fmt: skip
  assert len(memory) == 3 * 2  # three variants against (a, 0), both operations
  for (label, extra, metric), verdict in memory.items():
    assert verdict["rule"].startswith("memory pass: readings until the figure (their mean) is within")
    assert 3 <= verdict["n_reference"] <= 10 and 3 <= verdict["n_current"] <= 10
    planted = extra == 64 and metric == SAVE
    assert verdict["verdict"] == ("worse" if planted else "equivalent"), verdict
    if planted:
      assert 60 <= verdict["current_median"] - verdict["reference_median"] <= 70
