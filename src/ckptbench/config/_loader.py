"""Loading a suite file into validated, frozen objects (the only place raw YAML is read)."""

from __future__ import annotations

import dataclasses
import difflib
import json
import pathlib
from typing import Any, Callable, Sequence

import pydantic

from ckptbench.config._generators import GeneratorResolutionError, resolve_generator
from ckptbench.config._models import (
    BenchmarkEntry,
    CheckpointConfig,
    MeshConfig,
    SimDeviceConfig,
    SuiteConfig,
)
from ckptbench.config._mesh_list import SkippedMesh, without_undeclared_axes
from ckptbench.config._simdevice import emulation_notes, simdevice_of
from ckptbench.config._suite_imports import importable_beside
from ckptbench.config._options import OptionAxes, OptionPoint, build_points, check_options
from ckptbench.config._overrides import apply_overrides, parse_override
from ckptbench.config._presets import PRESETS, preset_spec
from ckptbench.config._spec import (
    SpecTree,
    check_spec_against_mesh,
    iter_arrays,
    parse_spec,
    without_absent_axes,
)
from ckptbench.config._yaml import KeyPath, LocatedDocument, load_yaml_file, parse_yaml
from ckptbench.api import BenchmarksGenerator

# Which model validates the mapping found at a key path (for unknown-key checks).
_LEVELS: dict[str, type[pydantic.BaseModel]] = {
    "checkpoint_config": CheckpointConfig,
    "checkpoint_configs": CheckpointConfig,
    "mesh_config": MeshConfig,
    "mesh_configs": MeshConfig,
    "benchmarks": BenchmarkEntry,
}  # (`simdevice:` checks its own keys: config/_simdevice.py)


@dataclasses.dataclass(frozen=True)
class CheckpointSource:
  """A checkpoint config and, for synthetic data, its parsed spec tree.

  A preset's spec shards over `fsdp` and `tensor`; on a mesh that lacks one of
  them (`replicate_absent_axes`), the dimensions sharded over it are replicated.
  """

  config: CheckpointConfig
  spec: SpecTree | None
  replicate_absent_axes: bool = False

  def on_mesh(self, mesh: MeshConfig | None) -> tuple["CheckpointSource", tuple[str, ...]]:
    """This source as laid out on `mesh`, and the sharding axes replicated because it lacks them."""
    if self.spec is None or mesh is None or not self.replicate_absent_axes:
      return self, ()
    spec, dropped = without_absent_axes(self.spec, mesh)
    return dataclasses.replace(self, spec=spec), dropped


@dataclasses.dataclass(frozen=True)
class GeneratorEntry:
  """One `benchmarks:` entry, resolved."""

  index: int
  generator_path: str
  generator_cls: type[BenchmarksGenerator]
  options: OptionAxes
  points: tuple[OptionPoint, ...]  # every combination of `options`, built and checked


@dataclasses.dataclass(frozen=True)
class Suite:
  """A validated suite."""

  config: SuiteConfig
  file: str
  checkpoints: tuple[CheckpointSource, ...]
  meshes: tuple[MeshConfig | None, ...]
  entries: tuple[GeneratorEntry, ...]
  raw: dict[str, Any]
  skipped_meshes: tuple[SkippedMesh, ...] = ()  # entries of mesh_configs that cannot be used
  notes: tuple[str, ...] = ()  # what plan and run say about how the suite is read

  @property
  def name(self) -> str:
    return self.config.suite_name

  @property
  def devices_needed(self) -> int | None:
    """The topology's chips for a `simdevice:` suite; else the devices of the largest usable mesh,
    MESHLESS_DEVICES for a suite without a mesh."""
    if self.config.simdevice is not None:
      return self.config.simdevice.num_devices
    return devices_for_meshes(self.meshes)


# A suite without a mesh runs on what JAX has, as Orbax's runner does; on CPU that is
# this many simulated devices (a TPU host's count, the guide's), so that benchmarks
# that split the devices themselves (snapshotter's slices) have some to split.
MESHLESS_DEVICES = 8


def devices_for_meshes(meshes: Sequence[MeshConfig | None]) -> int | None:
  """The devices `plan` shows and `run` simulates: the largest mesh's, or MESHLESS_DEVICES without one."""
  if tuple(meshes) == (None,):
    return MESHLESS_DEVICES
  return max((m.num_devices for m in meshes if m is not None), default=None)


def load_suite(
    path: str | pathlib.Path,
    overrides: Sequence[str] = (),
    *,
    check_paths: bool = True,
    before_generators: Callable[[int | None], None] | None = None,
) -> Suite:
  """Reads, validates and resolves a suite file.

  Args:
    path: the suite file.
    overrides: `KEY=VALUE` texts (`--set`), applied before validation.
    check_paths: refuse local checkpoint paths that do not exist here. `plan`
      passes False (a suite may be planned on a machine without its data): such
      a path becomes a note instead.
    before_generators: called with the devices of the largest usable mesh
      (MESHLESS_DEVICES without a mesh, as `Suite.devices_needed`) before any generator module is imported or its options
      checked. `ckptbench.run` sets up JAX there: an options class may ask JAX
      about its backend in `is_valid()` (Orbax's ask whether it is Pathways),
      which starts the backend with whatever flags are set by then.

  Raises:
    ConfigError: naming the file, line and key of the first problem (or the override).
    CkptbenchError: for an override that cannot be read or applied.
  """
  doc = apply_overrides(load_yaml_file(path), [parse_override(text) for text in overrides])
  return _resolve(doc, pathlib.Path(path).resolve().parent, check_paths, before_generators)


def load_suite_text(
    text: str, file: str = "<string>", base_dir: pathlib.Path | None = None, overrides: Sequence[str] = ()
) -> Suite:
  """Like `load_suite`, from a YAML string (relative paths resolve against `base_dir`)."""
  doc = apply_overrides(parse_yaml(text, file), [parse_override(o) for o in overrides])
  return _resolve(doc, base_dir or pathlib.Path.cwd())


def _resolve(
    doc: LocatedDocument,
    base_dir: pathlib.Path,
    check_paths: bool = True,
    before_generators: Callable[[int | None], None] | None = None,
) -> Suite:
  if not isinstance(doc.data, dict):
    raise doc.error(
        f"a suite is a mapping of keys (suite_name, benchmarks, ...), got {type(doc.data).__name__}"
    )
  _check_unknown_keys(doc)
  simdevice = simdevice_of(doc)  # its own messages, as `ckptbench run` reads it before anything else
  for name in ("checkpoint_config", "mesh_config"):
    if name in doc.data and name + "s" in doc.data:
      raise doc.error(f"give {name} or {name}s, not both", (name + "s",))
  data, skipped = without_undeclared_axes(doc.data)
  try:
    config = SuiteConfig.model_validate(data)
  except pydantic.ValidationError as e:
    raise _located(doc, e) from None

  checkpoints = []
  notes: list[str] = []
  plural = config.checkpoint_configs is not None
  for i, ckpt in enumerate(config.all_checkpoint_configs()):
    at = ("checkpoint_configs", i) if plural else ("checkpoint_config",)
    checkpoints.append(_resolve_checkpoint(doc, ckpt, at, base_dir, check_paths, notes))
  skipped_at = {s.index for s in skipped}
  indexed = [(i, m) for i, m in enumerate(config.all_mesh_configs()) if i not in skipped_at]
  skipped = list(skipped)
  for i, source in enumerate(checkpoints):
    if source.spec is None:
      continue
    at = ("checkpoint_configs", i, "spec") if plural else ("checkpoint_config", "spec")
    indexed = _meshes_for_spec(doc, source, at, indexed, config.mesh_configs is not None, skipped, notes)
  meshes, devices = [m for _, m in indexed], _devices(doc, simdevice, indexed, config.mesh_configs is not None, notes)
  if before_generators is not None:
    before_generators(devices)  # the count `plan` shows (a mesh-less suite's too)
  importable_beside(base_dir, pathlib.Path.cwd())
  entries = []
  for i, entry in enumerate(config.benchmarks):
    try:
      gen_path, gen_cls = resolve_generator(entry.generator)
    except GeneratorResolutionError as e:
      raise doc.error(str(e), ("benchmarks", i, "generator")) from None
    error_at = lambda msg, p, i=i: doc.error(msg, ("benchmarks", i, "options") + tuple(p))  # noqa: E731
    options = check_options(gen_cls.options_class, entry.options, error_at)
    points = build_points(gen_cls.options_class, options, error_at)
    entries.append(GeneratorEntry(i, gen_path, gen_cls, options, points))
  for key in ("reference", "floor"):
    if getattr(config, key):
      _check_variant_choice(doc, key, getattr(config, key), entries)
  if not config.reuse_checkpoint:
    notes.append("reuse_checkpoint: false: each run builds its own copy of the checkpoint data")
  return Suite(
      config, doc.file, tuple(checkpoints), tuple(meshes), tuple(entries), doc.data,
      tuple(sorted(skipped, key=lambda s: s.index)), tuple(notes),
  )  # fmt: skip


def _devices(
    doc: LocatedDocument,
    simdevice: SimDeviceConfig | None,
    indexed: list[tuple[int, MeshConfig | None]],
    mesh_list: bool,
    notes: list[str],
) -> int | None:
  """The devices the suite runs on: a `simdevice:` topology's chips (every mesh must fit them; the
  emulation is noted), else the largest mesh's (`devices_for_meshes`)."""
  if simdevice is None:
    return devices_for_meshes([m for _, m in indexed])
  for index, mesh in indexed:
    if mesh is not None and mesh.num_devices > simdevice.num_devices:
      at = ("mesh_configs", index) if mesh_list else ("mesh_config",)
      raise doc.error(f"the mesh {mesh.describe()} needs {mesh.num_devices} devices; simdevice.topology has"
                      f" {simdevice.num_devices} chips", at)  # fmt: skip
  notes.extend(emulation_notes(simdevice))
  return simdevice.num_devices


def _meshes_for_spec(
    doc: LocatedDocument,
    source: CheckpointSource,
    at: KeyPath,
    indexed: list[tuple[int, MeshConfig | None]],
    mesh_list: bool,
    skipped: list[SkippedMesh],
    notes: list[str],
) -> list[tuple[int, MeshConfig | None]]:
  """The meshes the spec can be laid out on.

  With one mesh, a spec that does not fit it is an error at its line; in a
  list of meshes, a mesh the spec does not fit is skipped with the reason
  (an error when no mesh is left).
  """
  kept = []
  for index, mesh in indexed:
    if mesh is None:
      if any(a.sharding for _, a in iter_arrays(source.spec)):
        key = "mesh_configs" if mesh_list else "mesh_config"
        raise doc.error(f"the spec shards arrays but the suite has no {key}", at)
      kept.append((index, mesh))
      continue
    laid_out, replicated = source.on_mesh(mesh)
    if replicated:
      notes.append(
          f"preset {source.config.preset} on mesh {mesh.describe()}: the mesh has no axis"
          f" {', '.join(replicated)}; dimensions the preset shards over it are replicated"
      )
    if not mesh_list:
      check_spec_against_mesh(laid_out.spec, mesh, lambda msg, p: doc.error(msg, at + tuple(p)))
      kept.append((index, mesh))
      continue
    try:
      check_spec_against_mesh(laid_out.spec, mesh, lambda msg, p: _Skip(msg))
      kept.append((index, mesh))
    except _Skip as e:
      skipped.append(SkippedMesh(index, f"mesh_configs[{index}] {mesh.describe()}", str(e)))
  if not kept:
    reasons = "; ".join(f"{s.description}: {s.reason}" for s in skipped)
    raise doc.error(f"no mesh can be used: {reasons}", ("mesh_configs",))
  return kept


class _Skip(Exception):
  """Stops checking a spec against a mesh that is being skipped."""


def _check_variant_choice(doc: LocatedDocument, key: str, choice: dict[str, Any], entries: list[GeneratorEntry]) -> None:
  """Every key of `reference:` (or `floor:`) is a swept option and its value one of the swept values."""
  for name, value in choice.items():
    swept = [list(e.options.axes[name]) for e in entries if name in e.options.axes]
    if not swept:
      axes = sorted({a for e in entries for a in e.options.axes})
      raise doc.error(
          f"{name!r} is not a swept option; {key} picks a variant by swept options"
          f" ({', '.join(axes) or 'this suite sweeps none'})",
          (key, name),
      )
    values = [v for levels in swept for v in levels]
    if not any(v == value or str(v) == str(value) for v in values):
      raise doc.error(f"{value!r} is not among the swept values of {name!r}: {values}", (key, name))


def _resolve_checkpoint(
    doc: LocatedDocument,
    ckpt: CheckpointConfig,
    at: KeyPath,
    base_dir: pathlib.Path,
    check_paths: bool,
    notes: list[str],
) -> CheckpointSource:
  if ckpt.path is not None:
    path = (base_dir / ckpt.path).resolve() if "://" not in ckpt.path else None
    if path is not None and not path.exists() and not check_paths:
      notes.append(f"checkpoint path {ckpt.path} does not exist here; `run` needs it")
      return CheckpointSource(ckpt, None)
    if path is not None:
      if not path.exists():
        raise doc.error(f"checkpoint path {ckpt.path!r} does not exist", at + ("path",))
      problem = _not_a_checkpoint(path)
      if problem:
        raise doc.error(f"checkpoint path {ckpt.path!r} {problem}", at + ("path",))
      ckpt = ckpt.model_copy(update={"path": str(path)})
    if ckpt.sharding_config_path is not None and "://" not in ckpt.sharding_config_path:
      sharding = (base_dir / ckpt.sharding_config_path).resolve()
      if not sharding.is_file():
        raise doc.error(
            f"sharding config {ckpt.sharding_config_path!r} does not exist",
            at + ("sharding_config_path",),
        )
      ckpt = ckpt.model_copy(update={"sharding_config_path": str(sharding)})
    return CheckpointSource(ckpt, None)
  if ckpt.preset is not None:
    return CheckpointSource(ckpt, _preset_spec(doc, ckpt, at), replicate_absent_axes=True)
  if ckpt.spec == {}:
    return CheckpointSource(ckpt, None)  # Orbax's "no data": the benchmark makes its own
  if ckpt.spec is not None:
    return CheckpointSource(ckpt, parse_spec(ckpt.spec, lambda m, p: doc.error(m, at + ("spec",) + p)))
  return CheckpointSource(ckpt, None)


# Files an Orbax checkpoint has at its top or in its item directories (v1 and v0 layouts).
_CHECKPOINT_MARKERS = ("_CHECKPOINT_METADATA", "_METADATA", "manifest.ocdbt")


def _not_a_checkpoint(path: pathlib.Path) -> str | None:
  """Why `path` is not a checkpoint Orbax's benchmark framework loads, or None.

  A v0 step directory (`.../0` holding the PyTree checkpoint `items/`) is
  refused: Orbax's framework loads `checkpoint_config.path` with the v0 PyTree
  handler, which reads the item and fails on the step above it.
  """
  if not path.is_dir():
    return f"is not an Orbax checkpoint directory (no {' or '.join(_CHECKPOINT_MARKERS)} in it)"
  if (path / "_METADATA").exists() or (path / "manifest.ocdbt").exists():
    return None  # a PyTree checkpoint
  items = _v0_step_items(path)
  if items:
    return f"names a step directory, not a checkpoint: the checkpoint is its subdirectory {items!r} ({path / items})"
  if (path / "_CHECKPOINT_METADATA").exists():
    return None  # a v1 checkpoint
  return f"is not an Orbax checkpoint directory (no {' or '.join(_CHECKPOINT_MARKERS)} in it)"


def _v0_step_items(path: pathlib.Path) -> str | None:
  """The item of a v0 CheckpointManager step directory (its metadata names v0 handlers), or None."""
  try:
    handlers = json.loads((path / "_CHECKPOINT_METADATA").read_text()).get("item_handlers")
  except (OSError, ValueError, AttributeError):
    return None
  if not isinstance(handlers, dict):
    return None
  v0 = [name for name, handler in handlers.items() if ".v1." not in str(handler) and (path / name / "_METADATA").exists()]
  return v0[0] if v0 else None


def _preset_spec(doc: LocatedDocument, ckpt: CheckpointConfig, at: KeyPath) -> SpecTree:
  if ckpt.preset not in PRESETS:
    raise doc.error(f"unknown preset {ckpt.preset!r}; known: {', '.join(PRESETS)}", at + ("preset",))
  raw = preset_spec(ckpt.preset, ckpt.scale, ckpt.include_optimizer_state)
  return parse_spec(raw, lambda m, p: doc.error(m, at + ("preset",)))


def _check_unknown_keys(doc: LocatedDocument) -> None:
  def check(mapping: Any, model: type[pydantic.BaseModel], path: KeyPath) -> None:
    if not isinstance(mapping, dict):
      return
    known = list(model.model_fields)
    for key in mapping:
      if key not in known:
        close = difflib.get_close_matches(str(key), known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"
        raise doc.error(f"unknown key {key!r}; {hint}", path + (key,))

  check(doc.data, SuiteConfig, ())
  for key, model in _LEVELS.items():
    value = doc.data.get(key)
    if isinstance(value, list):
      for i, item in enumerate(value):
        check(item, model, (key, i))
    else:
      check(value, model, (key,))


def _located(doc: LocatedDocument, error: pydantic.ValidationError):
  errors = error.errors()
  first = errors[0]
  path = _document_path(doc.data, first["loc"], first["type"] == "missing")
  msg = first["msg"].removeprefix("Value error, ")
  if first["type"] == "missing":
    msg = f"required key {first['loc'][-1]!r} is missing"
    path = path[:-1] if path and path[-1] == first["loc"][-1] else path
    msg = msg if not path else f"{msg} under {path[-1]!r}" if isinstance(path[-1], str) else msg
  else:
    value = _value_at(doc.data, path)
    if value is not _MISSING and first["type"] not in ("value_error", "assertion_error"):
      msg = f"{msg}, got {_shown(value)}"
      if isinstance(value, list) and not first["type"].startswith(("list", "tuple", "too_")):
        msg += "; a list sweeps values only under benchmarks[].options, give one value here"
  more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
  return doc.error(msg + more, path)


_MISSING = object()
_SHOWN = 120  # characters of a rejected value an error line shows


def _shown(value: Any) -> str:
  shown = repr(value)
  return shown if len(shown) <= _SHOWN else f"{shown[: _SHOWN - 3]}..."


def _document_path(data: Any, loc: tuple, missing_key: bool) -> KeyPath:
  """Keeps the parts of a pydantic error location that exist in the document."""
  path: list[str | int] = []
  node = data
  for part in loc:
    if isinstance(node, dict) and part in node:
      node = node[part]
      path.append(part)
    elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
      node = node[part]
      path.append(part)
    elif missing_key and isinstance(node, dict) and part == loc[-1]:
      path.append(part)  # a missing required key
      break
  return tuple(path)


def _value_at(data: Any, path: KeyPath) -> Any:
  node = data
  for part in path:
    try:
      node = node[part]
    except (KeyError, IndexError, TypeError):
      return _MISSING
  return node
