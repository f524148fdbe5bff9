"""Expanding a suite into benchmarks: options product x meshes x checkpoints."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from typing import Any

from ckptbench.config import CheckpointSource, GeneratorEntry, MeshConfig, OptionPoint, Suite, mesh_skip_reason
from ckptbench.api import safe_path_component
from ckptbench.api import BenchmarkOptions, options_to_dict
from ckptbench.api import level_labels, orbax_capabilities, value_text
from ckptbench.errors import ConfigError


@dataclasses.dataclass(frozen=True)
class PlannedBenchmark:
  """One benchmark of the expanded suite (run `num_repeats` times)."""

  name: str
  key: str
  generator_path: str
  entry: GeneratorEntry
  options: BenchmarkOptions
  varying: dict[str, Any]
  mesh: MeshConfig | None
  mesh_index: int
  checkpoint: CheckpointSource
  checkpoint_index: int
  dir_name: str

  def describe(self) -> dict[str, Any]:
    """The JSON-friendly identity of this benchmark, as stored in every record."""
    return {
        "benchmark": self.name,
        "key": self.key,
        "generator": self.generator_path,
        "options": _jsonable(options_to_dict(self.options)),
        "varying": _jsonable(self.varying),
        "mesh": None if self.mesh is None else self.mesh.identity(),
        "checkpoint_config": self.checkpoint.config.model_dump(mode="json", exclude_none=True),
    }


@dataclasses.dataclass(frozen=True)
class Plan:
  benchmarks: tuple[PlannedBenchmark, ...]
  skipped_meshes: tuple[tuple[MeshConfig, str], ...]  # meshes that do not fit the devices
  invalid: tuple[tuple[str, dict[str, Any], str], ...]  # (generator, options, reason)
  unusable_meshes: tuple[tuple[str, str], ...] = ()  # (description, reason), found by the loader

  def all_skipped_meshes(self) -> list[tuple[str, str]]:
    """(description, reason) of every mesh left out: unusable ones, then those that do not fit."""
    return list(self.unusable_meshes) + [(m.describe(), r) for m, r in self.skipped_meshes]
  # Combinations the installed libraries cannot run (generator, options, reason), e.g. an
  # option an older Orbax lacks: recorded, not run, not a failure.
  unsupported: tuple[tuple[str, dict[str, Any], str], ...] = ()


def _jsonable(value: Any) -> Any:
  return json.loads(json.dumps(value, default=str))


def stable_key(*parts: Any) -> str:
  """A short hash of the JSON of `parts`: the same inputs give the same key on any machine."""
  blob = json.dumps(_jsonable(parts), sort_keys=True, separators=(",", ":"))
  return hashlib.sha256(blob.encode()).hexdigest()[:10]


def _label(name: str, value: Any, swept: list[Any]) -> str:
  """`name=value` for a benchmark's name; a mapping or list is named by its place in the sweep.

  (Orbax's checkpoint_policy sweeps whole policy mappings: their text would be
  the name; the record keeps the full options.)
  """
  if isinstance(value, (dict, list)):
    return f"{name}[{swept.index(value)}]"
  return f"{name}={value_text(value)}"


def expand(suite: Suite, device_count: int | None) -> Plan:
  """The benchmarks to run; meshes that do not fit `device_count` are skipped.

  `ckptbench plan` and `run` expand alike, so plan refuses what run would.

  Args:
    suite: the loaded suite (its option combinations built and checked by the loader).
    device_count: the devices there are (None: any number).

  Raises:
    ConfigError: when no mesh fits, or every combination is dropped (by
      `is_valid`, or as unsupported here).
  """
  meshes, skipped = _fitting_meshes(suite, device_count)
  namer = _Namer(
      mesh_labels=tuple(level_labels([None if m is None else m.identity() for m in suite.meshes])),
      checkpoint_labels=tuple(level_labels([c.config.identity() for c in suite.checkpoints])),
  )
  planned: list[PlannedBenchmark] = []
  invalid: list[tuple[str, dict[str, Any], str]] = []
  unsupported: list[tuple[str, dict[str, Any], str]] = []
  for entry in suite.entries:
    cls_name = entry.generator_cls.__name__
    requires = entry.generator_cls.orbax_requires
    lacking = orbax_capabilities().missing(requires) if requires else None  # probing imports Orbax (and JAX)
    for point in entry.points:
      if point.invalid_reason is not None:
        invalid.append((cls_name, point.values, point.invalid_reason))
      elif reason := lacking or point.options.unsupported_reason():
        unsupported.append((cls_name, point.values, reason))
      else:
        planned += [_planned(entry, point, mesh, ckpt, namer) for mesh, ckpt in itertools.product(meshes, enumerate(suite.checkpoints))]
  if not planned:
    raise ConfigError(
        "every sweep point was dropped, nothing would run: "
        + "; ".join(f"{g}({', '.join(f'{k}={v!r}' for k, v in o.items())}): {r}" for g, o, r in invalid + unsupported),
        file=suite.file,
        key="benchmarks",
    )
  unusable = tuple((s.description, s.reason) for s in suite.skipped_meshes)
  return Plan(tuple(planned), tuple(skipped), tuple(invalid), unusable, tuple(unsupported))


def _fitting_meshes(
    suite: Suite, device_count: int | None
) -> tuple[list[tuple[int, MeshConfig | None]], list[tuple[MeshConfig, str]]]:
  """(index, mesh) of the meshes that fit `device_count`, and (mesh, reason) of those that do not.

  Raises:
    ConfigError: when no mesh fits.
  """
  meshes: list[tuple[int, MeshConfig | None]] = []
  skipped = []
  for i, mesh in enumerate(suite.meshes):
    reason = None if mesh is None or device_count is None else mesh_skip_reason(mesh, device_count)
    if reason:
      skipped.append((mesh, reason))
    else:
      meshes.append((i, mesh))
  if not meshes:
    listed = ", ".join(f"{m.describe()} ({m.num_devices})" for m in suite.meshes if m)
    left_out = "".join(f"; {s.description} skipped: {s.reason}" for s in suite.skipped_meshes)
    fewest = min(m.num_devices for m in suite.meshes if m)
    raise ConfigError(
        f"no mesh fits the {device_count} available devices; meshes: {listed}."
        f" On CPU, --devices {fewest} (or leaving --devices out) simulates the {fewest} the smallest needs{left_out}",
        file=suite.file,
    )
  return meshes, skipped


@dataclasses.dataclass
class _Namer:
  """Names benchmarks by what varies; a name seen before gets its entry's index."""

  mesh_labels: tuple[str, ...]  # each of the suite's meshes, named as every table names it (api/_levels.py)
  checkpoint_labels: tuple[str, ...]
  seen: set[str] = dataclasses.field(default_factory=set)

  def name(self, entry: GeneratorEntry, varying: dict[str, Any], mesh_index: int, ckpt_index: int) -> str:
    labels = [_label(k, v, entry.options.axes[k]) for k, v in varying.items()]
    if len(self.mesh_labels) > 1 and self.mesh_labels[mesh_index] != "-":
      labels.append(f"mesh={self.mesh_labels[mesh_index]}")
    if len(self.checkpoint_labels) > 1:
      labels.append(self.checkpoint_labels[ckpt_index])
    cls_name = entry.generator_cls.__name__
    name = f"{cls_name}({', '.join(labels)})" if labels else cls_name
    if name in self.seen:
      name = f"{name}#{entry.index}"
    self.seen.add(name)
    return name


def _planned(
    entry: GeneratorEntry,
    point: OptionPoint,
    indexed_mesh: tuple[int, MeshConfig | None],
    indexed_ckpt: tuple[int, CheckpointSource],
    namer: _Namer,
) -> PlannedBenchmark:
  """The benchmark of one option combination on one mesh with one checkpoint."""
  (mesh_index, mesh), (ckpt_index, source) = indexed_mesh, indexed_ckpt
  ckpt, _ = source.on_mesh(mesh)
  varying = {n: point.values[n] for n in entry.options.axes}
  name = namer.name(entry, varying, mesh_index, ckpt_index)
  key = stable_key(
      entry.generator_path,
      options_to_dict(point.options),
      None if mesh is None else mesh.identity(),
      ckpt.config.identity(),
  )
  return PlannedBenchmark(
      name=name, key=key, generator_path=entry.generator_path, entry=entry,
      options=point.options, varying=varying, mesh=mesh, mesh_index=mesh_index,
      checkpoint=ckpt, checkpoint_index=ckpt_index,
      dir_name=safe_path_component(name.replace("(", "_").replace(")", "")) + f"-{key[:6]}",
  )  # fmt: skip
