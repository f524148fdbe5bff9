"""The two memory reports the example suites reproduce, in shape (ratios and trends, not absolutes):
`memory_over_checkpoint` (the RAM a save and a load need over the checkpoint's size) and
`replicated_restore_memory` (a replicated restore's memory growing with the replicas), at 32 MiB."""

from __future__ import annotations

import statistics

import pytest

import ckptbench

from builtin_support import ok_metrics, run_text
from ckptbench.config import load_suite
from ckptbench.engine._sweep import expand
from conftest import REPO

RATIO = "7_memory/host_peak_over_checkpoint"
GENERATOR = "orbax.checkpoint._src.testing.benchmarks.v1.benchmark.Benchmark"


def _median(runs: list[dict], tag: str) -> float:
  return statistics.median(run[tag].value for run in runs)


@pytest.mark.parametrize("name, benchmarks", [("memory_over_checkpoint", 2), ("replicated_restore_memory", 4)])
def test_the_memory_examples_expand(name, benchmarks):
  plan = expand(load_suite(REPO / "examples" / f"{name}.yaml"), 8)
  assert len(plan.benchmarks) == benchmarks
  assert not plan.all_skipped_meshes()


@pytest.mark.slow
def test_a_load_needs_more_ram_over_the_checkpoint_than_a_save(tmp_path):
  outcome = run_text(tmp_path, f"""
      suite_name: memory shape
      num_repeats: 2
      num_warmups: 1
      checkpoint_config:
        spec:
          params: {{dtype: bfloat16, shape: [4096, 4096], sharding: [fsdp]}}
      mesh_config:
        mesh_axes: [fsdp]
        ici_parallelism: {{fsdp: 8}}
      benchmarks:
        - generator: "{GENERATOR}"
          options: {{async_enabled: false}}
      """)
  runs = ok_metrics(outcome)
  save, load = _median(runs, f"save_{RATIO}"), _median(runs, f"load_{RATIO}")
  # A load holds what it read and the arrays it built from it (the restored tree is live at its end).
  assert load >= 0.9, load
  assert load > save, (save, load)
  assert 0.2 <= save <= 1.6, save


@pytest.mark.slow
# Host memory inline, in the test process: in an xdist worker that ran other files first, glibc's arenas
# kept what they freed and the 8 replicas' peak read 2.01 against 1.94 once; in a process of its own it
# reads 2.4-3.7.
@pytest.mark.alone
def test_a_replicated_restore_needs_more_ram_with_more_replicas(tmp_path):
  outcome = run_text(tmp_path, f"""
      suite_name: memory shape
      num_repeats: 3
      num_warmups: 1
      checkpoint_config:
        spec:
          params: {{dtype: bfloat16, shape: [4096, 4096], sharding: [shard]}}
      mesh_configs:
        - {{mesh_axes: [replica, shard], ici_parallelism: {{replica: 1, shard: 8}}}}
        - {{mesh_axes: [replica, shard], ici_parallelism: {{replica: 8, shard: 1}}}}
      benchmarks:
        - generator: "{GENERATOR}"
          options: {{async_enabled: false}}
      """)
  by_mesh: dict[str, list[dict]] = {}
  for record in ckptbench.timed_runs(outcome.records):
    by_mesh.setdefault(record.benchmark, []).append(record.metrics)
  ok_metrics(outcome)
  one, eight = (_median(runs, f"load_{RATIO}") for _, runs in sorted(by_mesh.items()))
  # Medians here: 1.5-1.9 with one replica, 2.4-3.7 with 8 (the 8 copies partly share host buffers).
  assert eight >= one + 0.5, (one, eight)
