"""Is a result unstable, and why? The console's warning, as pyperf gives one.

A variant's headline time is unstable when its repeats spread widely (the
standard deviation over 10% of the mean, pyperf's rule). The likely cause is
read from the noise every run recorded (`machine_9_other/`, engine/_noise.py):
other processes' CPU use, the load average, time stolen by a hypervisor, and
data still being written back when runs started.
"""

from __future__ import annotations

import statistics
from typing import Sequence

from ckptbench.api import RunRecord, Tag, is_judged, sampled_records

_SPREAD = 0.10  # std / mean above this is unstable (pyperf warns at the same)
_NOISE = "machine_9_other/"


def _mean(records: Sequence[RunRecord], name: str) -> float | None:
  values = [v for r in records if (v := r.value(_NOISE + name)) is not None]
  return statistics.fmean(values) if values else None


def likely_causes(records: Sequence[RunRecord]) -> list[str]:
  """What the recorded noise says about the machine during the runs (empty: it looked quiet)."""
  cpus = _mean(records, "cpus") or 1.0
  causes = []
  other, load = _mean(records, "other_cpu_share"), _mean(records, "load_1m")
  if other is not None and other >= 0.25 * cpus:
    causes.append(f"other processes kept {other:.1f} of {cpus:.0f} CPUs busy")
  if load is not None and load > cpus:
    causes.append(f"load average {load:.1f} on {cpus:.0f} CPUs")
  steal = _mean(records, "steal_share")
  if steal is not None and steal >= 0.05:
    causes.append(f"the hypervisor took {steal:.0%} of a CPU (steal)")
  pending = max(_mean(records, "writeback_mib") or 0.0, _mean(records, "dirty_mib") or 0.0)
  if pending >= 64:
    causes.append(f"{pending:.0f} MiB still dirty or under writeback when runs started")
  return causes


def stability_warnings(records: Sequence[RunRecord]) -> list[str]:
  """One line per unstable variant and time, then one naming the likely cause and the remedy."""
  measured = sampled_records(records)
  by_variant: dict[tuple[str, str], list[float]] = {}
  for record in measured:
    for tag in record.metrics:
      if tag.endswith("_0_basics/time_s") and is_judged(tag):  # the times a suite is judged on
        value = record.value(tag)
        if value is not None:
          by_variant.setdefault((record.benchmark, tag), []).append(value)
  unstable: dict[str, list[str]] = {}
  for (benchmark, tag), values in by_variant.items():
    if len(values) >= 3 and statistics.fmean(values) > 0:
      spread = statistics.stdev(values) / statistics.fmean(values)
      if spread > _SPREAD:
        unstable.setdefault(benchmark, []).append(f"{Tag.parse(tag).op} {spread:.0%}")
  lines = [f"{benchmark}: unstable (std dev / mean): {', '.join(ops)}" for benchmark, ops in unstable.items()]
  if lines:
    causes = likely_causes(measured)
    cause = "; ".join(causes) if causes else "nothing recorded stands out (short operations vary more)"
    lines.append(f"likely cause: {cause}. Remedy: stop other work on the machine (or pin with taskset),"
                 " and let num_repeats: auto pair more rounds (--time_budget).")  # fmt: skip
  return lines
