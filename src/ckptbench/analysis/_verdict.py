"""The answer to a sweep: its variants side by side on the metrics a suite is judged on.

For every variant (benchmark of the suite) and judged metric (the rule:
`ckptbench.api.JUDGED`): the median of the repeats with its distribution-free
interval, the ratio to a reference variant with its verdict in four words, read
from summary.json's `verdicts` (computed once by `_decisions.sweep_verdicts`,
never here), and the repeats that lie far from the others. A sweep's effects per factor are summary.json's `effects`
(analysis/_effects.py).

Built from results.jsonl records, so the console and the report (and a run
read back later) show the same table.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable, Mapping, Sequence

from ckptbench.api import JudgedMetric, RecordKind, RunRecord, Tag, Verdict, VerdictRecord, judged_metrics, sampled_records
from ckptbench.api import is_reference, variant_labels
from ckptbench.stats import DEFAULT_THRESHOLD, Direction, metric_direction, per_repeat_across_hosts
from ckptbench.stats import MedianInterval, median_interval
from ckptbench.stats import modified_z_scores, outlier_indices


@dataclasses.dataclass(frozen=True)
class Outlier:
  """A repeat whose value lies far from the variant's other repeats (see stats._outliers)."""

  repeat: int
  value: float
  z: float


@dataclasses.dataclass(frozen=True)
class Cell:
  """One variant on one metric.

  Attributes:
    samples: one value per repeat (the worst host's), ordered by repeat.
    repeats: the repeat index of each sample.
    interval: median and its interval over `samples`.
    verdict: against the reference variant (from summary.json); None for the
      reference itself, or for a run whose summary has no verdicts.
    outliers: repeats far from the others.
  """

  samples: tuple[float, ...]
  repeats: tuple[int, ...]
  interval: MedianInterval
  verdict: VerdictRecord | None
  outliers: tuple[Outlier, ...]


@dataclasses.dataclass(frozen=True)
class Variant:
  """A benchmark of the suite: its key, name, short label, swept option values and generator."""

  key: str
  name: str
  label: str
  varying: Mapping[str, Any]
  generator: str = ""


@dataclasses.dataclass(frozen=True)
class VerdictTable:
  """The variants of a sweep side by side (see the module docstring)."""

  variants: tuple[Variant, ...]
  references: Mapping[str, str]  # variant key -> the key of its reference (its generator's)
  metrics: tuple[JudgedMetric, ...]
  cells: Mapping[tuple[str, str], Cell]  # (metric tag, variant key) -> cell

  def cell(self, tag: str, key: str) -> Cell | None:
    return self.cells.get((tag, key))

  def is_reference(self, key: str) -> bool:
    return self.references.get(key) == key

  def reference_labels(self) -> list[str]:
    by_key = {v.key: v for v in self.variants}
    return [by_key[k].label for k in dict.fromkeys(self.references.values())]

  def outliers(self) -> list[tuple[Variant, JudgedMetric, Outlier]]:
    return [
        (v, m, o) for m in self.metrics for v in self.variants
        for o in (self.cell(m.tag, v.key).outliers if self.cell(m.tag, v.key) else ())
    ]  # fmt: skip


def variants_of(records: Sequence[RunRecord]) -> list[Variant]:
  """The benchmarks of `records`, in the order their first records ran (warm-ups, in plan order, first)."""
  first: dict[str, RunRecord] = {}
  for record in sorted(records, key=lambda r: (r.kind is not RecordKind.WARMUP, r.repeat)):
    first.setdefault(record.key, record)
  one_generator = len({r.generator for r in first.values()}) == 1
  # What sets each apart, as every table says it (api/_levels.py).
  described = variant_labels([(r.varying, r.mesh, r.checkpoint_config) for r in first.values()])
  variants = []
  for (key, record), text in zip(first.items(), described):
    name = record.benchmark or key
    # One generator: "use_ocdbt=True" says all; several: the name keeps the class.
    label = text if one_generator and text else name
    variants.append(Variant(key, name, label, dict(record.varying), record.generator))
  labels = [v.label for v in variants]
  if len(set(labels)) < len(labels):  # e.g. the same options on two meshes: the names tell them apart
    variants = [dataclasses.replace(v, label=v.name) for v in variants]
  return variants


def reference_variant(variants: Sequence[Variant], reference: Mapping[str, Any] | None) -> Variant:
  for variant in variants if reference else ():
    if is_reference(variant.varying, reference):
      return variant
  return variants[0]


def references_of(variants: Sequence[Variant], reference: Mapping[str, Any] | None) -> dict[str, Variant]:
  """Each variant's reference: the one of its own generator that `reference` picks (else its first).

  Variants of different generators measure different things (a raw store write
  and an Orbax save), so a ratio between them means nothing: every generator's
  variants are compared with a reference of their own.
  """
  groups: dict[str, list[Variant]] = {}
  for variant in variants:
    groups.setdefault(variant.generator, []).append(variant)
  refs = {}
  for group in groups.values():
    ref = reference_variant(group, reference)
    refs.update({v.key: ref for v in group})
  return refs


def _samples(records: Iterable[RunRecord], tag: str, direction: Direction) -> tuple[list[int], list[float]]:
  by_host: dict[int, dict[int, float]] = {}
  for record in records:
    value = record.value(tag)
    if value is not None and math.isfinite(value):
      by_host.setdefault(record.host, {})[record.repeat] = value
  repeats = sorted({r for values in by_host.values() for r in values})
  return repeats, per_repeat_across_hosts(by_host, direction)


def _outliers(metric: JudgedMetric, repeats: Sequence[int], samples: Sequence[float], median: float) -> tuple[Outlier, ...]:
  """Repeats whose time lies far from the others (see stats._outliers) and more than 10% off.

  Only times are flagged: a throughput is the same measurement seen upside
  down, and memory changes of a few MiB are below what RSS resolves. The 10%
  keeps three nearly equal repeats from making a fourth, 5% slower, an outlier.
  """
  if Tag.parse(metric.tag).namespace != "0_basics":
    return ()
  z_scores = modified_z_scores(samples)
  return tuple(
      Outlier(repeats[i], samples[i], z_scores[i]) for i in outlier_indices(samples)
      if abs(samples[i] - median) > DEFAULT_THRESHOLD * abs(median)
  )


def build_verdict(
    records: Sequence[RunRecord],
    reference: Mapping[str, Any] | None = None,
    verdicts: Sequence[VerdictRecord] = (),
) -> VerdictTable | None:
  """The verdict table of a run's records; None when no run succeeded.

  Args:
    records: results.jsonl records (`sampled_records` of them are read).
    reference: swept option values that pick the reference variant (the
      suite's `reference:`); default the first variant.
    verdicts: summary.json's verdicts, shown in the cells as they are.
  """
  measured = sampled_records(records)
  if not measured:
    return None
  variants = [v for v in variants_of(records) if any(r.key == v.key for r in measured)]
  refs = references_of(variants, reference)
  judged = {(v.metric, v.benchmark): v for v in verdicts}
  units: dict[str, str] = {}
  for record in measured:
    for tag, entry in record.metrics.items():
      units.setdefault(tag, entry.unit)
  metrics = judged_metrics(units)
  by_key: dict[str, list[RunRecord]] = {}
  for record in measured:
    by_key.setdefault(record.key, []).append(record)
  cells: dict[tuple[str, str], Cell] = {}
  for metric in metrics:
    for variant in variants:
      repeats, samples = _samples(by_key[variant.key], metric.tag, metric_direction(metric.tag, metric.unit))
      interval = median_interval(samples)
      if interval is None:
        continue
      outliers = _outliers(metric, repeats, samples, interval.median)
      cells[(metric.tag, variant.key)] = Cell(
          tuple(samples), tuple(repeats), interval, judged.get((metric.tag, variant.key)), outliers
      )
  references = {key: ref.key for key, ref in refs.items()}
  return VerdictTable(tuple(variants), references, tuple(metrics), cells)


def judgement(verdict: VerdictRecord | None) -> str:
  """The verdict's word ("" for the reference, which is compared with nothing)."""
  return "" if verdict is None else verdict.verdict.value


def number(value: float | None) -> str:
  if value is None or not math.isfinite(value):
    return "-"
  return f"{value:.3g}" if abs(value) < 1e5 else f"{value:.3e}"


def median_text(cell: Cell) -> str:
  """`1.05 [0.98, 1.1]`: the median and its interval (the median alone for one repeat)."""
  m = cell.interval
  text = number(m.median)
  if m.n > 1:
    text += f" [{number(m.low)}, {number(m.high)}]"
  return text + (" !" if cell.outliers else "")


def ratio_text(cell: Cell, is_reference: bool) -> str:
  """`0.52x [0.48-0.57] better` against the reference; `reference` for the reference itself."""
  if is_reference:
    return "reference"
  return "no verdict recorded" if cell.verdict is None else verdict_text(cell.verdict)


def verdict_text(verdict: VerdictRecord) -> str:
  """`1.21x [1.12-1.30] worse`, or `inconclusive (about 40 repeats would decide)`."""
  ratio = "-" if verdict.ratio is None else f"{verdict.ratio:.2f}x"
  bounds = (verdict.low, verdict.high)
  interval = "" if verdict.ratio is None else (
      f" [{number(bounds[0])}-{number(bounds[1])}]" if None not in bounds else " [no interval yet]")
  text = f"{ratio}{interval} {verdict.verdict.value}"
  if verdict.verdict == Verdict.INCONCLUSIVE and verdict.repeats_needed:
    text += f" (~{verdict.repeats_needed} repeats would decide)"
  return text
