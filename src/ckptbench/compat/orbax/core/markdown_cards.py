"""Orbax's `core.markdown_cards`: the text cards `metrics_manager` writes to TensorBoard, from pure functions.

The headline rows read the tags ckptbench's collectors record (docs/metrics.md),
the first present of each row's candidates. Names, keys and values are the
user's: they go through ckptbench's Markdown escaper (`markdown_text`, or
`markdown_code` in a code span).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
from typing import Any, Mapping, Sequence

from ckptbench import markdown_code, markdown_text

_GIB = 1024**3

_TOTAL_TIME_KEYS = ("3_load_breakdown/total_s", "2_save_breakdown/total_async_s", "2_save_breakdown/total_s", "0_basics/time_s")
_THROUGHPUT_KEYS = ("4_throughput/load_total_gbps", "4_throughput/save_total_gbps", "4_throughput/load_per_host_gbps",
                    "4_throughput/save_blocking_gbps")  # fmt: skip
_BYTES_KEYS = ("6_io/file_bytes_read_per_host", "6_tensorstore/tensorstore_kvstore_file_bytes_read_value_diff",
               "6_tensorstore/tensorstore_kvstore_gcs_bytes_read_value_diff",
               "6_tensorstore/tensorstore_kvstore_file_bytes_written_value_diff",
               "6_tensorstore/tensorstore_kvstore_gcs_bytes_written_value_diff")  # fmt: skip
_COUNT_KEYS = ("6_io/file_reads_per_host_count", "6_tensorstore/tensorstore_kvstore_file_read_value_diff",
               "6_tensorstore/tensorstore_kvstore_gcs_read_value_diff", "6_tensorstore/tensorstore_kvstore_file_write_value_diff",
               "6_tensorstore/tensorstore_kvstore_gcs_write_value_diff")  # fmt: skip
_BLOCKING_KEYS = ("3_load_breakdown/blocking_s", "2_save_breakdown/blocking_s")
# (column, candidate tags, how a cell is written) of the per-host table.
_PER_HOST_COLUMNS = (("bytes", _BYTES_KEYS, "bytes"), ("reads/writes", _COUNT_KEYS, "count"),
                     ("blocking s", _BLOCKING_KEYS, "number"), ("total s", _TOTAL_TIME_KEYS, "number"))  # fmt: skip


def _table(title: str, rows: Sequence[tuple[str, Any]]) -> list[str]:
  return [f"### {title}", "", "| field | value |", "|---|---|", *(f"| {markdown_code(k)} | {markdown_code(v)} |" for k, v in rows), ""]


def render_configuration(
    benchmark_name: str, benchmark_options: Mapping[str, Any] | None, checkpoint_config: Mapping[str, Any] | None
) -> str:
  """The options and the checkpoint config (its nested blocks as JSON) under the benchmark's name."""
  lines = [f"## {markdown_text(benchmark_name)}", ""]
  if benchmark_options:
    lines += _table("Benchmark options", sorted(benchmark_options.items()))
  if checkpoint_config:
    items = sorted(checkpoint_config.items())
    scalars = [(k, v) for k, v in items if not isinstance(v, dict)]
    if scalars:
      lines += _table("Checkpoint config", scalars)
    for key, block in ((k, v) for k, v in items if isinstance(v, dict)):
      block_json = json.dumps(block, indent=2, sort_keys=True).replace("`", "\\u0060")  # no fence ends early
      lines += [f"### Checkpoint config — {markdown_code(key)}", "", "```json", block_json, "```", ""]
  return "\n".join(lines)


def render_aggregated_metrics(benchmark_name: str, aggregated_stats_dict: Mapping[str, Any], metric_units: Mapping[str, str],
                              host_label: str | None = None) -> str:  # fmt: skip
  """A table per tag namespace of each metric's mean, std, min, max, count (`aggregated_stats_dict`: tag
  -> `metrics_manager.AggregatedStats`) and unit."""
  if not aggregated_stats_dict:
    return "_No successful runs to aggregate._"
  sections: dict[str, list[str]] = collections.defaultdict(list)
  for key in sorted(aggregated_stats_dict):
    sections[key.partition("/")[0] if "/" in key else "_other_"].append(key)
  suffix = f" — {markdown_text(host_label)}" if host_label else ""
  lines = [f"## {markdown_text(benchmark_name)} — aggregated metrics{suffix}", ""]
  for section in sorted(sections):
    lines += [f"### {markdown_text(section)}", "", "| metric | mean | ± std | min | max | n | unit |",
              "|---|---:|---:|---:|---:|---:|---|"]
    for key in sections[section]:
      s = aggregated_stats_dict[key]
      leaf = key.split("/", 1)[-1]
      lines.append(
          f"| {markdown_code(leaf)} | {s.mean:.4f} | {s.std:.4f} | {s.min:.4f} | {s.max:.4f} | {s.count} |"
          f" {markdown_text(metric_units.get(key, ''))} |"
      )
    lines.append("")
  return "\n".join(lines)


def _size(num_bytes: float | None) -> str:
  """Bytes in the largest binary unit under 1024 of it, two decimals ("—" when unknown)."""
  if num_bytes is None:
    return "—"
  if abs(num_bytes) < 1024:
    return f"{num_bytes:.0f} B"
  for unit in ("KiB", "MiB", "GiB", "TiB"):
    num_bytes /= 1024
    if abs(num_bytes) < 1024:
      return f"{num_bytes:.2f} {unit}"
  return f"{num_bytes / 1024:.2f} PiB"


def _number(value: float | None, spec: str = ".2f") -> str:
  return "—" if value is None else format(value, spec)


def _in_gib(key: str, value: float) -> float:
  """Byte counters (not already in GB) in GiB: the cards' unit for sizes."""
  return value / _GIB if "bytes" in key and "gb" not in key else value


def _first(values: Mapping[str, Any], keys: Sequence[str], stat: str | None = None) -> float | None:
  """The first candidate tag with a value (a `stat` of it when given), sizes in GiB."""
  for key in keys:
    value = values.get(key)
    if value is not None and stat is not None:
      value = value.get(stat)
    if value is not None and not math.isnan(value):
      return _in_gib(key, value)
  return None


def _per_host_table(per_host_values: Sequence[tuple[int, Mapping[str, float]]], on_disk_gib: float | None) -> list[str]:
  columns = [c for c in _PER_HOST_COLUMNS if any(_first(v, c[1]) is not None for _, v in per_host_values)]
  if not per_host_values or not columns:
    return []
  with_share = bool(on_disk_gib) and any(_first(v, _BYTES_KEYS) is not None for _, v in per_host_values)
  header = "| host |" + "".join(f" {label} |" for label, _, _ in columns) + (" % of total |" if with_share else "")
  rule = "|---|" + "---:|" * (len(columns) + with_share)
  lines = ["#### Per-host", "", header, rule]
  cell = {
      "bytes": lambda v: _size(None if v is None else v * _GIB), "count": lambda v: _number(v, ".0f"), "number": _number,
  }  # fmt: skip
  for host, values in per_host_values:
    row = f"| {host} |" + "".join(f" {cell[kind](_first(values, keys))} |" for _, keys, kind in columns)
    if with_share:
      part = _first(values, _BYTES_KEYS)
      row += " — |" if part is None else f" {part / on_disk_gib * 100:.1f}% |"
    lines.append(row)
  return lines + [""]


def _inventory_lines(inventory: Any) -> list[str]:
  small_pct = inventory.small_file_pct * 100
  canary = "✓" if small_pct < 10 else "⚠ chunk_byte_size too small?"  # many small files: chunks too small
  lines = ["### Inventory", "", "| field | value |", "|---|---:|",
           f"| total bytes | {_size(inventory.total_bytes)} |", f"| file count | {inventory.file_count:,} |",
           f"| small files <1 MiB | {small_pct:.1f}% {canary} |"]  # fmt: skip
  if inventory.largest_file_bytes > 0:
    lines.append(f"| largest file | {_size(inventory.largest_file_bytes)} |")
  if inventory.format:
    lines.append(f"| format breakdown | {markdown_text(', '.join(f'{k}={v}' for k, v in sorted(inventory.format.items())))} |")
  return lines + [""]


def render_glance_card(benchmark_name: str, aggregates: Mapping[str, Mapping[str, float]],
                       per_host_values: Sequence[tuple[int, Mapping[str, float]]], inventory: Any | None,
                       manifest: Any | None) -> str:  # fmt: skip
  """The headline card of one operation: a few rows from `aggregates` (per tag without `<op>::`, its
  `{stat: value}` across hosts), the per-host table (host, tag -> that host's mean), the inventory and
  the run manifest (either None to leave it out)."""
  on_disk_gib = inventory.total_bytes / _GIB if inventory is not None and getattr(inventory, "total_bytes", 0) else None
  lines = [f"## {markdown_text(benchmark_name)} — at a glance", "", "| metric | value |", "|---|---:|"]
  lines.append(f"| Total time | {_number(_first(aggregates, _TOTAL_TIME_KEYS, 'max'))} s |")
  optional_rows = (
      ("Throughput", _first(aggregates, _THROUGHPUT_KEYS, "max"), lambda v: f"{v:.2f} GiB/s"),
      ("Bytes / host (mean)", _first(aggregates, _BYTES_KEYS, "mean"), lambda v: _size(v * _GIB)),
      ("Checkpoint size (on-disk)", on_disk_gib, lambda v: _size(v * _GIB)),
      ("HBM peak / host (max)", _first(aggregates, ["7_memory/device_hbm_peak_diff_gb"], "max"), lambda v: _size(v * _GIB)),
  )
  lines += [f"| {label} | {show(value)} |" for label, value, show in optional_rows if value is not None]
  lines.append("")
  lines += _per_host_table(per_host_values, on_disk_gib)
  if inventory is not None:
    lines += _inventory_lines(inventory)
  if manifest is not None:
    lines.append(manifest.as_markdown())
  return "\n".join(lines).rstrip() + "\n"


def options_to_hparams(options: Any) -> dict[str, bool | int | float | str]:
  """An options dataclass or dict as HParams: bools, numbers and text kept, anything else as its str()."""
  if dataclasses.is_dataclass(options) and not isinstance(options, type):
    raw = dataclasses.asdict(options)
  elif isinstance(options, dict):
    raw = dict(options)
  else:
    return {}
  return {k: v if isinstance(v, (bool, int, float, str)) else str(v) for k, v in raw.items()}
