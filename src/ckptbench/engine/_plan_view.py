"""A printable description of an expanded suite (for `ckptbench plan`)."""

from __future__ import annotations

import json
from typing import Any, Sequence

from ckptbench.api import is_reference, judged_text
from ckptbench.config import Suite, preset_summary
from ckptbench.engine.memory._pass_choices import host_memory_mode, memory_readings_cap
from ckptbench.engine.loop._schedule import benchmark_groups, schedule_runs, warmup_groups
from ckptbench.engine._select import select
from ckptbench.engine._sizes import checkpoint_bytes, disk_need, format_bytes
from ckptbench.engine._sweep import Plan, PlannedBenchmark, expand
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
      "answers": _answers(suite, plan),
  }


def _answers(suite: Suite, plan: Plan) -> list[str]:
  """What a newcomer asks of a plan: how many repeats, against what, judged on what, and whether the
  factors' effects answer it (lines for `ckptbench plan`)."""
  cfg = suite.config
  compares = len(plan.benchmarks) > 1 or bool(cfg.baseline_path)
  repeats = cfg.repeats(compares)
  lines = []
  if repeats == "auto":
    budget = cfg.time_budget()
    source = "the suite's time_budget_s" if cfg.time_budget_s else "the default; time_budget_s sets it"
    looks = ", ".join(map(str, AUTO_LOOKS[:4]))
    lines.append(f"repeats: num_repeats: auto: rounds until every comparison is decided, looking after {looks}, ..."
                 f" rounds; at most {AUTO_LOOKS[-1]} rounds, none started that would end past {budget:g} s ({source};"
                 " run --time_budget 5m overrides it)")  # fmt: skip
  else:
    lines.append(f"repeats: {repeats} per benchmark (num_repeats: auto repeats until decided)")
  if not compares:
    return lines
  generators: dict[str, list[PlannedBenchmark]] = {}
  for bench in plan.benchmarks:
    generators.setdefault(bench.generator_path, []).append(bench)
  for benches in generators.values():
    if len(benches) < 2:
      continue
    picked = next((b for b in benches if cfg.reference and is_reference(b.varying, cfg.reference)), None)
    how = "the suite's reference:" if picked else "the first; reference: in the suite picks another"
    lines.append(f"reference: {(picked or benches[0]).name} ({how}); each other variant is judged against it")
  lines.append(f"judged: {judged_text()} (what --fail_on_regression gates)")
  for benches in generators.values():
    factors = _factors(benches)
    if len(factors) >= 2:
      lines.append(f"effects: {len(factors)} factors ({', '.join(factors)}): run also prints each factor's main effect"
                   " and each pair's interaction, which answer a sweep of several factors (--decide_on effects"
                   " repeats until they are decided)")  # fmt: skip
  return lines


def _factors(benches: Sequence[PlannedBenchmark]) -> list[str]:
  """The factors one generator's benchmarks vary: swept options, and the mesh and checkpoint config."""
  factors = [name for name in dict.fromkeys(k for b in benches for k in b.varying)
             if len({json.dumps(b.varying.get(name), sort_keys=True, default=str) for b in benches}) > 1]  # fmt: skip
  if len({b.mesh_index for b in benches}) > 1:
    factors.append("mesh")
  if len({b.checkpoint_index for b in benches}) > 1:
    factors.append("checkpoint_config")
  return factors


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
  return (f"host memory: a memory pass, {groups + least * count}-{groups + most * count} more runs in a fresh"
          f" process ({groups} warm-up(s) beside the timed runs' own, then {count} x {least}-{most} readings after"
          " them: each benchmark until its figures are precise); --host_memory inline or off runs none")
