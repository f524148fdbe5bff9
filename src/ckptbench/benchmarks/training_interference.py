"""`training_interference`: what async checkpointing costs a running training loop.

A jitted step with a steady compute time (a chain of `step_matmuls` matrix
products of size `step_matmul_size`, plus the `checkpoint_manager` update of
every floating-point array) runs `num_saves * save_interval_steps` times, after
a few untimed warm-up steps; the manager (`api`, as in `checkpoint_manager`)
saves asynchronously every `save_interval_steps` steps.

Measured:
- Step-time interference: every step is timed. A step that overlaps a
  background save (it runs between a save call's return and the moment that
  save is committed) lands in `step_overlapping`, the others in `step_clean`.
  `interference_9_other/step_slowdown_ratio` is median(overlapping) /
  median(clean) with a bootstrap 95% interval (`_low`, `_high`), and
  `interference_9_other/extra_s_per_save` the step time lost per save
  (overlapping steps minus the clean median, summed, over the saves).
- Async phases, first save apart from the steady state (`save_first_*`,
  `save_steady_*`; later saves reuse metadata and compiled paths):
  `*_blocking` is the stall at the save call, with Orbax's stages from
  jax.monitoring (`2_save_breakdown/*`: tree map, device-to-host copy, wait for
  the previous save, directory creation); `*_background` runs from the call's
  return until the save is committed, with Orbax's background stages (write,
  metadata, finalize) where it reports them; `*_durable` from the call until
  committed.
- Memory across many saves: live host memory (`ckptbench.host_live_mib()`) just
  before each save call;
  `memory_9_other/rss_slope_mib_per_save` is the Theil-Sen slope over the
  saves (with its 95% interval); `memory_9_other/save_first_peak_growth_mib`
  and `save_steady_peak_growth_mib` are the rise of RSS during the first save
  and the largest during a later one (from the call until committed, over the
  RSS just before the call), and `save_*_peak_over_checkpoint` those rises over
  the checkpoint's bytes (a staging copy of the whole checkpoint shows as about
  1); `peak_over_checkpoint` is the peak RSS growth over the whole loop
  divided by the checkpoint's bytes. These come from runs that measure host
  memory (by default the memory pass's: docs/metrics.md, *Host memory*); the
  timed runs leave them out and say why in a note (reading live memory trims
  the allocator, which a timed run must not do).

The series behind these figures (every step's start and duration, and every
save's call, return and commit) is written to `timeline.json` in the run's
directory. Verified: the latest step restored from disk equals the state saved
at it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import statistics
import time
from typing import Any, Callable, Mapping

import jax
import jax.numpy as jnp

import ckptbench
from ckptbench.benchmarks.checkpoint_manager import (
    APIS as MANAGER_APIS,
    CheckpointManagerOptions,
    Durability,
    Manager,
    train_step_fn,
)

APIS = (*MANAGER_APIS, "torch_dcp")

_MIB = float(1 << 20)
_WARMUP_STEPS = 3
TIMELINE_FILE = "timeline.json"


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainingInterferenceOptions(ckptbench.BenchmarkOptions):
  """Options of `training_interference`.

  Attributes:
    api: "checkpoint_manager" or "training_checkpointer" (see checkpoint_manager),
      or "torch_dcp": `torch.distributed.checkpoint.async_save` of the state
      converted to torch tensors (needs the torch extra).
    num_saves: saves per run (the first, then the steady state); at least 3.
    save_interval_steps: steps between saves.
    step_matmul_size: side of the square matrices multiplied in each step.
    step_matmuls: matrix products per step (sets the step time).
    max_to_keep: checkpoints kept on disk (the Orbax managers; torch_dcp keeps all).
    cold_cache: evict the latest step from the page cache before the restore
      (`restore_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  api: str | list[str] = "checkpoint_manager"
  num_saves: int | list[int] = 20
  save_interval_steps: int | list[int] = 10
  step_matmul_size: int | list[int] = 256
  step_matmuls: int | list[int] = 64
  max_to_keep: int | list[int] = 2
  cold_cache: bool | list[bool] = True

  def invalid_reason(self) -> str | None:
    if self.api not in APIS:
      return f"api must be one of {', '.join(APIS)}"
    if self.api == "torch_dcp" and importlib.util.find_spec("torch") is None:
      return "api torch_dcp needs torch (pip install 'ckptbench[torch]')"
    if self.num_saves < 3:
      return "num_saves must be at least 3 (a first save and a steady state)"
    if self.save_interval_steps < 2:
      return "save_interval_steps must be at least 2 (steps between saves are the clean ones)"
    if self.step_matmul_size < 1 or self.step_matmuls < 0 or self.max_to_keep < 1:
      return "step_matmul_size and max_to_keep must be at least 1, step_matmuls at least 0"
    return None

  def unsupported_reason(self) -> str | None:
    if self.api == "torch_dcp" and jax.process_count() > 1:
      # The loop's state is global JAX arrays; handing DCP each rank's shards as DTensors is not done yet.
      return "api torch_dcp runs in one process only (the state is converted whole to torch tensors)"
    return None


def _compute_fn(size: int, count: int):
  """A jitted chain of `count` products of `size` x `size` matrices: steady busy work."""
  matrix = jnp.eye(size, dtype=jnp.float32) * 0.5 + 0.5 / size

  @jax.jit
  def work(x):
    return jax.lax.fori_loop(0, count, lambda _, y: jnp.tanh(y @ matrix), x)

  start = jnp.ones((size, size), jnp.float32)
  return lambda: work(start)


@dataclasses.dataclass
class _Save:
  step: int
  called: float
  returned: float
  committed: float | None = None


class _Phases:
  """Per-save measured blocks: blocking at the call, background until committed.

  The background block is closed at the first step boundary after the commit
  (or before the next save call), so Orbax's background events land in it.
  Each save measures into a `Metrics` of its own (the runner merges every
  Metrics a run creates), so its peak RSS can be read per save.
  """

  def __init__(self):
    self._open = contextlib.ExitStack()
    self.per_save: list[ckptbench.Metrics] = []

  @staticmethod
  def name(index: int) -> str:
    return "save_first" if index == 0 else "save_steady"

  def blocking(self, index: int):
    self.per_save.append(ckptbench.Metrics())
    return self.per_save[-1].measure(f"{self.name(index)}_blocking", ["time", "rss", "jax_monitoring"])

  def start_background(self, index: int) -> None:
    self._open.enter_context(
        self.per_save[index].measure(f"{self.name(index)}_background", ["rss", "jax_monitoring"])
    )

  def end_background(self) -> None:
    self._open.close()

  def peak_rss_mib(self, index: int) -> float:
    """The highest RSS sampled from save `index`'s call until its background block closed."""
    tags = self.per_save[index].to_dict()
    name = self.name(index)
    return max(
        tags[f"{name}_{phase}_7_memory/host_rss_peak_mib"].value
        for phase in ("blocking", "background")
        if f"{name}_{phase}_7_memory/host_rss_peak_mib" in tags
    )


@ckptbench.benchmark_options(TrainingInterferenceOptions)
class TrainingInterferenceBenchmark(ckptbench.BenchmarksGenerator):
  """Times training steps around async saves; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="training_interference",
      measures="a jitted training loop with async saves every K steps (both Orbax managers, torch DCP): slowdown of steps overlapping a background save (median ratio with interval), first save vs steady state by phase, host-memory slope per save",
      example="training_interference.yaml",
      saves_with=("orbax", "torch"),
      cold_load="restore",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: TrainingInterferenceOptions = context.options
    if context.pytree is None:
      raise ckptbench.CkptbenchError(
          "training_interference needs checkpoint data (checkpoint_config spec or preset)"
      )
    metrics = ckptbench.Metrics()
    step_fn, compute, state = _compiled_step(context.pytree, options)
    directory = context.path / "checkpoints"
    manager = _manager(options, directory)
    phases = _Phases()
    saves: list[_Save] = []
    steps: list[tuple[float, float]] = []
    rss_before_save: list[float] = []
    host_memory = context.host_memory_absent is None
    last_saved = None
    pending: _Save | None = None
    try:
      with metrics.measure("train", ["time", "rss"]):
        for step in range(options.num_saves * options.save_interval_steps):
          if step % options.save_interval_steps == 0:
            if pending is not None:
              phases.end_background()  # the save call below waits for it: that wait is blocking
            if host_memory:
              rss_before_save.append(ckptbench.host_live_mib())  # free memory handed back: a leak, not retention
            index = len(saves)
            with phases.blocking(index):  # the call's times inside the block, as its time_s
              called = time.perf_counter()
              manager.save(step, state)
              returned = time.perf_counter()
            pending = _Save(step, called, returned)
            saves.append(pending)
            last_saved = state
            phases.start_background(index)
          started = time.perf_counter()
          state = step_fn(state)
          jax.block_until_ready((state, compute()))
          steps.append((started, time.perf_counter()))
          if pending is not None and pending.step in manager.durability.durable_s:
            phases.end_background()
            pending = None
        manager.wait()
        phases.end_background()
      _set_commits(saves, manager.durability.durable_s, options.api)
      _record_saves(metrics, saves)
      _record_interference(metrics, steps, saves)
      _write_timeline(context.path / TIMELINE_FILE, steps, saves)
      checkpoint_mib = sum(getattr(x, "nbytes", 0) for x in jax.tree.leaves(context.pytree)) / _MIB
      metrics.record("memory", "9_other/checkpoint_mib", checkpoint_mib, "MiB")
      notes = []
      if host_memory:
        _record_memory(metrics, rss_before_save, phases, checkpoint_mib)
      else:
        notes.append("rss_slope_mib_per_save, save_*_peak_growth_mib and *peak_over_checkpoint:"
                     f" {context.host_memory_absent}")

      latest = saves[-1].step
      ckptbench.evict_for_load(directory / str(latest), metrics, "restore", options.cold_cache)
      with metrics.measure("restore"):
        restored = manager.restore(latest, ckptbench.abstract_pytree(last_saved))
      with metrics.measure("verify", ["time"]):
        ckptbench.verify_pytree(last_saved, restored)
    finally:
      phases.end_background()
      manager.close()
    return ckptbench.TestResult(metrics=metrics, artifacts=(TIMELINE_FILE,), notes=tuple(notes))


def _compiled_step(pytree: Any, options: TrainingInterferenceOptions) -> tuple[Callable, Callable, Any]:
  """(training step, extra compute, state after the warm-up steps): both jitted functions compiled before timing."""
  step_fn = train_step_fn(pytree)
  compute = _compute_fn(options.step_matmul_size, options.step_matmuls)
  state = pytree
  for _ in range(_WARMUP_STEPS):
    state = jax.block_until_ready(step_fn(state))
    jax.block_until_ready(compute())
  return step_fn, compute, state


def _set_commits(saves: list[_Save], durable_s: Mapping[int, float], api: str) -> None:
  """Each save's commit time, from the seconds after its call that the save became durable."""
  for save in saves:
    durable = durable_s.get(save.step)
    if durable is None:
      raise ckptbench.CkptbenchError(f"{api}: no commit was reported for step {save.step}")
    save.committed = save.called + durable


def _manager(options: TrainingInterferenceOptions, directory):
  if options.api == "torch_dcp":
    from ckptbench.benchmarks.pytorch import DcpAsyncManager

    return DcpAsyncManager(directory, Durability())
  return Manager(
      options.api,
      directory,
      CheckpointManagerOptions(
          api=options.api,
          save_interval_steps=options.save_interval_steps,
          max_to_keep=options.max_to_keep,
          async_enabled=True,
      ),
  )


def _record_saves(metrics: ckptbench.Metrics, saves: list[_Save]) -> None:
  for index, save in enumerate(saves):
    name = _Phases.name(index)
    metrics.record(f"{name}_background", "0_basics/time_s", save.committed - save.returned, "s", "sum")
    metrics.record(f"{name}_durable", "0_basics/time_s", save.committed - save.called, "s", "sum")


def _write_timeline(path, steps: list[tuple[float, float]], saves: list[_Save]) -> None:
  """The step-time series and the save phases, in seconds from the first save call."""
  origin = saves[0].called
  timeline = {
      "steps": [
          {"start_s": start - origin, "duration_s": end - start, "overlapping": _overlaps(start, end, saves)}
          for start, end in steps
      ],
      "saves": [
          {"step": s.step, "called_s": s.called - origin, "returned_s": s.returned - origin,
           "committed_s": s.committed - origin}
          for s in saves
      ],
  }  # fmt: skip
  path.write_text(json.dumps(timeline))


def _overlaps(start: float, end: float, saves: list[_Save]) -> bool:
  return any(start < s.committed and end > s.returned for s in saves)


def _record_interference(
    metrics: ckptbench.Metrics, steps: list[tuple[float, float]], saves: list[_Save]
) -> None:
  clean: list[float] = []
  overlapping: list[float] = []
  for start, end in steps:
    (overlapping if _overlaps(start, end, saves) else clean).append(end - start)
  for op, times in (("step_clean", clean), ("step_overlapping", overlapping)):
    for t in times:
      metrics.record(op, "0_basics/time_s", t, "s", "sum")
    metrics.record("interference", f"9_other/{op.removeprefix('step_')}_steps", len(times), "count")
  if not clean or not overlapping:
    # No ratio without both kinds: saves that commit within their own call, or
    # saves slower than the interval (then every step overlaps one; the counts say so).
    return
  ratio, low, high = ckptbench.median_ratio(clean, overlapping)
  if ratio is None:
    return
  metrics.record("interference", "9_other/step_slowdown_ratio", ratio, "ratio")
  if low is not None and high is not None:
    metrics.record("interference", "9_other/step_slowdown_ratio_low", low, "ratio")
    metrics.record("interference", "9_other/step_slowdown_ratio_high", high, "ratio")
  typical = statistics.median(clean)
  extra = sum(t - typical for t in overlapping)
  metrics.record("interference", "9_other/extra_s_per_save", extra / len(saves), "s")


def _record_memory(metrics: ckptbench.Metrics, rss: list[float], phases: _Phases, checkpoint_mib: float) -> None:
  slope = ckptbench.theil_sen_slope(rss)
  metrics.record("memory", "9_other/rss_slope_mib_per_save", slope.per_step, "MiB")
  metrics.record("memory", "9_other/rss_slope_mib_per_save_low", slope.low, "MiB")
  metrics.record("memory", "9_other/rss_slope_mib_per_save_high", slope.high, "MiB")
  # What one save holds at its peak beyond what the process held before it: a
  # staging copy of the whole checkpoint shows as about 1x the checkpoint bytes.
  # The first save apart: it also holds what compiling its paths takes.
  growth = [phases.peak_rss_mib(i) - before for i, before in enumerate(rss)]
  for phase, value in (("first", growth[0]), ("steady", max(growth[1:]))):
    metrics.record("memory", f"9_other/save_{phase}_peak_growth_mib", value, "MiB", "max")
    if checkpoint_mib > 0:
      metrics.record("memory", f"9_other/save_{phase}_peak_over_checkpoint", value / checkpoint_mib, "ratio", "max")
  peak = metrics.to_dict().get("train_7_memory/host_rss_peak_diff_mib")
  if peak is not None and checkpoint_mib > 0:
    metrics.record("memory", "9_other/peak_over_checkpoint", peak.value / checkpoint_mib, "ratio")
