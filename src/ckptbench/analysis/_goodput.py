"""The checkpoint interval that maximises goodput, from a finished run or a baseline file.

Each benchmark that measured a save gives a `CheckpointCost` (see
`ckptbench.stats._goodput`): its per-save blocking time, the lag until the save
is durable, and the recovery time measured by a `preemption_recovery` run in
the same results (or given by the user). Where an input is missing, the plan
names it instead of assuming a value.
"""

from __future__ import annotations

import dataclasses
import pathlib
import statistics
from typing import Mapping

from ckptbench.errors import CkptbenchError
from ckptbench.analysis._baseline import build_baseline, load_baseline, read_run
from ckptbench.analysis._baseline_document import Baseline, MetricSamples
from ckptbench.stats import CheckpointCost, expected_goodput, optimal_interval, young_interval

# Per-save blocking time, first found wins: (tag, what it is).
_BLOCKING = (
    ("save_steady_blocking_0_basics/time_s_mean", "steady-state async save call (training_interference)"),
    ("save_blocking_0_basics/time_s_mean", "async save call, mean per save"),
    ("save_blocking_0_basics/time_s", "async save call"),
    ("save_0_basics/time_s", "synchronous save"),
)
_STEP_SLOWDOWN = "interference_9_other/extra_s_per_save"
_RECOVERY = "recover_0_basics/time_s"


@dataclasses.dataclass(frozen=True)
class GoodputPlan:
  """The goodput figures of one benchmark.

  Attributes:
    benchmark: its readable name.
    key: its key in the results.
    cost: the measured cost (recovery_s None when not measured nor given).
    sources: where each input came from, e.g. {"blocking_s": "save_blocking_0_basics/time_s"}.
    mtbf_s: mean time between failures of the whole job.
    best_interval_s: work between saves maximising goodput.
    young_interval_s: Young's first-order estimate, sqrt(2 * blocking * MTBF).
    best_goodput: expected goodput at the best interval (None without recovery).
    current_interval_s: the user's interval, if given.
    current_goodput: expected goodput at it (None without it or without recovery).
    missing: the inputs that were neither measured nor given, with how to get them.
  """

  benchmark: str
  key: str
  cost: CheckpointCost
  sources: Mapping[str, str]
  mtbf_s: float
  best_interval_s: float
  young_interval_s: float
  best_goodput: float | None
  current_interval_s: float | None
  current_goodput: float | None
  missing: tuple[str, ...]


def _median(samples: MetricSamples | None) -> float | None:
  values = samples.across_hosts.values if samples else []
  return statistics.median(values) if values else None


def _document(source: str | pathlib.Path) -> Baseline:
  path = pathlib.Path(source)
  if path.is_file():
    return load_baseline(path)
  records, manifest = read_run(path)
  return build_baseline(records, manifest, "goodput")


def _cost(metrics: Mapping[str, MetricSamples], recovery: tuple[float, str] | None):
  sources: dict[str, str] = {}
  blocking = None
  for tag, what in _BLOCKING:
    blocking = _median(metrics.get(tag))
    if blocking is not None:
      sources["blocking_s"] = f"{tag} ({what})"
      break
  if blocking is None:
    return None
  slowdown = _median(metrics.get(_STEP_SLOWDOWN))
  if slowdown is not None and slowdown > 0:
    blocking += slowdown
    sources["blocking_s"] += f" + {_STEP_SLOWDOWN} (step slowdown during the background write)"
  lag = None
  if tag == "save_0_basics/time_s":
    lag, sources["lag_s"] = 0.0, "0 (a synchronous save is durable when it returns)"
  elif tag.startswith("save_steady_"):
    lag = _median(metrics.get("save_steady_background_0_basics/time_s_mean"))
    sources["lag_s"] = "save_steady_background_0_basics/time_s_mean"
  else:
    blocking_only = _median(metrics.get(tag))
    durable = _median(metrics.get("save_durable_0_basics/time_s_mean")) or _median(
        metrics.get("save_durable_0_basics/time_s"))
    background = _median(metrics.get("save_background_0_basics/time_s"))
    whole = _median(metrics.get("save_0_basics/time_s"))
    if durable is not None:
      lag, sources["lag_s"] = max(durable - blocking_only, 0.0), "save_durable minus save_blocking"
    elif background is not None:
      lag, sources["lag_s"] = background, "save_background_0_basics/time_s"
    elif whole is not None:
      lag, sources["lag_s"] = max(whole - blocking_only, 0.0), "save_0_basics/time_s minus save_blocking"
  cost = CheckpointCost(blocking_s=blocking, lag_s=lag, recovery_s=recovery[0] if recovery else None)
  if recovery:
    sources["recovery_s"] = recovery[1]
  missing = []
  if lag is None:
    missing.append("lag_s: time from the save call's return until the save is durable (no"
                   " save_durable, save_background or save metric); the best interval assumes"
                   " it is shorter than the interval")
  return cost, sources, missing


def plan_goodput(
    source: str | pathlib.Path,
    mtbf_s: float,
    *,
    interval_s: float | None = None,
    recovery_s: float | None = None,
) -> list[GoodputPlan]:
  """Goodput plans for every benchmark of a run directory or baseline file that measured a save.

  Args:
    source: an output directory of `ckptbench run`, or a baseline file.
    mtbf_s: mean time between failures of the whole job, seconds.
    interval_s: the interval in use now, to compare with the best one.
    recovery_s: restart-and-restore time; overrides a measured one.

  Raises:
    CkptbenchError: when nothing in the source measured a save, or for a
      non-positive MTBF or interval.
  """
  if not mtbf_s > 0 or (interval_s is not None and not interval_s > 0):
    raise CkptbenchError("--mtbf and --interval must be positive durations such as 6h or 30m")
  benchmarks = _document(source).benchmarks
  recovery: tuple[float, str] | None = None
  if recovery_s is not None:
    recovery = (recovery_s, "given (--recovery)")
  else:
    for entry in benchmarks.values():
      measured = _median(entry.samples.get(_RECOVERY))
      if measured is not None:
        recovery = (measured, f"{_RECOVERY} of {entry.name}")
        break
  plans = []
  for key, entry in benchmarks.items():
    found = _cost(entry.samples, recovery)
    if found is None:
      continue
    cost, sources, missing = found
    if cost.blocking_s <= 0:
      continue
    if recovery is None:
      missing.append("recovery_s: restart and restore after a failure (run preemption_recovery"
                     " in the same suite, or pass --recovery)")
    best = optimal_interval(cost, mtbf_s)
    known = cost.recovery_s is not None and cost.lag_s is not None
    plans.append(GoodputPlan(
        benchmark=entry.name, key=key, cost=cost, sources=sources, mtbf_s=mtbf_s,
        best_interval_s=best, young_interval_s=young_interval(cost.blocking_s, mtbf_s),
        best_goodput=expected_goodput(best, cost, mtbf_s) if known else None,
        current_interval_s=interval_s,
        current_goodput=expected_goodput(interval_s, cost, mtbf_s) if known and interval_s else None,
        missing=tuple(missing),
    ))  # fmt: skip
  if not plans:
    raise CkptbenchError(
        f"{source}: no benchmark measured a save (save_blocking, save_steady_blocking or save"
        " time); run training_interference, checkpoint_manager or save_restore first"
    )
  return plans
