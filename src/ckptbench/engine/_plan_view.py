"""A printable description of an expanded suite (for `ckptbench plan`)."""

from __future__ import annotations

from typing import Any, Sequence

from ckptbench.config import Suite, preset_summary
from ckptbench.engine.memory._pass_choices import host_memory_mode, memory_readings_cap
from ckptbench.engine.loop._schedule import benchmark_groups, schedule_runs, warmup_groups
from ckptbench.engine._select import select
from ckptbench.engine._sizes import checkpoint_bytes, disk_need, format_bytes
from ckptbench.engine._sweep import Plan, expand
from ckptbench.stats import AUTO_LOOKS, MIN_READINGS


def describe_plan(suite: Suite, device_count: int | None, patterns: Sequence[str] = ()) -> dict[str, Any]:
  plan = select(expand(suite, device_count), patterns)
  rows = []
  for bench in plan.benchmarks:
    sizes = checkpoint_bytes(bench)
    rows.append({
        "name": bench.name,
        "key": bench.key,
        "mesh": bench.mesh.describe() if bench.mesh else "-",
        "checkpoint": bench.checkpoint.config.describe(),
        "size": format_bytes(sizes[0]) if sizes else "-",
        "per_device": format_bytes(sizes[1]) if sizes else "-",
    })
  cfg = suite.config
  presets = []
  for source in suite.checkpoints:
    if source.config.preset is not None:
      c = source.config
      presets.append(preset_summary(c.preset, c.scale, c.include_optimizer_state))
  return {
      "disk": disk_need(plan, _most_runs_per_benchmark(plan, cfg), cfg.keep_checkpoints),
      "benchmarks": rows,
      "presets": presets,
      "runs": _runs(plan, cfg),
      "memory_pass": _memory_pass(plan, cfg),
      "skipped_meshes": plan.all_skipped_meshes(),
      "notes": list(suite.notes),
      "invalid": [(g, o, r) for g, o, r in plan.invalid],
      "unsupported": [(g, o, r) for g, o, r in plan.unsupported],
  }


def _most_runs_per_benchmark(plan: Plan, cfg) -> int:
  """Warm-ups and repeats of one benchmark; with auto repeats, its most rounds."""
  repeats = cfg.repeats(compares=len(plan.benchmarks) > 1 or bool(cfg.baseline_path))
  return (AUTO_LOOKS[-1] if repeats == "auto" else repeats) + cfg.warmups(repeats)


def _runs(plan: Plan, cfg) -> int | str:
  """How many runs the plan makes; with auto repeats, a range of rounds."""
  repeats = cfg.repeats(compares=len(plan.benchmarks) > 1 or bool(cfg.baseline_path))
  warmups = len(plan.benchmarks) * cfg.warmups(repeats)
  if repeats == "auto":
    return f"{warmups} warm-up + rounds of {len(plan.benchmarks)} until decided (num_repeats: auto);"
  return len(schedule_runs(len(plan.benchmarks), repeats, cfg.warmups(repeats), groups=warmup_groups(plan, cfg)))


def _memory_pass(plan: Plan, cfg) -> str | None:
  """What the default memory pass adds (engine/memory/_pass.py), or None where host memory is not asked
  for that way ($CKPTBENCH_HOST_MEMORY; a multi-process run measures inline and says so when it runs)."""
  if host_memory_mode(None) != "pass" or not plan.benchmarks:
    return None
  repeats = cfg.repeats(compares=len(plan.benchmarks) > 1 or bool(cfg.baseline_path))
  most = memory_readings_cap(0 if repeats == "auto" else int(repeats), repeats == "auto")
  least = min(MIN_READINGS, most)
  count, groups = len(plan.benchmarks), len(set(benchmark_groups(plan)))
  return (f"host memory: a memory pass after the timed runs, {groups + least * count}-{groups + most * count}"
          f" more runs in a fresh process ({groups} warm-up(s), then {count} x {least}-{most} readings: each"
          " benchmark until its figures are precise); --host_memory inline or off runs none")
