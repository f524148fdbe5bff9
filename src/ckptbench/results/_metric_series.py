"""A benchmark x metric's samples as the tools outside ckptbench take them (pyperf,
github-action-benchmark): one record per series, from a run's OUT or a history's entry, and what
an export left out, with why."""

from __future__ import annotations

import collections
import dataclasses
import pathlib
from typing import Iterable, Sequence

from ckptbench.api import RunRecord, sampled_records, warmup_runs
from ckptbench.results._read import RunOutputs
from ckptbench.stats import Direction, metric_direction, per_repeat_across_hosts


@dataclasses.dataclass(frozen=True)
class MetricSeries:
  """One benchmark x metric of one run: a sample per repeat (across hosts the worst host's, as every
  statistic of ckptbench takes them), and the warm-ups' the same way."""

  benchmark: str  # unique in its run: the variant's name, with its key where two variants share a name
  tag: str
  unit: str
  values: tuple[float, ...]
  warmups: tuple[float, ...] = ()

  @property
  def name(self) -> str:
    """`<benchmark> <tag>`: the name the other tool shows and matches across files."""
    return f"{self.benchmark} {self.tag}"

  @property
  def direction(self) -> Direction:
    return metric_direction(self.tag, self.unit)


@dataclasses.dataclass(frozen=True)
class LeftOut:
  """A benchmark x metric an export could not hold, and why."""

  benchmark: str
  tag: str
  reason: str


@dataclasses.dataclass(frozen=True)
class BenchmarkExport:
  """What an export wrote: the file, the benchmark x metric names in it, those left out, and the
  benchmarks it read."""

  path: pathlib.Path
  written: tuple[str, ...]
  left_out: tuple[LeftOut, ...]
  benchmarks: tuple[str, ...]

  def lines(self, tool: str) -> list[str]:
    """What the command line prints: the file, then what was left out, a line per reason and the
    benchmarks it holds for."""
    lines = [f"{tool}: {self.path} ({len(self.written)} benchmark x metric)"]
    if not self.left_out:
      return lines
    lines.append(f"left out of {tool} ({len(self.left_out)} benchmark x metric):")
    benchmarks_of: dict[tuple[str, str], set[str]] = collections.defaultdict(set)
    for o in self.left_out:
      benchmarks_of[(o.reason, o.tag)].add(o.benchmark)
    tags_of: dict[tuple[str, frozenset[str]], list[str]] = collections.defaultdict(list)
    for (reason, tag), which in benchmarks_of.items():
      tags_of[(reason, frozenset(which))].append(tag)
    for (reason, which), tags in tags_of.items():
      where = "every benchmark" if which == set(self.benchmarks) else ", ".join(b for b in self.benchmarks if b in which)
      lines.append(f"  {reason} ({where}): {', '.join(tags)}")
    return lines


def unique_names(variants: Iterable[tuple[str, str]]) -> dict[str, str]:
  """`{key: name}` of `(key, name)` pairs, with ` [key]` added to a name that two keys share.

  Example:
    >>> unique_names([("k1", "A"), ("k2", "A"), ("k3", "B")])
    {'k1': 'A [k1]', 'k2': 'A [k2]', 'k3': 'B'}
  """
  names = dict(variants)
  shared = {n for n, count in collections.Counter(names.values()).items() if count > 1}
  return {key: f"{name} [{key}]" if name in shared else name for key, name in names.items()}


def _samples(records: Sequence[RunRecord], key: str, tag: str, direction: Direction) -> tuple[float, ...]:
  by_host: dict[int, dict[int, float]] = {}
  for r in records:
    value = r.value(tag) if r.key == key else None
    if value is not None:
      by_host.setdefault(r.host, {})[r.repeat] = value
  return tuple(per_repeat_across_hosts(by_host, direction)) if by_host else ()


def run_series(outputs: RunOutputs) -> list[MetricSeries]:
  """Every benchmark x metric of a run with a successful sample, in the order the run wrote them."""
  sampled = sampled_records(outputs.results)
  warmups = [r for r in warmup_runs(outputs.results) if not r.failed]
  names = unique_names((r.key, r.benchmark) for r in outputs.results)
  units: dict[tuple[str, str], str] = {}
  for r in sampled:
    for tag, entry in r.metrics.items():
      units.setdefault((r.key, tag), entry.unit)
  series = []
  for (key, tag), unit in units.items():
    direction = metric_direction(tag, unit)
    values = _samples(sampled, key, tag, direction)
    if values:
      series.append(MetricSeries(names[key], tag, unit, values, _samples(warmups, key, tag, direction)))
  return series
