"""A run's benchmark x metric series as a pyperf file, built with pyperf's own API, so that
`python -m pyperf stats`, `compare_to` and pyperformance read it.

pyperf holds values above 0 in seconds, bytes or integers, and reads every benchmark as smaller is
better (`compare_to` says "faster" and "slower"): times and sizes go in; the rest is left out, named.
"""

from __future__ import annotations

import pathlib
from typing import Any, Mapping, Sequence

from ckptbench.api import BYTES_PER_UNIT, SECONDS_PER_UNIT
from ckptbench.errors import CkptbenchError
from ckptbench.results._metric_series import BenchmarkExport, LeftOut, MetricSeries
from ckptbench.stats import Direction

INSTALL_HINT = "pip install 'ckptbench[export]'"


def _pyperf_unit(unit: str) -> tuple[str, float] | None:
  """pyperf's unit for `unit` and the factor that converts to it; None when pyperf has none."""
  key = unit.strip().lower()
  if key in SECONDS_PER_UNIT:
    return "second", SECONDS_PER_UNIT[key]
  if key in BYTES_PER_UNIT:
    return "byte", float(BYTES_PER_UNIT[key])
  return None


def _why_left_out(series: MetricSeries) -> str | None:
  if series.direction is Direction.HIGHER:
    return "bigger is better, and pyperf reads smaller as better"
  if min(series.values) <= 0 or (series.warmups and min(series.warmups) < 0):
    return "a value <= 0, which pyperf refuses"
  return None


def pyperf_metadata(*, suite: str, date: str | None, versions: Mapping[str, str | None], **more: Any) -> dict[str, Any]:
  """pyperf's metadata of a run: `date`, the Python version as pyperf names it (`python_version`),
  ckptbench's suite (`ckptbench_suite`), each library's version as `<library>_version`, and `more`
  (pyperf's own names where it has one: hostname, platform, cpu_count, cpu_model_name)."""
  libraries = {f"{library.replace('-', '_')}_version": v for library, v in versions.items() if library != "python"}
  return {"date": date, "python_version": versions.get("python"), "ckptbench_suite": suite, **more, **libraries}


def manifest_metadata(manifest: Mapping[str, Any] | None, suite: str) -> dict[str, Any]:
  """`pyperf_metadata` of a run from its manifest.json."""
  manifest = manifest or {}
  return pyperf_metadata(
      suite=suite,
      date=manifest.get("started_at"),
      versions=manifest.get("versions") or {},
      hostname=manifest.get("hostname"),
      platform=manifest.get("platform"),
      cpu_count=manifest.get("cpu_count"),
      cpu_model_name=(manifest.get("machine") or {}).get("cpu_model"),
      jax_backend=manifest.get("backend"),
      device_kind=manifest.get("device_kind"),
      device_count=manifest.get("device_count"),
  )


# A run measures every metric at once, so a duration per metric would count it once per metric in the
# file's total: 0, which pyperf shows as none (else it adds up the values, bytes too, as seconds).
_DURATION = {"duration": 0}


def _clean(metadata: Mapping[str, Any]) -> dict[str, Any]:
  """What pyperf accepts: strings (one line, not empty), integers and floats; the rest is dropped."""
  clean: dict[str, Any] = {}
  for name, value in metadata.items():
    if isinstance(value, str):
      value = " ".join(value.split())
    if (isinstance(value, (int, float)) and not isinstance(value, bool)) or (isinstance(value, str) and value):
      clean[name] = value
  return clean


def write_pyperf(series: Sequence[MetricSeries], metadata: Mapping[str, Any], path: pathlib.Path) -> BenchmarkExport:
  """Writes one pyperf benchmark per benchmark x metric that pyperf can hold: its repeats as the
  values of one run, its warm-ups as that run's warm-ups, `metadata` (`manifest_metadata`) with the
  benchmark's name and unit.

  Raises:
    CkptbenchError: when pyperf is not installed, or no series can be held.
  """
  try:
    import pyperf  # noqa: PLC0415  (an extra: only this export needs it)
  except ImportError:
    raise CkptbenchError(f"the pyperf export needs pyperf: {INSTALL_HINT}") from None
  common = _clean(metadata)
  benchmarks, left_out = [], []
  for s in series:
    converted = _pyperf_unit(s.unit)
    reason = f"unit {s.unit or '(none)'}: pyperf takes s, ms, us, ns and B to TiB" if converted is None else _why_left_out(s)
    if converted is None or reason is not None:
      left_out.append(LeftOut(s.benchmark, s.tag, reason))
      continue
    unit, factor = converted
    run = pyperf.Run([v * factor for v in s.values], warmups=[(1, w * factor) for w in s.warmups] or None,
                     metadata={**common, **_DURATION, "name": s.name, "unit": unit}, collect_metadata=False)  # fmt: skip
    benchmarks.append(pyperf.Benchmark([run]))
  if not benchmarks:
    raise CkptbenchError(f"{path} not written: none of the {len(series)} benchmark x metric is a time or size"
                         f" above 0, smaller-is-better (what pyperf holds)")  # fmt: skip
  try:
    path.parent.mkdir(parents=True, exist_ok=True)
    pyperf.BenchmarkSuite(benchmarks).dump(str(path), compact=False, replace=True)
  except OSError as e:
    raise CkptbenchError(f"cannot write {path}: {e.strerror or e}") from None
  return BenchmarkExport(path, tuple(b.get_name() for b in benchmarks), tuple(left_out),
                         tuple(dict.fromkeys(s.benchmark for s in series)))  # fmt: skip
