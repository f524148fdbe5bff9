"""Host memory from a pass of its own: the suite's runs again, in a fresh process whose allocator keeps nothing.

In one long process a block's host memory depends on what earlier runs left in glibc's allocator: its
dynamic thresholds let every thread's arena keep up to twice the largest mapped block freed there (32
MiB and more after a load's read buffers), which `malloc_trim` cannot hand back, and the next save takes
its buffers from it. The 128 MiB sync save then reads 0.45-0.9x what it adds in a fresh process and the
load 1.1-1.6x, moving with what ran before (issue 30; docs/metrics.md, *Host memory*).

So by default (`host_memory: pass`) the timed runs measure no host memory at all (the `rss` collector is
held: no trim, no sampler, glibc's defaults as a training process has them), and one child `ckptbench
run` runs the same benchmarks again, with `MALLOC_MMAP_THRESHOLD_` fixed at 64 KiB: a warm-up per
generator, mesh and data, then rounds of the benchmarks whose host memory has not settled, until the
figure of each of a benchmark's judged tags is precise enough (3 readings at least; the rule and its
error: stats/_settled.py), never more readings than `memory_readings_cap` allows (10; a fixed repeat
count's own count): not the timed runs' repeat count. It starts as the timed runs' first run does, so
its start and warm-ups (read by nobody) run beside theirs; its readings wait until the timed runs are
done and their last checkpoint is gone, and the timed runs wait for its warm-ups before their first
repeat (engine/memory/_gate.py): no saves and loads of the one run beside the other's measured ones,
which would share the disk, the page cache and the CPUs. A driven run's pass (below) starts after the
driver's stop, as other environments' runs are not held by its gate. A fixed threshold stops glibc's
adjusting, so every block of 64 KiB or more is mapped when allocated and unmapped when freed, as in a
fresh process before its first large free, and no arena keeps free memory at its top beyond the 128 KiB trim threshold: each run's
peak is what it needs, whatever ran before it. Measured (measurements/memory_truth.py, the 128 MiB save
and load): the save reads 106 MiB in every repeat and the load 174-201 MiB, with or without async
saves between loads, where fresh processes add 111 and 212-260 (which keep their blocks under 128 KiB
on the heap). Held at glibc's start-up value (128 KiB), with or without one arena
(`MALLOC_ARENA_MAX=1`), the load read nearer a fresh process's level but moved with what ran before
it, and a matrix then read Orbax 0.12.8's non-OCDBT load 1.14x above 0.11.30's where fresh
processes read it 0.88x; at 64 KiB the matrix read 1.01x (docs/performance.md, *Host memory*).
Those runs' host-memory tags
become records of their own in results.jsonl (`RunRecord.memory_pass`); their timings are dropped
(mapping every buffer afresh makes loads some 10-25% slower), and every timing comes from the timed
runs.
A `matrix` environment's driven run has its pass once the driver says stop. Where a pass cannot run
(several processes; generators defined in the script being run, which a fresh process cannot
import) memory is measured inside the timed runs (`inline`, the trimmed reading of
metrics/_basic_collectors.py) and the run says so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Iterator, Sequence

from ckptbench.api import ErrorRecord, RunRecord, is_host_memory_tag, memory_pass_records, timed_runs, warmup_runs
from ckptbench.config import Suite
from ckptbench.errors import EXIT_INTERRUPTED, CkptbenchError
from ckptbench.results import now_iso, read_records
from ckptbench.engine.memory._pass_choices import (
    MEMORY_PASS_ENV,
    host_memory_mode,
    memory_readings_cap,
)
from ckptbench.engine.memory._gate import PassGate
from ckptbench.engine.memory._warm import WarmProcess, can_fork
from ckptbench.engine._run_plan import RunPlan
from ckptbench.engine._settings import RunSettings

_SUBDIRECTORY = "memory_pass"
# The child forked for this run's pass (`forked_memory_pass`), while the run lasts.
_forked: WarmProcess | None = None


@dataclasses.dataclass(frozen=True)
class HostMemory:
  """How this run measures host memory.

  Attributes:
    mode: "pass" (a memory pass after the timed runs), "inline" (inside the timed runs) or "off".
    why: one line saying so, for the manifest and summary.json's notes.
    repeats: the memory pass's most readings of a benchmark (mode "pass").
  """

  mode: str
  why: str
  repeats: int = 0

  @property
  def held(self) -> frozenset[str]:
    """The collectors the timed runs leave out."""
    return frozenset() if self.mode == "inline" else frozenset({"rss"})

  @property
  def absent_from_timed_runs(self) -> str | None:
    """Why the timed runs measure no host memory (`TestContext.host_memory_absent`); None where they do."""
    if self.mode == "pass":
      return "host memory is measured in the memory pass after the timed runs, not in them"
    return "host memory is not measured (host_memory off)" if self.mode == "off" else None

  def to_json(self) -> dict:
    return {"mode": self.mode, "why": self.why, "repeats": self.repeats,
            "environment": MEMORY_PASS_ENV if self.mode == "pass" else {}}  # fmt: skip


def check_host_memory(suite: Suite, settings: RunSettings, process_count: int) -> None:
  """Refuses a memory pass asked for where none can run, before anything is written.

  Raises:
    CkptbenchError: an unknown mode (the flag's or the environment variable's), or `pass` asked for in
      a multi-process run or for a generator defined in the script being run.
  """
  obstacle = _obstacle(suite, settings, process_count)
  if _asked(settings) == "pass" and settings.host_memory and obstacle:
    raise CkptbenchError(f"{settings.ask('host_memory', 'pass')} pass: no memory pass for {obstacle}"
                         " (it runs the suite again in one fresh process); use inline or off")  # fmt: skip


def host_memory_plan(suite: Suite, settings: RunSettings, run_plan: RunPlan, process_count: int) -> HostMemory:
  """How this run measures host memory (see the module's docstring)."""
  if settings.memory_pass_repeats:
    return HostMemory("inline", "host memory: this run is a memory pass")
  asked = _asked(settings)
  obstacle = _obstacle(suite, settings, process_count)
  if asked == "off":
    return HostMemory("off", "host memory: not measured (host_memory off)")
  if asked == "inline" or obstacle:
    reason = f" ({obstacle}, where no memory pass runs)" if asked == "pass" else " (host_memory inline)"
    return HostMemory("inline", "host memory: measured inside the timed runs" + reason + ": a block's peak"
                      " may read low where earlier runs left free memory in the allocator (docs/metrics.md)")
  most = memory_readings_cap(run_plan.repeats.count, run_plan.repeats.auto)
  return HostMemory("pass", f"host memory: from a memory pass after the timed runs, in a fresh process with"
                    f" glibc's mmap threshold fixed ({' '.join(f'{k}={v}' for k, v in MEMORY_PASS_ENV.items())}),"
                    f" each benchmark read until its figures are precise ({most} readings at most);"
                    " the timed runs measure none", most)  # fmt: skip


def _asked(settings: RunSettings) -> str:
  return host_memory_mode(settings.host_memory, settings.ask("host_memory", settings.host_memory or ""))


def _obstacle(suite: Suite, settings: RunSettings, process_count: int) -> str | None:
  """What keeps a memory pass from running this suite, or None."""
  if process_count > 1:
    return f"a run of {process_count} processes"
  in_script = sorted({e.generator_path for e in suite.entries if e.generator_cls.__module__ == "__main__"})
  if in_script:  # a fresh process cannot import what the running script defines
    return f"generators defined in the script being run ({', '.join(in_script)}): move them into a module"
  return None


@contextlib.contextmanager
def forked_memory_pass(suite: Suite, settings: RunSettings) -> Iterator[None]:
  """While the block runs, a child forked now waits to be this run's memory pass (engine/memory/_warm.py),
  where the settings allow it (`RunSettings.memory_pass_forked`), a pass may run and forking is safe (one
  process, no JAX backend yet); it is gone when the block ends."""
  global _forked
  fork = (settings.memory_pass_forked and not settings.memory_pass_repeats and _asked(settings) == "pass"
          and not _obstacle(suite, settings, 1) and _forked is None and can_fork())  # fmt: skip
  if not fork:
    yield
    return
  # The pass's settling rule needs scipy after its first round, where the run waits for it; imported here,
  # the child has it for nothing, and this run's verdicts on host memory need it too.
  import scipy.special  # noqa: F401, PLC0415

  _forked = WarmProcess()
  try:
    yield
  finally:
    _forked.close()
    _forked = None


def memory_pass_process() -> str:
  """Where this run's memory pass will run: "forked" (`forked_memory_pass`) or "fresh" (a new Python process)."""
  return "forked" if _forked is not None else "fresh"


def start_memory_pass(
    suite: Suite, settings: RunSettings, run_plan: RunPlan, repeats: int, earlier: Sequence[RunRecord]
) -> MemoryPass | None:
  """The memory pass, started now (its process and warm-ups), or None where `earlier` (the run's records so
  far, resumed ones included) has a memory pass of every benchmark."""
  done_keys = {r.key for r in memory_pass_records(earlier)}
  if all(b.key in done_keys for b in run_plan.plan.benchmarks):  # a resumed run whose pass was done
    return None
  return MemoryPass(suite, settings, run_plan, repeats, done_keys)


class MemoryPass:
  """A run's memory pass: its process started, its warm-ups beside the run's own, its readings held until
  `finish` (engine/memory/_gate.py). `wait_warm` before the run's first timed run; `close` stops a pass
  that was never finished and removes what it wrote."""

  def __init__(self, suite: Suite, settings: RunSettings, run_plan: RunPlan, repeats: int, done_keys: set[str]):
    self._suite, self._benchmarks, self._done_keys = suite, run_plan.plan.benchmarks, done_keys
    out = settings.output_dir
    self._child_out = out / _SUBDIRECTORY
    self._suite_file, self._written = _suite_file(suite, out)
    self.log = out / "logs" / "memory_pass.log"
    self.log.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **MEMORY_PASS_ENV, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    command = _command(suite, settings, self._suite_file, self._child_out, repeats)
    self._process: subprocess.Popen | None = None  # None: the forked child (`forked_memory_pass`)
    if _forked is not None:
      self._gate = _forked.gate
      argv = [*command[3:], "--memory_pass_gate", self._gate.flag]  # after `python -m ckptbench`
      _forked.start(argv, env, str(self.log))
    else:
      self._gate = PassGate()
      with self.log.open("w") as sink:
        self._process = subprocess.Popen([*command, "--memory_pass_gate", self._gate.flag], env=env, stdout=sink,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         pass_fds=self._gate.child_fds)  # fmt: skip
      self._gate.child_started()
    self._open = True

  @property
  def waited_s(self) -> float:
    """How long the run waited for the pass's warm-ups."""
    return self._gate.waited_s

  def wait_warm(self) -> None:
    """Returns once the pass's warm-ups are done (or the pass is gone): the run's timed runs may start."""
    self._gate.wait_warm()

  def finish(self, earlier: Sequence[RunRecord]) -> list[RunRecord]:
    """Lets the pass read, now that the timed runs are done; its records of every benchmark it had to read,
    each with the tags only host memory gave (see `_memory_record`).

    A benchmark the pass recorded nothing for (the child could not start, or died) gets one failed record
    naming the pass's exit status and log (OUT/logs/memory_pass.log, kept only then).
    """
    self._gate.release()
    try:
      returncode = self._wait_readings()
      found = read_records(self._child_out) if (self._child_out / "results.jsonl").exists() else []
    finally:
      self._remove()
    timed_tags: dict[str, set[str]] = {}  # by generator
    for r in [*warmup_runs(earlier), *timed_runs(earlier)]:
      timed_tags.setdefault(r.generator, set()).update(r.metrics)
    # The child's own runs are timed runs of a run of its own; its warm-ups are left out here too.
    done_keys = self._done_keys
    records = [_memory_record(r, timed_tags.get(r.generator, set()))
               for r in timed_runs(found) if r.key not in done_keys]  # fmt: skip
    recorded = {r.key for r in records}
    missing = [b for b in self._benchmarks if b.key not in recorded and b.key not in done_keys]
    if returncode == EXIT_INTERRUPTED:  # Ctrl-C reached it too: what it did not run failed nothing
      missing = []
    if not missing:
      self._remove_log()
    error = ErrorRecord("MemoryPassFailed", f"the memory pass recorded no run of this benchmark (its process"
                        f" exited {returncode}; its output: {self.log})")  # fmt: skip
    return records + [
        RunRecord(suite=self._suite.name, **b.describe(), repeat=0, warmup=False, host=0, num_hosts=1,
                  path=str(self._child_out), started_at=now_iso(), duration_s=0.0, metrics={}, error=error,
                  memory_pass=True)
        for b in missing
    ]  # fmt: skip

  def close(self) -> None:
    """A pass never finished (the run was stopped or failed): it exits without a reading, and what it wrote is
    removed."""
    if not self._open:
      return
    self._gate.close()
    try:
      self._wait()
    finally:
      self._remove()
      self._remove_log()

  def _wait(self) -> int:
    """The pass process's exit status, once it exits."""
    if self._process is None:
      return _forked.wait()
    try:
      return self._process.wait()
    except BaseException:  # a second Ctrl-C here: the child is not left behind
      self._process.kill()
      self._process.wait()
      raise

  def _wait_readings(self) -> int:
    """0 once the pass says its readings are written, when it is stopped (the rest of its run, a summary and
    tables, is read by nobody); else its exit status, once it exits."""
    try:
      done = self._gate.wait_done()
    except BaseException:  # a second Ctrl-C here: the child is not left behind
      self._stop()
      raise
    if not done:
      return self._wait()
    self._stop()
    return 0

  def _stop(self) -> None:
    """Stops the pass process and reaps it."""
    if self._process is None:
      _forked.kill()
    else:
      self._process.kill()
      self._process.wait()

  def _remove(self) -> None:
    self._open = False
    shutil.rmtree(self._child_out, ignore_errors=True)
    if self._written:
      self._suite_file.unlink(missing_ok=True)

  def _remove_log(self) -> None:
    self.log.unlink(missing_ok=True)
    if self.log.parent.is_dir() and not any(self.log.parent.iterdir()):
      self.log.parent.rmdir()


def _memory_record(record: RunRecord, timed_tags: set[str]) -> RunRecord:
  """A memory pass's record as the run keeps it: its host-memory tags, the tags no timed run of its
  generator recorded (what a test_fn derives from host memory only where it is measured, such as
  training_interference's peak growth per save; a counter that some timed run of the generator
  recorded is the timed runs' figure), and its error; nothing the timed runs measured."""
  metrics = {tag: entry for tag, entry in record.metrics.items() if is_host_memory_tag(tag) or tag not in timed_tags}
  error = record.error and dataclasses.replace(record.error, message=f"in the memory pass: {record.error.message}")
  return dataclasses.replace(record, metrics=metrics, inventory=None, notes=[], error=error, memory_pass=True)


def _suite_file(suite: Suite, out: pathlib.Path) -> tuple[pathlib.Path, bool]:
  """The suite's file, or (a suite loaded from text) its document written beside OUT's results; whether written."""
  if pathlib.Path(suite.file).is_file():
    return pathlib.Path(suite.file).resolve(), False
  path = out / "memory_pass_suite.yaml"
  path.write_text(json.dumps(suite.raw))  # JSON is YAML
  return path, True


def _command(suite: Suite, settings: RunSettings, suite_file: pathlib.Path, child_out: pathlib.Path,
             repeats: int) -> list[str]:  # fmt: skip
  """The child's `ckptbench run`: the same suite, selection, overrides, devices and places as this run."""
  command = [sys.executable, "-m", "ckptbench", "run", str(suite_file), "-o", str(child_out), "--overwrite",
             "--memory_pass_repeats", str(repeats), "--distributed", "off", "--no_views", "--no_probe",
             "--no_progress"]  # fmt: skip
  for override in settings.overrides:
    command += ["--set", override]
  for pattern in settings.select:
    command += ["-k", pattern]
  if settings.devices is not None and suite.config.simdevice is None:
    command += ["--devices", str(settings.devices)]
  if settings.checkpoint_root:  # beside the timed runs' checkpoints, never over one kept
    command += ["--checkpoint_root", settings.checkpoint_root.rstrip("/") + "/" + _SUBDIRECTORY]
  if settings.local_directory is not None:
    command += ["--local_directory", str(settings.local_directory / _SUBDIRECTORY)]
  if settings.link:
    command += ["--link", settings.link]
  return command
