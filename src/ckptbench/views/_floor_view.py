"""Against the floor, as the console and the report show it: each variant's time, throughput and share of
the floor per timed operation, with the host memory it added, and where Orbax's own save time went.

Read from summary.json (`floor_shares`, computed once by analysis/_floor.py, and the benchmarks'
medians), never recomputed here.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from rich.console import Console
from rich.table import Table

from ckptbench.api import BenchmarkSummary, FloorShareRecord, SuiteSummary, Tag
from ckptbench._escape import html_text
from ckptbench.views import _plots
from ckptbench.views._report_html import FigureIds, table
from ckptbench.views._terminal import markup_text, print_sentences

# Orbax's save phases from its jax.monitoring events (docs/metrics.md), in the order a save runs them.
ORBAX_SAVE_PHASES: tuple[tuple[str, str], ...] = (
    ("serialization (blocking: device to host)", "save_2_save_breakdown/blocking_s"),
    ("TensorStore writes", "save_2_save_breakdown/worker_io_s"),
    ("metadata", "save_2_save_breakdown/metadata_write_s"),
    ("commit (OCDBT merge)", "save_2_save_breakdown/ocdbt_merge_s"),
)
REST = "the rest of the save"
WHOLE = "save (one block)"


@dataclasses.dataclass(frozen=True)
class OperationCell:
  """One variant's timed operation: its median time, the checkpoint's bytes over it, its share of the floor."""

  seconds: float | None
  gibps: float | None
  share: FloorShareRecord | None
  peak_mib: float | None


@dataclasses.dataclass(frozen=True)
class FloorRow:
  label: str
  is_floor: bool
  cells: Mapping[str, OperationCell]  # by operation
  save_phases: Mapping[str, float]  # Orbax's, where its events were recorded; else empty


@dataclasses.dataclass(frozen=True)
class FloorTable:
  floor: str  # the floor variant's label
  operations: tuple[str, ...]
  rows: tuple[FloorRow, ...]
  coverage: float  # the lowest coverage of the shares' intervals


def _label(varying: Mapping[str, Any] | None) -> str:
  return ", ".join(f"{k}={v}" for k, v in (varying or {}).items())


def _median(bench: BenchmarkSummary, tag: str) -> float | None:
  stats = bench.metrics.get(tag)
  return None if stats is None else stats.median


def save_phases(bench: BenchmarkSummary) -> dict[str, float]:
  """Orbax's save phases (median seconds) and the rest of the save's time; empty without Orbax's events."""
  phases = {name: _median(bench, tag) for name, tag in ORBAX_SAVE_PHASES}
  if all(v is None for v in phases.values()):
    return {}
  phases = {name: v or 0.0 for name, v in phases.items()}
  whole = _median(bench, "save_0_basics/time_s") or 0.0
  phases[REST] = max(0.0, whole - sum(phases.values()))
  return phases


def floor_table(summary: SuiteSummary | None) -> FloorTable | None:
  """The floor's table of a run; None without floor shares."""
  if summary is None or not summary.floor_shares:
    return None
  shares = {(s.benchmark, s.metric): s for s in summary.floor_shares}
  keys = {s.benchmark for s in summary.floor_shares}
  floor_label = _label(summary.floor_shares[0].floor)
  operations = tuple(dict.fromkeys(Tag.parse(s.metric).op for s in summary.floor_shares))
  rows = []
  for bench in summary.benchmarks:
    is_floor = _label(bench.varying) == floor_label
    if bench.key not in keys and not is_floor:
      continue
    cells = {}
    for op in operations:
      seconds = _median(bench, f"{op}_0_basics/time_s")
      gib = _median(bench, f"{op}_5_inventory/{op}_total_gb")
      cells[op] = OperationCell(
          seconds=seconds, gibps=gib / seconds if gib and seconds else None,
          share=shares.get((bench.key, f"{op}_0_basics/time_s")),
          peak_mib=_median(bench, f"{op}_7_memory/host_rss_peak_diff_mib"),
      )  # fmt: skip
    rows.append(FloorRow(_label(bench.varying) or bench.name, is_floor, cells, save_phases(bench)))
  rows.sort(key=lambda r: not r.is_floor)
  return FloorTable(floor_label, operations, tuple(rows), min(s.coverage for s in summary.floor_shares))


def _share_text(cell: OperationCell, is_floor: bool) -> str:
  if is_floor:
    return "floor"
  if cell.share is None:
    return "-"
  return f"{cell.share.share:.2f} [{cell.share.low:.2f}-{cell.share.high:.2f}]"


def _number(value: float | None, digits: int = 3) -> str:
  return "-" if value is None else f"{value:.{digits}g}"


def _header(ops: Sequence[str]) -> list[str]:
  return ["variant"] + [f"{op} {col}" for op in ops for col in ("s", "GiB/s", "share of floor")] + [
      f"{op} peak host MiB" for op in ops
  ]


def _cells(row: FloorRow, ops: Sequence[str]) -> list[str]:
  values = [row.label + (" (floor)" if row.is_floor else "")]
  for op in ops:
    cell = row.cells[op]
    values += [_number(cell.seconds), _number(cell.gibps), _share_text(cell, row.is_floor)]
  return values + [_number(row.cells[op].peak_mib) for op in ops]


def legend(floor: FloorTable) -> str:
  return (
      f"share of floor: the floor's time ({floor.floor}) over the variant's, per repeat (the same bytes: also the"
      f" variant's throughput over the floor's), median [its {floor.coverage:.0%} interval]: 1 is the floor, 0.5 twice"
      " its time, above 1 faster than the floor; GiB/s: the checkpoint's bytes over the median time; peak host MiB:"
      " the host memory the operation added (docs/verdicts.md, \"The floor\")"
  )


def _phase_line(row: FloorRow) -> str:
  parts = ", ".join(f"{name} {seconds:.3g} s" for name, seconds in row.save_phases.items())
  return f"{row.label} save, Orbax's phases (median): {parts}"


def print_floor(summary: SuiteSummary | None, console: Console) -> None:
  """The floor's table, its legend and Orbax's save phases; nothing without floor shares."""
  floor = floor_table(summary)
  if floor is None:
    return
  out = Table(title=f"against the floor: {markup_text(floor.floor)}", title_justify="left")
  for i, name in enumerate(_header(floor.operations)):
    out.add_column(name, justify="left" if i == 0 else "right")
  for row in floor.rows:
    out.add_row(*(markup_text(v) for v in _cells(row, floor.operations)))
  console.print(out)
  print_sentences(console, "", legend(floor))
  for row in floor.rows:
    if row.save_phases:
      print_sentences(console, "", _phase_line(row))


def floor_section(summary: SuiteSummary | None, figures: FigureIds) -> str:
  """The report's section: the table, and each variant's save time as a bar, Orbax's split into its phases."""
  floor = floor_table(summary)
  if floor is None:
    return ""
  parts = [
      f"<h2>against the floor: {html_text(floor.floor)}</h2>",
      table(_header(floor.operations), [_cells(r, floor.operations) for r in floor.rows]),
      f"<p class=note>{html_text(legend(floor))}</p>",
  ]
  if "save" in floor.operations and any(r.save_phases for r in floor.rows):
    labels = [r.label for r in floor.rows]
    names = [name for name, _ in ORBAX_SAVE_PHASES] + [REST]
    stages = {name: [r.save_phases.get(name, 0.0) for r in floor.rows] for name in names}
    stages[WHOLE] = [0.0 if r.save_phases else (r.cells["save"].seconds or 0.0) for r in floor.rows]
    figure = _plots.stacked_figure("save: where the time went", labels, stages, "s", figures.next(), "median")
    parts.append(
        f"<h3>save: Orbax's phases beside the floor and the other libraries</h3><div class=figure>{figure}</div>"
        "<p class=note>Orbax's phases are its own jax.monitoring timings (docs/metrics.md); the rest of its save is"
        " what they do not cover (its Python, directories, barriers). The other variants record no phases: one"
        " block each.</p>"
    )
  return "\n".join(parts)
