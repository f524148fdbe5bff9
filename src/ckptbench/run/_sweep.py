"""Expanding a suite into benchmarks: options product x meshes x checkpoints."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from typing import Any

from ckptbench.config import CheckpointSource, GeneratorEntry, MeshConfig, Suite
from ckptbench.data import mesh_skip_reason
from ckptbench.api import safe_path_component
from ckptbench.api import BenchmarkOptions, options_to_dict
from ckptbench.api import orbax_capabilities
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
        "mesh": None if self.mesh is None else self.mesh.model_dump(mode="json"),
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
  return f"{name}={value}"


def options_product(entry: GeneratorEntry) -> list[dict[str, Any]]:
  """Every combination of the swept values, each merged with the fixed options."""
  names = list(entry.options.axes)
  combos = itertools.product(*(entry.options.axes[n] for n in names))
  return [{**entry.options.fixed, **dict(zip(names, values))} for values in combos]


def expand(suite: Suite, device_count: int | None) -> Plan:
  """The benchmarks to run; meshes that do not fit `device_count` are skipped.

  `ckptbench plan` and `run` expand alike, so plan refuses what run would.

  Args:
    suite: the loaded suite.
    device_count: the devices there are (None: any number).

  Raises:
    ConfigError: when no mesh fits, an options class rejects a combination,
      or every combination is dropped (by `is_valid`, or as unsupported here).
  """

  meshes: list[tuple[int, MeshConfig | None]] = []
  skipped = []
  for i, mesh in enumerate(suite.meshes):
    reason = None if mesh is None or device_count is None else mesh_skip_reason(mesh, device_count)
    if reason:
      skipped.append((mesh, reason))
    else:
      meshes.append((i, mesh))
  unusable = tuple((s.description, s.reason) for s in suite.skipped_meshes)
  if not meshes:
    listed = ", ".join(f"{m.describe()} ({m.num_devices})" for m in suite.meshes if m)
    left_out = "".join(f"; {d} skipped: {r}" for d, r in unusable)
    raise ConfigError(
        f"no mesh fits the {device_count} available devices; meshes: {listed}."
        f" Use --devices N to simulate more CPU devices{left_out}",
        file=suite.file,
    )

  planned: list[PlannedBenchmark] = []
  invalid = []
  unsupported = []
  seen_names: set[str] = set()
  multi_mesh = len(suite.meshes) > 1
  multi_ckpt = len(suite.checkpoints) > 1
  for entry in suite.entries:
    cls_name = entry.generator_cls.__name__
    lacking = orbax_capabilities().missing(entry.generator_cls.orbax_requires)
    for values in options_product(entry):
      try:
        options = entry.generator_cls.options_class(**values)
      except (TypeError, ValueError) as e:
        raise ConfigError(
            f"{entry.generator_cls.options_class.__name__}({values}) was rejected: {e}",
            file=suite.file,
            key=f"benchmarks[{entry.index}].options",
        ) from None
      if not options.is_valid():
        invalid.append((cls_name, values, options.invalid_reason() or "is_valid() returned False"))
        continue
      if reason := lacking or options.unsupported_reason():
        unsupported.append((cls_name, values, reason))
        continue
      varying = {n: values[n] for n in entry.options.axes}
      for (mesh_index, mesh), (ckpt_index, source) in itertools.product(meshes, enumerate(suite.checkpoints)):
        ckpt, _ = source.on_mesh(mesh)
        labels = [_label(k, v, entry.options.axes[k]) for k, v in varying.items()]
        if multi_mesh and mesh is not None:
          labels.append(f"mesh={mesh.describe()}")
        if multi_ckpt:
          labels.append(f"ckpt={ckpt_index}")
        name = f"{cls_name}({', '.join(labels)})" if labels else cls_name
        if name in seen_names:
          name = f"{name}#{entry.index}"
        seen_names.add(name)
        key = stable_key(
            entry.generator_path,
            options_to_dict(options),
            None if mesh is None else mesh.model_dump(mode="json"),
            ckpt.config.model_dump(mode="json"),
        )
        planned.append(
            PlannedBenchmark(
                name=name, key=key, generator_path=entry.generator_path, entry=entry,
                options=options, varying=varying, mesh=mesh, mesh_index=mesh_index,
                checkpoint=ckpt, checkpoint_index=ckpt_index,
                dir_name=safe_path_component(name.replace("(", "_").replace(")", "")) + f"-{key[:6]}",
            )
        )  # fmt: skip
  if not planned:
    raise ConfigError(
        "every sweep point was dropped, nothing would run: "
        + "; ".join(f"{g}({', '.join(f'{k}={v!r}' for k, v in o.items())}): {r}" for g, o, r in invalid + unsupported),
        file=suite.file,
        key="benchmarks",
    )
  return Plan(tuple(planned), tuple(skipped), tuple(invalid), unusable, tuple(unsupported))
