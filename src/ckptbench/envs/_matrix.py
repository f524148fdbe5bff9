"""`ckptbench matrix`: one suite in several environments, in interleaved rounds, judged against the first.

Each environment runs the suite in one long-lived `ckptbench run` whose rounds
this process drives (`--driven_rounds`, engine/loop/_rounds.py): after every
environment's warm-ups, each round runs the suite once in every environment,
the environments in a fresh random order, so drift of a shared machine falls on
every environment alike and round r pairs across them. `num_repeats: auto`
repeats rounds until decided exactly as `ckptbench run` does
(`run.rounds_until_decided`: the same looks, levels, time budget and futility
rule), judging each benchmark in each environment against the same benchmark
in the first (`envs/_judge.py`: `analysis.sweep_verdicts`, paired by round); a
fixed `num_repeats: N` runs N rounds and looks once.

OUT/<label>/ is each environment's usual output directory (its manifest lists
the exact versions) plus its comparison.json with the first environment;
OUT/comparison.json gathers them all, and OUT/report.html puts every environment's
headline metrics side by side (written last). An environment that
fails to build or to run is reported in one line and left out; the others still
run. Nothing half-written stays in OUT: the directory of an environment that
did not finish is removed.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import pathlib
import random
import shutil
import subprocess
import time
from typing import IO, Any, Callable

from ckptbench.envs._build import BuiltEnv, EnvBuildError, build_env, isolated_environ, last_lines
from ckptbench.envs._index import check_released
from ckptbench.envs._judge import environment_verdicts, judged_comparison
from ckptbench.envs._spec import EnvSpec
from ckptbench.errors import EXIT_BENCHMARK_FAILED, EXIT_OK, EXIT_REGRESSION, CkptbenchError
from ckptbench.config import DEFAULT_TIME_BUDGET_S
from ckptbench.stats import AUTO_LOOKS, DEFAULT_THRESHOLD, Design

_log = logging.getLogger(__name__)

MATRIX_FILE = "comparison.json"
_RUN_LOG = "ckptbench-run.log"


@dataclasses.dataclass(frozen=True)
class MatrixSettings:
  """What `ckptbench matrix` was asked (its flags)."""

  suite_file: pathlib.Path
  specs: tuple[EnvSpec, ...]
  output_dir: pathlib.Path
  overwrite: bool = False
  threshold: float = DEFAULT_THRESHOLD
  devices: int | None = None
  cache_dir: pathlib.Path | None = None
  time_budget_s: float | None = None  # auto repeats: the budget (`run.time_budget`); None: the default
  metric: str | None = None  # the looks wait for this metric alone (`bisect`'s); None: every judged one
  overrides: tuple[str, ...] = ()  # `--set KEY=VALUE`, given to every environment's run


@dataclasses.dataclass(frozen=True)
class EnvOutcome:
  """How one environment fared: status "ok", "build_failed" or "run_failed"."""

  label: str
  spec: str
  status: str
  error: str | None = None
  versions: dict[str, Any] | None = None
  failed_runs: int = 0
  cached: bool = False
  build_s: float = 0.0


@dataclasses.dataclass(frozen=True)
class MatrixOutcome:
  output_dir: pathlib.Path
  environments: tuple[EnvOutcome, ...]
  reference: str | None
  comparisons: dict[str, Any]  # label -> ckptbench.results.Comparison
  repeats: dict[str, Any] = dataclasses.field(default_factory=dict)  # as summary.json's `repeats`

  def exit_code(self, fail_on_regression: bool, allow_inconclusive: bool = False) -> int:
    """1 when an environment or a benchmark failed; else, when asked, each comparison's gate (3 or 5)."""
    if any(e.status != "ok" or e.failed_runs for e in self.environments):
      return EXIT_BENCHMARK_FAILED
    codes = [c.exit_code(fail_on_regression, allow_inconclusive) for c in self.comparisons.values()]
    return EXIT_REGRESSION if EXIT_REGRESSION in codes else max(codes, default=EXIT_OK)


def check_specs(specs: tuple[EnvSpec, ...]) -> None:
  """Every package known and every pinned version released (before anything is built).

  Raises:
    CkptbenchError: naming the package or version and the nearest released versions.
  """
  for spec in specs:
    for requirement in spec.requirements:
      check_released(requirement)


def _prepare(settings: MatrixSettings) -> None:
  out = settings.output_dir
  if out.exists() and not out.is_dir():
    raise CkptbenchError(f"output directory {out} exists and is not a directory")
  taken = [p.name for p in [out / MATRIX_FILE, *(out / s.label for s in settings.specs)] if p.exists()]
  if taken and not settings.overwrite:
    raise CkptbenchError(
        f"output directory {out} already holds {', '.join(taken)}; pass --overwrite or choose another directory"
    )
  for name in taken + _earlier_labels(out) if settings.overwrite else []:
    path = out / name
    if path.is_dir():
      shutil.rmtree(path)
    elif path.exists():
      path.unlink()
  out.mkdir(parents=True, exist_ok=True)


def _earlier_labels(out: pathlib.Path) -> list[str]:
  """The environment directories of an earlier matrix in `out` (replaced by --overwrite)."""
  try:
    document = json.loads((out / MATRIX_FILE).read_text())
    return [e["label"] for e in document.get("environments", []) if "/" not in e["label"]]
  except (OSError, ValueError, TypeError, KeyError):
    return []


def run_matrix(
    settings: MatrixSettings, num_repeats: int | str, say: Callable[[str], None] = print
) -> MatrixOutcome:
  """Builds the environments, runs the suite in each in interleaved rounds, judges each against the first.

  Args:
    settings: the suite, the environments and where results go.
    num_repeats: the suite's `num_repeats`: "auto" (rounds until decided, within the time budget) or a count.
    say: where progress lines go.

  Raises:
    CkptbenchError: bad input (unknown package or version, OUT taken), before anything runs.
  """
  from ckptbench.engine import Repeats  # noqa: PLC0415  (run loads JAX's helpers; the CLI's start does not)

  check_specs(settings.specs)
  _prepare(settings)
  out = settings.output_dir
  built, outcomes = _build_environments(settings, say)
  auto = num_repeats == "auto"
  budget = settings.time_budget_s or DEFAULT_TIME_BUDGET_S
  repeats = Repeats(auto, AUTO_LOOKS[-1] if auto else int(num_repeats), 0, True, budget if auto else None)
  workers = {env.spec.label: _Worker(env, settings) for env in built}

  def failed(label: str, problem: str) -> None:
    say(f"ckptbench: environment {label} failed: {problem}")
    outcomes[label] = dataclasses.replace(outcomes[label], status="run_failed", error=problem)
    workers.pop(label).close()
    shutil.rmtree(out / label, ignore_errors=True)

  started = time.perf_counter()
  try:
    for label, worker in list(workers.items()):  # warm-ups, each environment's own (they started together)
      problem = worker.ready()
      if problem:
        failed(label, problem)
    done = _rounds(repeats, workers, failed, settings, say)
    for label, worker in list(workers.items()):
      problem = worker.finish(done)
      if problem:
        failed(label, problem)
      else:
        worker.close()
  except BaseException:  # interrupted: no environment finished, so none stays half-written
    for label, worker in workers.items():
      worker.close()
      shutil.rmtree(out / label, ignore_errors=True)
    raise
  for label in workers:
    outcomes[label] = dataclasses.replace(outcomes[label], **_finished_facts(out / label))
  finished = list(workers)
  comparisons = _compare_with_first(out, finished, settings, done.design)
  described = repeats.describe(done, time.perf_counter() - started)
  outcome = MatrixOutcome(
      out, tuple(outcomes[s.label] for s in settings.specs), finished[0] if finished else None, comparisons, described
  )
  _write_matrix_file(outcome, settings)
  _write_matrix_page(outcome)
  return outcome


def _build_environments(
    settings: MatrixSettings, say: Callable[[str], None]
) -> tuple[list[BuiltEnv], dict[str, EnvOutcome]]:
  """Every environment built (or found cached); one that fails to build is an outcome, not an error."""
  outcomes: dict[str, EnvOutcome] = {}
  built: list[BuiltEnv] = []
  for spec in settings.specs:
    t0 = time.perf_counter()
    try:
      env = build_env(spec, settings.cache_dir)
    except EnvBuildError as e:
      say(f"ckptbench: {e}")
      outcomes[spec.label] = EnvOutcome(spec.label, spec.text, "build_failed", str(e))
      continue
    build_s = time.perf_counter() - t0
    say(f"environment {spec.label}: {'cached' if env.reused else f'built in {build_s:.1f} s'} ({env.path})")
    built.append(env)
    outcomes[spec.label] = EnvOutcome(spec.label, spec.text, "ok", cached=env.reused, build_s=build_s)
  return built, outcomes


def _rounds(repeats, workers: dict[str, _Worker], failed, settings: MatrixSettings, say):
  """The rounds, every environment once each in a fresh random order: until decided (auto), else a count."""
  from ckptbench.engine import RepeatsDone, RoundClock, round_order, rounds_until_decided  # noqa: PLC0415

  rng = random.Random()

  def run_round(r: int) -> bool:
    labels = list(workers)
    took = []
    for i in round_order(len(labels), rng):
      t0 = time.perf_counter()
      problem = workers[labels[i]].run_round()
      if problem:
        failed(labels[i], problem)
      else:
        took.append(f"{labels[i]} {time.perf_counter() - t0:.1f} s")
    say(f"round {r + 1}: " + ", ".join(took))
    return True

  def open_at(design: Design) -> list[tuple[str, int]]:
    labels = list(workers)
    verdicts = environment_verdicts(settings.output_dir, labels, design, settings.threshold, settings.metric)
    return [(f"{v.metric} ({v.benchmark}) in {label}", v.repeats_needed or 0)
            for label, vs in verdicts.items() for v in vs if not v.verdict.decided]  # fmt: skip

  if repeats.auto:
    return rounds_until_decided(repeats, RoundClock(repeats), run_round, open_at, say)
  for r in range(repeats.count):
    run_round(r)
  return RepeatsDone(False, repeats.count, "fixed", Design())


class _Worker:
  """One environment's long-lived `ckptbench run --driven_rounds` (engine/loop/_rounds.py's protocol)."""

  def __init__(self, env: BuiltEnv, settings: MatrixSettings):
    from ckptbench.engine import DRIVEN_READY, DRIVEN_ROUND_DONE  # noqa: PLC0415

    self._ready, self._round_done = DRIVEN_READY, DRIVEN_ROUND_DONE
    self.label = env.spec.label
    out = settings.output_dir / self.label
    command = [
        str(env.path / "bin" / "ckptbench"), "run", str(settings.suite_file), "-o", str(out), "--driven_rounds",
        "--no_progress", "--distributed", "off",
        "--no_views",  # the report is written once, with the comparison, after the last round
    ]  # fmt: skip
    if settings.devices:
      command += ["--devices", str(settings.devices)]
    for override in settings.overrides:
      command += ["--set", override]
    out.mkdir(parents=True, exist_ok=True)
    self._log_path = out / _RUN_LOG
    self._log: IO[str] = open(self._log_path, "a")
    self._log.write(f"$ {' '.join(command)}\n")
    self._log.flush()
    self._process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True,
        env=isolated_environ(),
    )  # fmt: skip

  def ready(self) -> str | None:
    """Waits for its warm-ups; why it failed, or None."""
    return self._until(self._ready)

  def run_round(self) -> str | None:
    """Runs one round of the suite; why it failed, or None."""
    try:
      self._process.stdin.write("round\n")
      self._process.stdin.flush()
    except OSError:
      pass  # it exited: _until says why
    return self._until(self._round_done)

  def finish(self, done) -> str | None:
    """Tells it the look the rounds stopped at (its own verdicts spend that), waits for it to write its
    summary and exit; why it failed, or None."""
    design = done.design
    try:
      self._process.stdin.write(f"stop {design.early_looks} {'last' if design.last else 'early'} {done.stopped}\n")
      self._process.stdin.close()
    except OSError:
      pass
    self._until(None)
    code = self._process.wait()
    if code in (EXIT_OK, EXIT_BENCHMARK_FAILED):  # a failed benchmark is a result
      return None
    return f"ckptbench run exited {code}: {last_lines(self._log_path.read_text())}"

  def close(self) -> None:
    """Ends the process if it still runs (interrupted, or failed) and closes its log."""
    if self._process.poll() is None:
      self._process.kill()
      self._process.wait()
    for stream in (self._process.stdin, self._process.stdout):
      try:
        stream.close()
      except OSError:
        pass
    self._log.close()

  def _until(self, reply: str | None) -> str | None:
    """Copies its output to the log until `reply` (None: until it ends); why it ended first, or None."""
    for line in self._process.stdout:
      if reply is not None and line.startswith(reply):
        return None
      self._log.write(line)
    self._log.flush()
    if reply is None:
      return None
    code = self._process.wait()
    return f"ckptbench run exited {code}: {last_lines(self._log_path.read_text())}"


def _finished_facts(out: pathlib.Path) -> dict[str, Any]:
  from ckptbench.analysis import read_run  # noqa: PLC0415

  records, manifest = read_run(out)
  return {"versions": manifest.get("versions"), "failed_runs": sum(1 for r in records if r.failed)}


def _compare_with_first(
    out: pathlib.Path, labels: list[str], settings: MatrixSettings, design: Design
) -> dict[str, Any]:
  """Compares each finished environment with the first: OUT/<label>/comparison.json (every metric side by
  side, the judged ones with the paired verdicts of the rounds), and each its report.html.

  TensorBoard files are not written (`ckptbench report OUT/<label>` writes them).
  """
  from ckptbench.analysis import build_baseline, compare_documents, read_run  # noqa: PLC0415
  from ckptbench.views import write_report  # noqa: PLC0415
  from ckptbench.results import write_json_atomic  # noqa: PLC0415

  comparisons = {}
  verdicts = environment_verdicts(out, labels, design, settings.threshold)
  if labels:
    reference = build_baseline(*read_run(out / labels[0]), label=labels[0])
  for label in labels[1:]:
    current = build_baseline(*read_run(out / label), label=label)
    comparison = compare_documents(reference, current, threshold=settings.threshold, design=design)
    comparison = judged_comparison(comparison, verdicts[label], design, settings.threshold)
    write_json_atomic(out / label / "comparison.json", comparison.to_json())
    comparisons[label] = comparison
  for label in labels:
    try:
      write_report(out / label)  # with the comparison section, where there is one
    except Exception as e:  # noqa: BLE001  (results and comparisons are already written)
      _log.warning("could not write the report of %s: %s", label, e)
  return comparisons


def _write_matrix_page(outcome: MatrixOutcome) -> None:
  """OUT/report.html: every environment against the first, on one page."""
  from ckptbench.results import read_outputs  # noqa: PLC0415
  from ckptbench.views import write_matrix_report  # noqa: PLC0415

  out = outcome.output_dir
  suite = read_outputs(out / outcome.reference).suite if outcome.reference else out.name
  try:
    write_matrix_report(out, suite, outcome.environments, outcome.reference, outcome.comparisons)
  except Exception as e:  # noqa: BLE001  (the results and comparisons are already written)
    _log.warning("could not write %s: %s", out / "report.html", e)


def _write_matrix_file(outcome: MatrixOutcome, settings: MatrixSettings) -> None:
  from ckptbench.results import write_json_atomic  # noqa: PLC0415

  document = {
      "schema_version": 1,
      "format": "ckptbench-matrix",
      "suite_file": str(settings.suite_file),
      "overrides": list(settings.overrides),
      "reference": outcome.reference,
      "threshold": settings.threshold,
      "repeats": outcome.repeats,
      "environments": [dataclasses.asdict(e) for e in outcome.environments],
      "comparisons": {label: c.to_json() for label, c in outcome.comparisons.items()},
  }
  write_json_atomic(settings.output_dir / MATRIX_FILE, json.loads(json.dumps(document, default=str)))
