"""Why a benchmark of a run found no partner in the baseline (and the reverse).

A benchmark's key hashes its generator, options, mesh and checkpoint config,
so changing any of them (a new option default, a renamed option, another
mesh) gives a new key and the comparison has nothing to compare. Here the
unmatched benchmarks are paired by name (else by generator) and the fields
that differ are named, so the user sees "options.use_zarr3: True -> False"
instead of an empty table.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ckptbench.api import BenchmarkSummary

_IDENTITY = ("generator", "options", "mesh", "checkpoint_config")


def _text(value: Any) -> str:
  return json.dumps(value, sort_keys=True, default=str)


def _differences(base: BenchmarkSummary, cur: BenchmarkSummary) -> list[str]:
  out = []
  for field in _IDENTITY:
    a, b = getattr(base, field), getattr(cur, field)
    if _text(a) == _text(b):
      continue
    if isinstance(a, dict) and isinstance(b, dict):
      for name in sorted(set(a) | set(b)):
        if _text(a.get(name, "<absent>")) != _text(b.get(name, "<absent>")):
          out.append(f"{field}.{name}: {_text(a.get(name, '<absent>'))} -> {_text(b.get(name, '<absent>'))}")
    else:
      out.append(f"{field}: {_text(a)} -> {_text(b)}")
  return out


def unmatched_reasons(
    baseline: Mapping[str, BenchmarkSummary], current: Mapping[str, BenchmarkSummary]
) -> list[str]:
  """One line per unmatched run benchmark: its key and what differs from its likeliest partner.

  Args:
    baseline: the baseline document's `benchmarks` (key -> entry).
    current: the same for the run.

  Example:
    >>> a1 = BenchmarkSummary("B", "a1", "m.G", {"x": 1}, {}, None, None, 1, 0, [], {})
    >>> b2 = BenchmarkSummary("B", "b2", "m.G", {"x": 2}, {}, None, None, 1, 0, [], {})
    >>> unmatched_reasons({"a1": a1}, {"b2": b2})
    ['B [b2]: no baseline benchmark has this key; baseline B [a1] differs in options.x: 1 -> 2']
  """
  base_only = {k: v for k, v in baseline.items() if k not in current}
  lines = []
  for key, entry in current.items():
    if key in baseline:
      continue
    name = entry.name
    partner = next(((k, b) for k, b in base_only.items() if b.name == name), None) or next(
        ((k, b) for k, b in base_only.items() if b.generator == entry.generator), None
    )
    if partner is None:
      lines.append(f"{name} [{key}]: no baseline benchmark has this key, name or generator")
      continue
    diffs = _differences(partner[1], entry) or ["nothing recorded (the key was computed differently)"]
    lines.append(
        f"{name} [{key}]: no baseline benchmark has this key; baseline {partner[1].name}"
        f" [{partner[0]}] differs in {'; '.join(diffs)}"
    )
  return lines
