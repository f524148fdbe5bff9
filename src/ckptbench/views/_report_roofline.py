"""The measured storage and memory limits the report draws beside the throughputs."""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from ckptbench.api import as_number
from ckptbench.results import RunOutputs

_GIB = float(1 << 30)
_RATE = re.compile(r"(/s|_per_s|_s|bps)$")


def roofline_limits(outputs: RunOutputs) -> dict[str, float]:
  """The measured storage and memory limits in GiB/s, by name; empty when unknown.

  Read from `manifest["roofline"]`: numbers, or `{"value": v, "unit": u}`
  entries, possibly nested. Entries in bytes/s or MiB/s are converted; entries
  whose unit is unknown are taken as GiB/s.
  """
  roofline = (outputs.manifest or {}).get("roofline")
  limits: dict[str, float] = {}

  def visit(name: str, value: Any) -> None:
    if isinstance(value, dict) and "value" in value:
      number = as_number(value["value"])
      if number is not None:
        scaled = _to_gib_per_s(number, str(value.get("unit") or name))
        if scaled is not None:
          limits[name] = scaled
    elif isinstance(value, dict):
      for key, sub in value.items():
        visit(f"{name}/{key}" if name else str(key), sub)
    else:
      number = as_number(value)
      scaled = None if number is None else _to_gib_per_s(number, name)
      if scaled is not None:
        limits[name] = scaled

  if isinstance(roofline, dict) and roofline:
    visit("", roofline)
  return limits


def _to_gib_per_s(value: float, unit_or_name: str) -> float | None:
  text = unit_or_name.lower()
  if not _RATE.search(text):
    return None  # not a rate (e.g. a probe size or a timestamp)
  if "mib" in text or "mb" in text:
    return value / 1024.0
  if "gib" in text or "gb" in text:
    return value
  if "byte" in text or text.endswith("b/s"):
    return value / _GIB
  return value


def limits_for(op: str, throughput_tags: Iterable[str], limits: Mapping[str, float]) -> dict[str, float]:
  """The limits that bound an operation: disk write for saves, reads (and memcpy) for loads."""
  text = (op + " " + " ".join(throughput_tags)).lower()
  wanted = []
  if any(w in text for w in ("save", "write")):
    wanted.append("write")
  if any(w in text for w in ("load", "restore", "read")):
    wanted.extend(("read", "memcpy", "memory"))
  return {name: value for name, value in limits.items() if any(w in name.lower() for w in wanted)}


def limit_notes(outputs: RunOutputs) -> dict[str, str]:
  """Per roofline limit, when it was probed and how steady the probe was (shown beside its line)."""
  probe = (outputs.manifest or {}).get("roofline")
  if not isinstance(probe, dict):
    return {}
  when = str(probe.get("measured_at") or "date unknown").replace("T", " ")[:16]
  spread = probe.get("spread") if isinstance(probe.get("spread"), dict) else {}
  repeats = probe.get("repeats")
  notes = {}
  for name in roofline_limits(outputs):
    base = name.removesuffix("_gbps")
    detail = f"spread {spread[base]:.0%} over {repeats} probes" if base in spread else "spread unknown"
    notes[name] = f"probed {when}, {detail}"
  return notes
