"""`ckptbench bisect`: the first released version where a metric regressed.

The releases between good and bad come from the package index. Good and bad
are measured first (a matrix of the two); then each step runs a matrix of the
good release against the middle one, so every judgement is the same four-word
rule as `run`'s against the same reference, in interleaved rounds, repeated
until the metric is decided within the time budget (`num_repeats: auto`, as
`run` and `matrix` do) or a fixed count. A step that ends `inconclusive` is
measured again with twice the repeats (auto: twice the time budget); still
inconclusive, the bisection stops and says it
could not decide: it never names a culprit, or "no regression", from a step
that was not decided. A release whose environment does not build is skipped,
as `git bisect skip` does.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Callable

from packaging.version import Version

from ckptbench.envs._index import check_released, released_versions
from ckptbench.envs._matrix import MatrixSettings, run_matrix
from ckptbench.config import DEFAULT_TIME_BUDGET_S
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
  detail: str  # the row(s) of the metric: benchmark, ratio, interval, verdict
  output_dir: str
  repeats: int = 0  # the rounds the step ran

  @property
  def regressed(self) -> bool:
    return self.verdict == Verdict.WORSE.value

  @property
  def inconclusive(self) -> bool:
    return self.verdict == Verdict.INCONCLUSIVE.value


@dataclasses.dataclass(frozen=True)
class BisectOutcome:
  """The steps, and either a culprit, a decided "no regression" (both None), or `undecided`."""

  steps: tuple[BisectStep, ...]
  culprit: str | None
  last_good: str | None
  undecided: str | None = None  # the release no step could decide on, even with more repeats


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
  # Worse anywhere is worse; otherwise one undecided benchmark leaves the step undecided.
  order = (Verdict.WORSE, Verdict.INCONCLUSIVE, Verdict.BETTER, Verdict.EQUIVALENT, Verdict.NOT_JUDGED)
  verdict = min((r.verdict for r in rows), key=order.index)
  return verdict.value, "; ".join(_row_text(r) for r in rows)


def _row_text(row) -> str:
  ratio = "-" if row.ratio is None else f"{row.ratio:.2f}x"
  low, high = ("?" if v is None else f"{v:.2f}" for v in (row.low, row.high))
  return f"{row.name or row.benchmark}: {ratio} ({row.level or 0:.0%} interval {low}-{high}, {row.verdict.value})"


def bisect_versions(
    suite_file: pathlib.Path,
    package: str,
    good: str,
    bad: str,
    metric: str,
    output_dir: pathlib.Path,
    num_repeats: int | str,
    threshold: float = DEFAULT_THRESHOLD,
    devices: int | None = None,
    say: Callable[[str], None] = print,
    time_budget_s: float | None = None,
    overrides: tuple[str, ...] = (),
) -> BisectOutcome:
  """Binary search over the releases from `good` to `bad` for the first where `metric` regressed.

  Each step's matrix lands in OUT/step_<n>_<version>/; OUT/bisect.json holds the steps. `num_repeats` is
  the suite's ("auto": rounds until the metric is decided, within `time_budget_s` a step); `overrides`
  (`--set KEY=VALUE`) reach every step's runs.

  Raises:
    CkptbenchError: bad input, or a metric the suite does not record.
  """
  candidates = versions_between(package, good, bad)
  output_dir.mkdir(parents=True, exist_ok=True)
  bisection = _Bisection(
      suite_file, package, good, metric, output_dir, num_repeats, time_budget_s, threshold, devices, say, overrides
  )
  first = bisection.measure(candidates[-1])
  if first.verdict == "skipped":
    raise CkptbenchError(f"{package} {bad} could not be measured: {first.detail}")
  if first.inconclusive:
    culprit, last_good, undecided = None, None, str(candidates[-1])
  elif first.regressed:
    culprit, last_good, undecided = bisection.search(list(candidates))
  else:
    culprit, last_good, undecided = None, None, None
  outcome = BisectOutcome(tuple(bisection.steps), culprit, last_good, undecided)
  document = {
      "schema_version": 2,  # 2: four-word verdicts, `undecided`
      "package": package,
      "good": good,
      "bad": bad,
      "metric": metric,
      "candidates": [str(v) for v in candidates],
      "steps": [dataclasses.asdict(s) for s in outcome.steps],
      "culprit": outcome.culprit,
      "last_good": outcome.last_good,
      "undecided": outcome.undecided,
  }
  write_json_atomic(output_dir / BISECT_FILE, document)
  return outcome


@dataclasses.dataclass
class _Bisection:
  """What every step measures with, and the steps so far."""

  suite_file: pathlib.Path
  package: str
  good: str
  metric: str
  output_dir: pathlib.Path
  num_repeats: int | str
  time_budget_s: float | None
  threshold: float
  devices: int | None
  say: Callable[[str], None]
  overrides: tuple[str, ...]
  steps: list[BisectStep] = dataclasses.field(default_factory=list)

  def measure(self, tested: Version, again: bool = False) -> BisectStep:
    """One step: a matrix of `good` against `tested`, judged on the metric; an inconclusive one is
    measured again, once, with twice the repeats (auto: twice the time budget)."""
    package, good = self.package, self.good
    repeats, budget = self.num_repeats, self.time_budget_s
    if again and repeats == "auto":
      budget = 2 * (budget or DEFAULT_TIME_BUDGET_S)
    elif again:
      repeats = 2 * int(repeats)
    asked = f"auto repeats, {budget or DEFAULT_TIME_BUDGET_S:g} s" if repeats == "auto" else f"{repeats} repeats"
    self.say(f"step {len(self.steps)}: measuring {package} {tested} against {good} ({asked}) ...")
    specs = (parse_with(f"{package}=={good}"), parse_with(f"{package}=={tested}"))
    out = self.output_dir / f"step_{len(self.steps)}_{tested}"
    settings = MatrixSettings(
        self.suite_file, specs, out, overwrite=True, threshold=self.threshold, devices=self.devices,
        time_budget_s=budget, metric=self.metric, overrides=self.overrides,
    )  # fmt: skip
    matrix = run_matrix(settings, repeats, say=lambda line: None)  # the step lines say what matters
    rounds = matrix.repeats.get("rounds", 0)
    failed = [e for e in matrix.environments if e.status != "ok"]
    if failed:
      step = BisectStep(good, str(tested), "skipped", failed[0].error or failed[0].status, str(out), rounds)
    else:
      verdict, detail = _judge(matrix.comparisons[specs[1].label], self.metric, str(tested))
      step = BisectStep(good, str(tested), verdict, detail, str(out), rounds)
    self.steps.append(step)
    self.say(f"step {len(self.steps) - 1}: {package} {tested} against {good}: {step.verdict}: {step.detail}")
    if step.inconclusive and not again:
      return self.measure(tested, again=True)
    return step

  def search(self, versions: list[Version]) -> tuple[str | None, str | None, str | None]:
    """(first regressed, last good, None) among `versions`, whose first is good and last regressed;
    (None, None, the release) when a step stays inconclusive: no culprit from an undecided step."""
    lo, hi = 0, len(versions) - 1  # versions[lo] is good, versions[hi] regressed
    while hi - lo > 1:
      mid = (lo + hi) // 2
      step = self.measure(versions[mid])
      if step.verdict == "skipped":
        del versions[mid]
        hi -= 1
      elif step.inconclusive:
        return None, None, str(versions[mid])
      elif step.regressed:
        hi = mid
      else:
        lo = mid
    return str(versions[hi]), str(versions[lo]), None
