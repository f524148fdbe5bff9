"""`ckptbench matrix`: one suite in several environments, repeats interleaved, compared with the first.

Each environment runs the suite one repeat at a time (`ckptbench run --resume
--repeats_upto r`), round by round: A B A B ..., so drift of a shared machine
falls on every environment alike. Each round is a fresh process, so each round
repeats the suite's warm-ups before its measured repeat.

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
import shutil
import subprocess
import time
from typing import Any, Callable

from ckptbench.envs._build import BuiltEnv, EnvBuildError, build_env, isolated_environ, last_lines
from ckptbench.envs._index import check_released
from ckptbench.envs._spec import EnvSpec
from ckptbench.errors import EXIT_BENCHMARK_FAILED, EXIT_OK, EXIT_REGRESSION, CkptbenchError
from ckptbench.stats import DEFAULT_THRESHOLD

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

  def exit_code(self, fail_on_regression: bool) -> int:
    """1 when an environment or a benchmark failed; else 3 on a headline regression when asked."""
    if any(e.status != "ok" or e.failed_runs for e in self.environments):
      return EXIT_BENCHMARK_FAILED
    if fail_on_regression and any(c.headline_regressions for c in self.comparisons.values()):
      return EXIT_REGRESSION
    return EXIT_OK


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


def run_matrix(settings: MatrixSettings, num_repeats: int, say: Callable[[str], None] = print) -> MatrixOutcome:
  """Builds the environments, runs the suite in each round by round, compares with the first.

  Args:
    settings: the suite, the environments and where results go.
    num_repeats: the suite's `num_repeats` (one round each).
    say: where progress lines go.

  Raises:
    CkptbenchError: bad input (unknown package or version, OUT taken), before anything runs.
  """
  check_specs(settings.specs)
  _prepare(settings)
  out = settings.output_dir
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

  running = list(built)
  try:
    for round_index in range(1, num_repeats + 1):
      for env in list(running):
        problem = _run_round(env, settings, round_index, say=say)
        if problem:
          say(f"ckptbench: environment {env.spec.label} failed: {problem}")
          outcomes[env.spec.label] = dataclasses.replace(outcomes[env.spec.label], status="run_failed", error=problem)
          running.remove(env)
          shutil.rmtree(out / env.spec.label, ignore_errors=True)
  except BaseException:  # interrupted: no environment finished, so none stays half-written
    for env in running:
      shutil.rmtree(out / env.spec.label, ignore_errors=True)
    raise
  for env in running:
    outcomes[env.spec.label] = dataclasses.replace(outcomes[env.spec.label], **_finished_facts(out / env.spec.label))
  finished = [env.spec.label for env in running]
  comparisons = _compare_with_first(out, finished, settings.threshold)
  outcome = MatrixOutcome(
      out, tuple(outcomes[s.label] for s in settings.specs), finished[0] if finished else None, comparisons
  )
  _write_matrix_file(outcome, settings)
  _write_matrix_page(outcome)
  return outcome


def _run_round(env: BuiltEnv, settings: MatrixSettings, round_index: int, say) -> str | None:
  """Runs repeat `round_index - 1` of the suite in `env`; returns why it failed, or None."""
  out = settings.output_dir / env.spec.label
  command = [
      str(env.path / "bin" / "ckptbench"), "run", str(settings.suite_file), "-o", str(out),
      "--resume", "--repeats_upto", str(round_index), "--no-progress", "--distributed", "off",
      "--no-views",  # the report is written once, with the comparison, after the last round
  ]  # fmt: skip
  if settings.devices:
    command += ["--devices", str(settings.devices)]
  out.mkdir(parents=True, exist_ok=True)
  t0 = time.perf_counter()
  with open(out / _RUN_LOG, "a") as log:
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    done = subprocess.run(
        command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=isolated_environ()
    )
  say(f"round {round_index} {env.spec.label}: {time.perf_counter() - t0:.1f} s")
  if done.returncode in (EXIT_OK, EXIT_BENCHMARK_FAILED):  # a failed benchmark is a result
    return None
  return f"ckptbench run exited {done.returncode}: {last_lines((out / _RUN_LOG).read_text())}"


def _finished_facts(out: pathlib.Path) -> dict[str, Any]:
  from ckptbench.analysis import read_run  # noqa: PLC0415

  records, manifest = read_run(out)
  return {"versions": manifest.get("versions"), "failed_runs": sum(1 for r in records if r.failed)}


def _compare_with_first(out: pathlib.Path, labels: list[str], threshold: float) -> dict[str, Any]:
  """Compares each finished environment with the first: OUT/<label>/comparison.json, and each its report.html.

  TensorBoard files are not written (`ckptbench report OUT/<label>` writes them).
  """
  from ckptbench.analysis import build_baseline, compare_documents, read_run  # noqa: PLC0415
  from ckptbench.views import write_report  # noqa: PLC0415
  from ckptbench.results import write_json_atomic  # noqa: PLC0415

  comparisons = {}
  if labels:
    reference = build_baseline(*read_run(out / labels[0]), label=labels[0])
  for label in labels[1:]:
    current = build_baseline(*read_run(out / label), label=label)
    comparison = compare_documents(reference, current, threshold=threshold)
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
      "reference": outcome.reference,
      "threshold": settings.threshold,
      "environments": [dataclasses.asdict(e) for e in outcome.environments],
      "comparisons": {label: c.to_json() for label, c in outcome.comparisons.items()},
  }
  write_json_atomic(settings.output_dir / MATRIX_FILE, json.loads(json.dumps(document, default=str)))
