"""Running a suite: every benchmark x repeat, failures isolated, results durable."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import pathlib
import random
import sys
import time
import traceback
from typing import Any, Callable, Mapping, Sequence

from ckptbench.config import Suite
from ckptbench.engine._failures import (
    DISK_FULL,
    TIMEOUT,
    RunTimeout,
    deadline,
    disk_full_error,
    timeout_error,
    unreadable_data_error,
)
from ckptbench.api import BenchmarksGenerator, TestContext, TestResult
from ckptbench.api import ErrorRecord, NotRun, RunRecord, SkippedMesh, SuiteSummary, timed_runs
from ckptbench.engine.output._locations import (
    placement_error, prepare_location, remove_location, roofline_from_dict, run_location, store_roofline,
)
from ckptbench.storage import StoreRoofline, StoreURL, is_store_url
from ckptbench.engine.output._disk import Freeing, RunLeftovers, disk_problem, keeps_checkpoints
from ckptbench.engine._sizes import disk_need
from ckptbench.engine.memory._fit import memory_problem
from ckptbench.engine.memory._gate import PassEnd
from ckptbench.engine.memory._pass import HostMemory, MemoryPass, host_memory_plan, memory_pass_process
from ckptbench.engine.memory._pass import start_memory_pass
from ckptbench.engine.output._output_dir import prepare_output_dir
from ckptbench.engine._pytree_cache import PytreeCache
from ckptbench.engine.loop._auto import auto_rounds, driven_rounds
from ckptbench.engine.race._race import RaceResult, RaceRun, race_rounds
from ckptbench.engine._noise import NoiseMeter
from ckptbench.engine.loop._rounds import RepeatsDone, fixed_runs, settled_rounds
from ckptbench.engine._run_plan import RunPlan, build_run_plan
from ckptbench.engine.loop._schedule import ScheduledRun, benchmark_groups
from ckptbench.engine._settings import RunSettings
from ckptbench.engine._simdevice import run_backend_name
from ckptbench.engine.loop._stop import StopRequest
from ckptbench.engine._sweep import Plan, PlannedBenchmark
from ckptbench.engine._watchdog import RunWatchdog
from ckptbench.distributed import Coordinator, LocalCoordinator
from ckptbench.errors import EXIT_BENCHMARK_FAILED, EXIT_INTERRUPTED, EXIT_OK, CkptbenchError
from ckptbench.api import MetricEntry, collect_created_metrics, collectors_held, merged
from ckptbench.metrics import StorageProbe, cached_probe, post_run_tags, probe_storage
from ckptbench.metrics import StoreRequests, store_cost_tags
from ckptbench.results import build_manifest, now_iso
from ckptbench.views import RunProgress
from ckptbench.results import read_records
from ckptbench.results import RunWriter, run_writers
from ckptbench.analysis import SweepEffects, floor_shares, sweep_effects, sweep_verdicts
from ckptbench.stats import summarize_benchmarks

_log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class SuiteOutcome:
  """What a suite run produced."""

  output_dir: pathlib.Path
  plan: Plan
  records: list[RunRecord]  # every host's, in the order they ran (resumed ones first)
  summary: SuiteSummary
  interrupted: bool
  race: RaceResult | None = None  # a race's candidates and best (`ckptbench tune`)

  @property
  def failed_runs(self) -> int:
    return sum(1 for r in self.records if r.failed)

  @property
  def exit_code(self) -> int:
    """130 when interrupted, 1 when any run failed, else 0."""
    if self.interrupted:
      return EXIT_INTERRUPTED
    return EXIT_BENCHMARK_FAILED if self.failed_runs else EXIT_OK


def run_suite(
    suite: Suite,
    settings: RunSettings,
    coordinator: Coordinator | None = None,
    link_stats: Callable[[], Mapping[str, int]] | None = None,
    freeing: Freeing | None = None,
) -> SuiteOutcome:
  """Runs every benchmark of `suite`: results.jsonl, summary.json and manifest.json in OUT.

  The engine under `ckptbench.run`, which prepares the process first and
  handles baselines and views afterwards. A benchmark that raises (or whose
  data cannot be built) is recorded with its error and the metrics measured
  before it failed; the others still run. Each run's checkpoint is freed
  through `freeing` (the last one may still be going when this returns; without
  `freeing`, every checkpoint is gone on return).
  """
  coordinator = coordinator or LocalCoordinator()
  if freeing is not None:
    return _run_suite(suite, settings, coordinator, link_stats, freeing)
  with Freeing() as own:
    return _run_suite(suite, settings, coordinator, link_stats, own)


def _run_suite(
    suite: Suite,
    settings: RunSettings,
    coordinator: Coordinator,
    link_stats: Callable[[], Mapping[str, int]] | None,
    freeing: Freeing,
) -> SuiteOutcome:
  """`run_suite`, freeing each run's checkpoint through `freeing`."""
  import jax  # noqa: PLC0415  (ckptbench.run sets XLA flags before the backend starts)

  is_writer = coordinator.process_index == 0
  out = settings.output_dir
  _check_processes(suite, coordinator.process_count)
  run_plan = _checked_run_plan(suite, settings, coordinator, jax.device_count())
  repeats = run_plan.repeats
  host_memory = host_memory_plan(suite, settings, run_plan, coordinator.process_count)
  previous = read_records(out) if settings.resume else []
  done = {(r.key, r.repeat) for r in timed_runs(previous)}
  # Every process shuffles rounds alike: process 0's seed.
  rng = random.Random(coordinator.allgather_json(random.SystemRandom().randrange(2**31))[0])
  manifest, probe = _manifest_and_probe(suite, settings, coordinator)
  manifest["host_memory"] = host_memory.to_json()
  writers = run_writers(out) if is_writer else ()  # process 0 writes OUT
  for writer in writers:
    writer.start(manifest)
  todo = run_plan.schedule(done, rng)  # a fixed count's order; auto rounds run as many at most
  progress = RunProgress(len(todo), enabled=is_writer, terminal=settings.show_progress)
  stop = StopRequest()
  runs = _Runs(run_plan.plan, suite, settings, coordinator, probe, link_stats, writers, progress, list(previous), freeing,
               host_memory.absent_from_timed_runs)
  started = time.perf_counter()
  try:
    with stop.installed():
      # A driven run's pass waits for the driver's stop: other environments' runs are not gated on it.
      if host_memory.mode == "pass" and not repeats.driven:
        runs.start_memory_pass(host_memory, run_plan)
      with collectors_held(host_memory.held):  # what a memory pass measures, the timed runs do not
        done_repeats, race = _repeats(run_plan, settings, runs, done, todo, rng, stop, coordinator, progress)
      if not done_repeats.interrupted:
        runs.readings_written()
      if host_memory.mode == "pass" and not done_repeats.interrupted:
        manifest["host_memory"]["process"] = memory_pass_process()
        manifest["host_memory"]["seconds"] = runs.memory_pass(host_memory, run_plan)
        if stop.requested:
          done_repeats = dataclasses.replace(done_repeats, interrupted=True)
  finally:
    if runs.memory is not None:
      runs.memory.close()
    progress.close()
    runs.noise.close()

  records = runs.records
  interrupted = done_repeats.interrupted
  summary = _summary(suite, run_plan, records, done_repeats, host_memory)
  summary = dataclasses.replace(summary, repeats=repeats.describe(done_repeats, time.perf_counter() - started))
  manifest["ended_at"] = now_iso()
  for writer in writers:
    writer.finish(summary, manifest)
  coordinator.barrier("teardown")
  return SuiteOutcome(out, run_plan.plan, records, summary, interrupted, race)


def _repeats(
    run_plan: RunPlan, settings: RunSettings, runs: _Runs, done: set[tuple[str, int]], todo: list[ScheduledRun],
    rng: random.Random, stop: StopRequest, coordinator: Coordinator, progress: RunProgress,
) -> tuple[RepeatsDone, RaceResult | None]:  # fmt: skip
  """The timed runs: driven rounds (matrix), a race (tune), auto rounds or a fixed count; and the race's result."""
  repeats = run_plan.repeats
  if (repeats.driven or settings.race is not None) and coordinator.process_count > 1:
    raise CkptbenchError(f"{'driven rounds (matrix)' if repeats.driven else 'a race (tune)'} run in one process")
  if repeats.driven:
    return driven_rounds(repeats, run_plan.keys, rng, runs.execute, stop, sys.stdin, sys.stdout), None
  if repeats.until_settled:  # this run is a memory pass
    return settled_rounds(run_plan.keys, benchmark_groups(run_plan.plan), repeats.count, rng, runs.execute, stop,
                          runs.records), None  # fmt: skip
  if settings.race is not None:
    seed = settings.race.seed if settings.race.seed is not None else rng.randrange(2**31)
    return race_rounds(RaceRun(run_plan, settings.race, rng, runs.execute, stop, runs.records, progress, seed,
                               runs.own_time))  # fmt: skip
  if repeats.auto:
    return auto_rounds(run_plan, done, rng, runs.execute, stop, runs.records, coordinator, progress,
                       runs.own_time), None  # fmt: skip
  return fixed_runs(todo, runs.execute, stop, repeats.count), None


def _gathered(record: RunRecord, coordinator: Coordinator, writers: Sequence[RunWriter]) -> list[RunRecord]:
  """Every host's record of one run, durable in OUT (process 0's writers) on return."""
  host_records = [RunRecord.from_json(r) for r in coordinator.allgather_json(record.to_json())]
  for writer in writers:
    writer.add(host_records)
  return host_records


class _Runs:
  """Runs one scheduled run at a time: flushed and noise-metered, recorded on every host, written."""

  def __init__(self, plan, suite, settings, coordinator, probe, link_stats, writers, progress, records, freeing,
               host_memory_absent):  # fmt: skip
    self.plan, self.suite, self.settings, self.coordinator = plan, suite, settings, coordinator
    self.probe, self.link_stats, self.writers, self.progress = probe, link_stats, writers, progress
    self.records: list[RunRecord] = records
    self.generators: dict[int, BenchmarksGenerator] = {}
    self.cache = PytreeCache(suite.config.reuse_checkpoint)
    self.watchdog = RunWatchdog(coordinator.process_index, coordinator.process_count)
    # A memory pass reads host memory only (its timings are dropped): waiting for other writers' pages
    # before each run would cost it time and change none of its readings.
    self.noise = NoiseMeter(flush=settings.flush_between_runs and not settings.memory_pass_repeats)
    self.freeing: Freeing = freeing
    self.host_memory_absent: str | None = host_memory_absent
    self.memory: MemoryPass | None = None  # this run's memory pass, once started
    # Before the first timed run: a run waits for its memory pass's warm-ups, a memory pass for its run's
    # timed runs (engine/memory/_gate.py).
    self.pass_end = PassEnd(settings.memory_pass_gate) if settings.memory_pass_gate else None  # this run is one
    self._before_timed_runs: Callable[[], None] | None = self.pass_end.at_gate if self.pass_end else None

  def start_memory_pass(self, host_memory: HostMemory, run_plan: RunPlan) -> None:
    """Starts the memory pass, whose warm-ups run beside this run's own."""
    self.memory = start_memory_pass(self.suite, self.settings, run_plan, host_memory.repeats, self.records)
    if self.memory is not None:
      self._before_timed_runs = self.memory.wait_warm

  def readings_written(self) -> None:
    """Where this run is a memory pass, tells its run that the readings are written, once their last
    checkpoint is gone (engine/memory/_gate.py)."""
    if self.pass_end is not None:
      self.freeing.wait()
      self.pass_end.done()

  def own_time(self) -> float:
    """A clock of this run's own: `time.perf_counter()` less the time it waited for its memory pass's warm-ups."""
    return time.perf_counter() - (self.memory.waited_s if self.memory is not None else 0.0)

  def execute(self, run: ScheduledRun) -> None:
    bench = self.plan.benchmarks[run.benchmark_index]
    label = f"{bench.name} {'warmup' if run.warmup else 'repeat'} {run.repeat}"
    self.freeing.wait()  # the previous run's checkpoint is gone before this run flushes and starts
    if not run.warmup and self._before_timed_runs is not None:
      before, self._before_timed_runs = self._before_timed_runs, None
      before()
    self.progress.started(bench.name, run.repeat, run.warmup)
    self.watchdog.start_run(label)
    self.noise.start()
    record, leftovers = _run_once(bench, run, self.suite, self.settings, self.generators, self.cache,
                                  self.coordinator, self.probe, self.link_stats, self.watchdog,
                                  self.host_memory_absent)  # fmt: skip
    record = dataclasses.replace(record, metrics={**record.metrics, **self.noise.stop()})
    host_records = _gathered(record, self.coordinator, self.writers)
    self.records.extend(host_records)
    self.progress.finished(bench.name, run.repeat, run.warmup, record.duration_s, _first_failure(host_records))
    self.coordinator.barrier(f"run-{bench.key}-{run.repeat}-{run.warmup}")
    self.watchdog.end_run()
    self.freeing.start(leftovers, self.coordinator.process_index == 0)

  def memory_pass(self, host_memory: HostMemory, run_plan: RunPlan) -> float:
    """The memory pass's readings (engine/memory/_pass.py) once the timed runs are done: its records written
    and kept; the seconds it cost the run (the manifest's `host_memory.seconds`): its readings, and the wait
    for its warm-ups."""
    self.freeing.wait()  # the last timed run's checkpoint is gone first
    self.progress.note("memory pass: each benchmark again until its host memory figures are precise, in a fresh"
                       " process (host memory only; every timing is the timed runs')")  # fmt: skip
    started = time.perf_counter()
    if self.memory is None:  # a driven run's, or a resumed run's with nothing left to read
      self.memory = start_memory_pass(self.suite, self.settings, run_plan, host_memory.repeats, self.records)
    records = self.memory.finish(self.records) if self.memory is not None else []
    for writer in self.writers:
      writer.add(records)
    self.records.extend(records)
    failed = sum(1 for r in records if r.failed)
    seconds = time.perf_counter() - started + (self.memory.waited_s if self.memory is not None else 0.0)
    self.progress.note(f"memory pass: {len(records)} run(s) recorded in {seconds:.1f} s"
                       + (f", {failed} failed" if failed else ""))
    return round(seconds, 3)


def _manifest_and_probe(
    suite: Suite, settings: RunSettings, coordinator: Coordinator
) -> tuple[dict[str, Any], StorageProbe | StoreRoofline | None]:
  """The run's manifest (every host's name and pid, the storage probe) and the probe, on every process."""
  manifest = build_manifest(suite_raw=suite.raw, suite_file=suite.file, argv=list(settings.argv),
                            backend=run_backend_name(suite.config.simdevice))  # fmt: skip
  manifest["hosts"] = coordinator.allgather_json({"hostname": manifest["hostname"], "pid": os.getpid()})
  probe = _shared_probe(settings, coordinator)
  manifest["roofline"] = None if probe is None else dataclasses.asdict(probe)
  return manifest, probe


def _check_processes(suite: Suite, process_count: int) -> None:
  """Refuses, before anything runs, a built-in that needs more processes than this run has (`Builtin.processes`)."""
  for entry in suite.entries:
    builtin = getattr(entry.generator_cls, "builtin", None)
    if builtin is not None and process_count < builtin.processes:
      raise CkptbenchError(f"{builtin.name} needs {builtin.processes} processes or more ({process_count} here):"
                           f" run it with `ckptbench launch -n {builtin.processes} {suite.file} -o OUT`")  # fmt: skip


def _checked_run_plan(suite: Suite, settings: RunSettings, coordinator: Coordinator, device_count: int) -> RunPlan:
  """The run's plan, built once, when every process agrees it can run; OUT is created only then.

  Raises:
    CkptbenchError: on every process (so none waits for the others) when the
      data would not fit in memory or OUT cannot be used.
  """
  run_plan = build_run_plan(suite, settings, device_count)
  plan = run_plan.plan
  for mesh, reason in plan.all_skipped_meshes():
    _log.warning("skipping mesh %s: %s", mesh, reason)
  for generator, values, reason in plan.invalid:
    _log.warning("not run: %s%s: %s", generator, values, reason)
  for note in suite.notes:
    _log.warning("%s", note)
  for generator, values, reason in plan.unsupported:
    _log.warning("unsupported here, not run: %s%s: %s", generator, values, reason)
  setup_error = memory_problem(plan, coordinator, settings.ask("check_memory", False)) if settings.check_memory else None
  if coordinator.process_index == 0 and setup_error is None:  # nothing is written for a suite that cannot run
    try:
      repeats = run_plan.repeats  # auto: its most rounds
      need = disk_need(plan, repeats.count + repeats.warmups, keeps_checkpoints(settings, suite))
      _log.info("disk for checkpoints: %s", need.describe())
      root = settings.checkpoint_root or settings.output_dir
      setup_error = disk_problem(need, root, settings) if settings.check_disk else None
      if setup_error is None:
        prepare_output_dir(settings)
    except CkptbenchError as e:
      setup_error = str(e)
  setup_errors = [e for e in coordinator.allgather_json(setup_error) if e]  # also the setup barrier
  if setup_errors:
    raise CkptbenchError(setup_errors[0])
  return run_plan


def _summary(
    suite: Suite, run_plan: RunPlan, records: list[RunRecord], done: RepeatsDone, host_memory: HostMemory
) -> SuiteSummary:
  """summary.json: statistics per benchmark, the verdicts (against the plan's reference, at the threshold
  asked for), and what the plan left out and why."""
  plan, reference = run_plan.plan, run_plan.reference
  position = {b.key: i for i, b in enumerate(plan.benchmarks)}
  in_plan_order = sorted(records, key=lambda r: position.get(r.key, len(position)))
  verdicts = sweep_verdicts(in_plan_order, reference, paired=run_plan.repeats.interleaved, design=done.design,
                            threshold=run_plan.threshold)  # fmt: skip
  try:
    effects = sweep_effects(in_plan_order, reference, paired=run_plan.repeats.interleaved, design=done.design,
                            threshold=run_plan.threshold)  # fmt: skip
  except Exception as e:  # noqa: BLE001  (a model that cannot be fitted costs the effects, never summary.json)
    _log.warning("the sweep's effects could not be estimated: %s: %s", type(e).__name__, e)
    effects = SweepEffects(notes=(f"effects: not estimated ({type(e).__name__}: {e})",))
  return SuiteSummary(
      suite=suite.name,
      reference=reference,
      interrupted=done.interrupted,
      skipped_meshes=[SkippedMesh(m, r) for m, r in plan.all_skipped_meshes()],
      notes=[*suite.notes, host_memory.why, *effects.notes],
      invalid_combinations=[NotRun(g, o, r) for g, o, r in plan.invalid],
      unsupported=[NotRun(g, o, r) for g, o, r in plan.unsupported],
      benchmarks=summarize_benchmarks(records),
      verdicts=verdicts,
      effects=list(effects.effects),
      interactions=list(effects.interactions),
      floor=suite.config.floor,
      floor_shares=floor_shares(in_plan_order, suite.config.floor, paired=run_plan.repeats.interleaved),
  )


def _first_failure(host_records: list[RunRecord]) -> str | None:
  """The progress line's note for a run that failed on some host."""
  for r in host_records:
    if r.error is not None:
      return f"host {r.host}: {r.error.type}: {r.error.message[:200]}"
  return None


def _shared_probe(settings: RunSettings, coordinator: Coordinator) -> StorageProbe | StoreRoofline | None:
  """Process 0 probes the output directory's storage; every process gets the figures."""
  if not settings.probe_storage:
    return None
  mine = None
  if coordinator.process_index == 0:
    root = settings.checkpoint_root
    try:
      if is_store_url(root):
        found = store_roofline(root)
      else:  # a steady cached probe, else measure now or (probe_later) after the run
        found = cached_probe(settings.output_dir)
        if found is None and not settings.probe_later:
          found = probe_storage(settings.output_dir)
      mine = None if found is None else dataclasses.asdict(found)
    except Exception as e:  # noqa: BLE001  (a failed probe only costs the roofline shares)
      _log.warning("storage probe failed (%s); throughputs get no roofline share", e)
  shared = coordinator.allgather_json(mine)[0]
  return None if shared is None else roofline_from_dict(shared)


def _run_once(
    bench: PlannedBenchmark,
    run: ScheduledRun,
    suite: Suite,
    settings: RunSettings,
    generators: dict[int, BenchmarksGenerator],
    cache: PytreeCache,
    coordinator: Coordinator,
    probe: StorageProbe | StoreRoofline | None,
    link_stats: Callable[[], Mapping[str, int]] | None,
    watchdog: RunWatchdog,
    host_memory_absent: str | None = None,
) -> tuple[RunRecord, RunLeftovers]:
  """One run of one benchmark, as a record, and what it left on disk to free after every host recorded it."""
  out = settings.output_dir
  run_name = f"warmup_{run.repeat}" if run.warmup else f"repeat_{run.repeat}"
  run_dir, store_url = run_location(settings.checkpoint_root or out, bench.dir_name, run_name)
  started_at = now_iso()
  t0 = time.perf_counter()
  timeout = getattr(bench.options, "timeout_s", None) or suite.config.timeout_s
  requests = StoreRequests(store_url, link_stats) if store_url is not None else None
  error, result, t_fn, local_path, request_counts = None, None, None, None, None  # what the try below may set
  with collect_created_metrics() as created:
    try:
      _prepare_location(run_dir, store_url, coordinator, f"mkdir-{bench.key}-{run.repeat}-{run.warmup}")
      local_path = _local_path(settings.local_directory, coordinator, bench, run_name)
      context = _context(bench, run, cache, run_dir, local_path, out, host_memory_absent)
      generator = generators.get(run.benchmark_index)
      if generator is None:
        generator = generators[run.benchmark_index] = bench.entry.generator_cls()
      if requests is not None:
        requests.start()
      t_fn = time.perf_counter()
      watchdog.in_test_fn(timeout)
      with deadline(timeout):
        result = generator.test_fn(context)
      if requests is not None:  # before ckptbench's own listing of the store below
        request_counts = requests.stop()
      if timeout and time.perf_counter() - t_fn > timeout:  # not interruptible (not the main thread)
        error = timeout_error(timeout, time.perf_counter() - t_fn, None)
      elif not isinstance(result, TestResult):
        raise TypeError(f"test_fn must return a ckptbench.TestResult, got {type(result).__name__}")
    except RunTimeout:
      error = timeout_error(timeout, time.perf_counter() - (t_fn or t0), traceback.format_exc())
    except (KeyboardInterrupt, SystemExit):  # the user's stop (Ctrl-C, SIGTERM) or an exit ends the whole run
      raise
    except BaseException as e:  # noqa: BLE001  (any failure of the code under test is a result; DCP's
      # CheckpointException derives from BaseException, and one benchmark's failure must not lose the others)
      error = disk_full_error(e, bench.name, run_dir) or unreadable_data_error(e) or ErrorRecord.from_exception(e)
  watchdog.after_test_fn(error)
  if error is not None and error.type in (TIMEOUT, DISK_FULL):  # a partial checkpoint: free the space
    for partial in (p for p in (run_dir, local_path) if p is not None):
      remove_location(partial)
  identity = dict(
      suite=suite.name, **bench.describe(), repeat=run.repeat, warmup=run.warmup,
      host=coordinator.process_index, num_hosts=coordinator.process_count, path=str(run_dir), started_at=started_at,
  )  # fmt: skip
  checks = _StoreChecks(store_url, request_counts, local_path is not None, coordinator)
  record = _result_record(identity, t0, created, result, error, run_dir, probe, checks, bench.name)
  return record, RunLeftovers.of(run_dir, local_path, result, settings, suite)


@dataclasses.dataclass(frozen=True)
class _StoreChecks:
  """What a run on an object store is checked with once measured (see `_store_checks`)."""

  store_url: StoreURL | None
  request_counts: Mapping[str, int] | None
  staged_locally: bool
  coordinator: Coordinator


def _result_record(
    identity: Mapping[str, Any], t0: float, created: Any, result: TestResult | None, error: ErrorRecord | None,
    run_dir: Any, probe: StorageProbe | StoreRoofline | None, checks: _StoreChecks, name: str,
) -> RunRecord:  # fmt: skip
  """The run's record; anything wrong in handling its result (a type, a crash) fails this run only."""
  try:
    tags, inventory = _measured(created, None if error else result, run_dir, probe)
    if checks.store_url is not None:
      error = _store_checks(checks.store_url, tags, inventory, checks.request_counts, checks.staged_locally,
                            checks.coordinator, error)  # fmt: skip
    notes = [str(n) for n in result.notes] if result is not None else []
    record = RunRecord(**identity, duration_s=time.perf_counter() - t0, metrics=tags, inventory=inventory,
                       notes=notes, error=error)  # fmt: skip
    json.dumps(record.to_json(), allow_nan=True)  # what the writers and the gather will do with it
  except Exception as e:  # noqa: BLE001  (a bad result fails this run only; the others go on)
    _log.warning("handling the result of %s failed: %s", name, e)
    failure = ErrorRecord.from_exception(e, message=f"handling the run's result failed: {type(e).__name__}: {e}")
    record = RunRecord(**identity, duration_s=time.perf_counter() - t0, metrics={}, error=error or failure)
  return record


def _prepare_location(run_dir: Any, store_url: StoreURL | None, coordinator: Coordinator, barrier: str) -> None:
  """Process 0 creates (or empties) the run's location; every process waits for it."""
  try:
    if coordinator.process_index == 0:
      prepare_location(run_dir, store_url)
  finally:  # every process reaches the barrier, even when process 0 failed
    coordinator.barrier(barrier)


def _context(
    bench: PlannedBenchmark, run: ScheduledRun, cache: PytreeCache, run_dir: Any, local_path: Any, out: pathlib.Path,
    host_memory_absent: str | None,
) -> TestContext:
  """What test_fn gets: the (possibly shared) data, the run's paths and the benchmark's identity."""
  pytree, mesh = cache.get(bench)
  return TestContext(
      pytree=pytree, path=run_dir, options=bench.options, mesh=mesh,
      repeat_index=run.repeat, local_path=local_path, name=bench.name, key=bench.key,
      checkpoint_config=bench.checkpoint.config, trace_root=out / "tensorboard",
      host_memory_absent=host_memory_absent, warmup=run.warmup,
  )  # fmt: skip


def _store_checks(
    store_url: StoreURL,
    tags: dict[str, MetricEntry],
    inventory: dict[str, Any] | None,
    request_counts: Mapping[str, float] | None,
    local_scratch: bool,
    coordinator: Coordinator,
    error: ErrorRecord | None,
) -> ErrorRecord | None:
  """A store run's cost tags (added to `tags`) and, on process 0, where its bytes went."""
  if request_counts is not None and inventory is not None:
    tags.update(store_cost_tags(store_url, inventory["total_bytes"], request_counts))
  if coordinator.process_index != 0:
    return error
  # A save that left its bytes on local disk fails the run, whatever the benchmark said.
  return placement_error(store_url, tags, local_scratch, error)


def _local_path(
    local_directory: pathlib.Path | None, coordinator: Coordinator, bench: PlannedBenchmark, run_name: str
) -> pathlib.Path | None:
  """The run's host-local scratch directory (--local_directory), created; None without one."""
  if local_directory is None:
    return None
  if coordinator.process_count > 1:  # processes may share a machine
    local_directory = local_directory / f"host_{coordinator.process_index}"
  path = local_directory / bench.dir_name / run_name
  path.mkdir(parents=True, exist_ok=True)
  return path


def _measured(
    created: list, result: TestResult | None, run_dir: pathlib.Path, probe: StorageProbe | StoreRoofline | None
) -> tuple[dict[str, MetricEntry], dict[str, Any] | None]:
  """(tags, inventory) of a run: every Metrics it created, plus, for a run that succeeded
  (`result` given), its inventory and the tags derived after the run (roofline shares)."""
  metrics_objects = list(created)
  if result is not None and result.metrics not in metrics_objects:
    metrics_objects.append(result.metrics)
  tags = dict(merged(metrics_objects))
  if result is None:
    return tags, None
  try:  # a TestResult.inventory of the wrong type raises on: that run's error (see _result_record)
    new_tags, inventory = post_run_tags(tags, run_dir, inventory=result.inventory, probe=probe)
  except OSError as e:  # the directory could not be scanned: the measurements stand without it
    _log.warning("could not take the inventory of %s: %s", run_dir, e)
    return tags, None
  tags.update(new_tags)
  result.path, result.inventory = run_dir, inventory
  return tags, inventory
