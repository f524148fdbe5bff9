"""`ckptbench bisect`: the first released version where a metric regressed.

The releases between good and bad come from the package index. Good and bad
are measured first (a matrix of the two); then each step runs a matrix of the
good release against the middle one, so every judgement is the same
statistical test (`compare_samples`: ratio, interval, Mann-Whitney p) against
the same reference, with repeats interleaved. A release whose environment does
not build is skipped, as `git bisect skip` does.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Callable

from packaging.version import Version

from ckptbench.envs._index import check_released, released_versions
from ckptbench.envs._matrix import MatrixSettings, run_matrix
from ckptbench.envs._spec import parse_with
from ckptbench.errors import CkptbenchError
from ckptbench.results import write_json_atomic
from ckptbench.stats import DEFAULT_THRESHOLD, Verdict

BISECT_FILE = "bisect.json"


@dataclasses.dataclass(frozen=True)
class BisectStep:
  """One measurement: `tested` against `good`, judged on one metric."""

  good: str
  tested: str
  verdict: str  # a Verdict value, or "skipped" when the environment did not build or run
  detail: str  # the row(s) of the metric: benchmark, ratio, interval, p
  output_dir: str

  @property
  def regressed(self) -> bool:
    return self.verdict == Verdict.REGRESSED.value


@dataclasses.dataclass(frozen=True)
class BisectOutcome:
  steps: tuple[BisectStep, ...]
  culprit: str | None
  last_good: str | None


def versions_between(package: str, good: str, bad: str) -> list[Version]:
  """Released versions from good to bad, both included (pre-releases only if good or bad is one).

  Raises:
    CkptbenchError: an unknown package or version, or bad not after good.
  """
  for version in (good, bad):
    check_released(parse_with(f"{package}=={version}").requirements[0])
  lo, hi = Version(good), Version(bad)
  if hi <= lo:
    raise CkptbenchError(f"--bad {bad} must be a later release than --good {good}")
  allow_pre = lo.is_prerelease or hi.is_prerelease
  return [v for v in released_versions(package) if lo <= v <= hi and (allow_pre or not v.is_prerelease)]


def _judge(comparison, metric: str, tested: str) -> tuple[str, str]:
  rows = [r for r in comparison.rows if r.metric == metric]
  if not rows:
    known = sorted({r.metric for r in comparison.rows})
    raise CkptbenchError(f"metric {metric!r} is not in the results of {tested}; metrics: {', '.join(known)}")
  verdict = Verdict.REGRESSED if any(r.verdict == Verdict.REGRESSED for r in rows) else rows[0].verdict
  return verdict.value, "; ".join(_row_text(r) for r in rows)


def _row_text(row) -> str:
  ratio = "-" if row.ratio is None else f"{row.ratio:.2f}x"
  interval = "-" if row.ci_low is None or row.ci_high is None else f"{row.ci_low:.2f}-{row.ci_high:.2f}"
  p = "-" if row.p_value is None else f"{row.p_value:.3f}"
  return f"{row.benchmark}: {ratio} (95% CI {interval}, p {p}, {row.verdict.value})"


def bisect_versions(
    suite_file: pathlib.Path,
    package: str,
    good: str,
    bad: str,
    metric: str,
    output_dir: pathlib.Path,
    num_repeats: int,
    threshold: float = DEFAULT_THRESHOLD,
    devices: int | None = None,
    say: Callable[[str], None] = print,
) -> BisectOutcome:
  """Binary search over the releases from `good` to `bad` for the first where `metric` regressed.

  Each step's matrix lands in OUT/step_<n>_<version>/; OUT/bisect.json holds the steps.

  Raises:
    CkptbenchError: bad input, or a metric the suite does not record.
  """
  candidates = versions_between(package, good, bad)
  versions = list(candidates)
  output_dir.mkdir(parents=True, exist_ok=True)
  steps: list[BisectStep] = []
  quiet = lambda line: None  # noqa: E731  (the step lines say what matters)

  def measure(tested: Version) -> BisectStep:
    say(f"step {len(steps)}: measuring {package} {tested} against {good} ...")
    specs = (parse_with(f"{package}=={good}"), parse_with(f"{package}=={tested}"))
    out = output_dir / f"step_{len(steps)}_{tested}"
    matrix = run_matrix(
        MatrixSettings(suite_file, specs, out, overwrite=True, threshold=threshold, devices=devices),
        num_repeats,
        say=quiet,
    )
    failed = [e for e in matrix.environments if e.status != "ok"]
    if failed:
      step = BisectStep(good, str(tested), "skipped", failed[0].error or failed[0].status, str(out))
    else:
      verdict, detail = _judge(matrix.comparisons[specs[1].label], metric, str(tested))
      step = BisectStep(good, str(tested), verdict, detail, str(out))
    steps.append(step)
    say(f"step {len(steps) - 1}: {package} {tested} against {good}: {step.verdict}: {step.detail}")
    return step

  outcome = BisectOutcome((), None, None)
  first = measure(versions[-1])
  if first.verdict == "skipped":
    raise CkptbenchError(f"{package} {bad} could not be measured: {first.detail}")
  if first.regressed:
    lo, hi = 0, len(versions) - 1  # versions[lo] is good, versions[hi] regressed
    while hi - lo > 1:
      mid = (lo + hi) // 2
      step = measure(versions[mid])
      if step.verdict == "skipped":
        del versions[mid]
        hi -= 1
      elif step.regressed:
        hi = mid
      else:
        lo = mid
    outcome = BisectOutcome((), str(versions[hi]), str(versions[lo]))
  outcome = dataclasses.replace(outcome, steps=tuple(steps))
  document = {
      "schema_version": 1,
      "package": package,
      "good": good,
      "bad": bad,
      "metric": metric,
      "candidates": [str(v) for v in candidates],
      "steps": [dataclasses.asdict(s) for s in steps],
      "culprit": outcome.culprit,
      "last_good": outcome.last_good,
  }
  write_json_atomic(output_dir / BISECT_FILE, document)
  return outcome
