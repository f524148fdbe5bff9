"""A list of meshes where some entries cannot be built: those are skipped, not fatal.

Orbax's suites list meshes for many machine sizes, and some of their entries
name an axis in `ici_parallelism` or `dcn_parallelism` that `mesh_axes` lacks.
A single `mesh_config` with that mistake is an error; in `mesh_configs` such an
entry is dropped with its reason (shown by `plan` and recorded by `run`), as
long as one entry remains.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
  from ckptbench.config._models import MeshConfig


@dataclasses.dataclass(frozen=True)
class SkippedMesh:
  """An entry of `mesh_configs` that was left out, and why."""

  index: int
  description: str
  reason: str


def _undeclared_axes(entry: dict[str, Any]) -> list[tuple[str, str]]:
  axes = entry.get("mesh_axes")
  if not isinstance(axes, list) or not all(isinstance(a, str) for a in axes):
    return []  # malformed otherwise: the schema reports it
  return [
      (key, axis)
      for key in ("ici_parallelism", "dcn_parallelism")
      if isinstance(entry.get(key), dict)
      for axis in entry[key]
      if axis not in axes
  ]


def _describe(entry: dict[str, Any]) -> str:
  parts = [f"{k.split('_')[0]} {entry[k]}" for k in ("ici_parallelism", "dcn_parallelism") if entry.get(k)]
  return f"({', '.join(parts)})" if parts else "(no degrees)"


def without_undeclared_axes(data: dict[str, Any]) -> tuple[dict[str, Any], tuple[SkippedMesh, ...]]:
  """`data` whose `mesh_configs` entries name only declared axes, and the entries to skip.

  A skipped entry keeps its place in the list (with the undeclared axes taken
  out of its degrees) so that every other entry keeps its index, and with it
  the line numbers of its errors; the caller leaves it out by `index`. When
  every entry has the problem nothing is changed, so the schema reports the
  first one at its line.
  """
  entries = data.get("mesh_configs")
  if not isinstance(entries, list):
    return data, ()
  skipped, cleaned = [], []
  for i, entry in enumerate(entries):
    bad = _undeclared_axes(entry) if isinstance(entry, dict) else []
    if bad:
      named = ", ".join(f"{axis!r} (in {key})" for key, axis in bad)
      reason = f"names axes that mesh_axes {entry['mesh_axes']} lacks: {named}"
      skipped.append(SkippedMesh(i, f"mesh_configs[{i}] {_describe(entry)}", reason))
      entry = dict(entry)
      for key, axis in bad:
        entry[key] = {a: n for a, n in entry[key].items() if a != axis}
    cleaned.append(entry)
  if len(skipped) == len(entries):
    return data, ()
  return {**data, "mesh_configs": cleaned}, tuple(skipped)


def mesh_skip_reason(config: MeshConfig, device_count: int) -> str | None:
  """Why a mesh cannot run on `device_count` devices, or None when it can."""
  if config.num_devices != device_count:
    return (
        f"mesh {config.describe()} needs {config.num_devices} devices but"
        f" {device_count} are available"
    )
  return None
