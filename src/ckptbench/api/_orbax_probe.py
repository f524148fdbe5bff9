"""What the installed Orbax offers, asked of Orbax itself rather than assumed from its version.

ckptbench supports a range of orbax-checkpoint releases (see docs/versions.md). Their v1
API changed shape within that range: 0.11.x has `save_pytree`/`load_pytree` and a
`Context(array_options=..., memory_options=...)` built from option objects; 0.12 adds
`save`/`load` and a `Context()` whose sections are set as attributes. Options appeared
over time too (`use_compression`, load-and-broadcast, memory limits). Built-ins ask
`orbax_capabilities()` and build their calls with `orbax_v1_context` and `orbax_v1_io`,
so one built-in runs on every supported release, and a combination a release cannot
express is reported as unsupported with `missing_options` as the reason.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import sys
from typing import Any, Callable, Mapping

from ckptbench.api._probe_cache import probe_cache_path, read_probe, write_probe

# Sections of the v1 Context that built-ins configure: name -> (0.11 keyword, options class path).
_SECTIONS = {
    "saving": ("array_options", ("ArrayOptions", "Saving")),
    "loading": ("array_options", ("ArrayOptions", "Loading")),
    "memory": ("memory_options", ("MemoryOptions",)),
}


@dataclasses.dataclass(frozen=True)
class OrbaxCapabilities:
  """What the installed orbax-checkpoint offers.

  Attributes:
    version: the installed orbax-checkpoint version (None when not installed).
    v1_api: `orbax.checkpoint.v1` imports.
    v1_save_load: `v1.save`/`v1.load`/`v1.save_async` exist (0.12+); before them the
      same calls are `save_pytree`/`load_pytree`/`save_pytree_async`.
    v1_context_sections: `v1.Context()` exposes `.array.saving` etc. as attributes (0.12+).
    options: field names per Context section: "saving", "loading", "memory".
    v1_training: `v1.training.Checkpointer` exists.
    checkpoint_manager: the v0 `CheckpointManager` exists.
    events: Orbax has its event-tracking module (`_src/logging/event_tracking`,
      0.11.30 has it, 0.11.20 not); without it fewer `/jax/orbax/` events arrive.
  """

  version: str | None
  v1_api: bool
  v1_save_load: bool
  v1_context_sections: bool
  options: Mapping[str, frozenset[str]]
  v1_training: bool
  checkpoint_manager: bool
  events: bool
  v1_import_error: str | None = None  # why `orbax.checkpoint.v1` did not import, if it did not

  def to_json(self) -> dict[str, Any]:
    return {**dataclasses.asdict(self), "options": {k: sorted(v) for k, v in self.options.items()}}

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> OrbaxCapabilities:
    return cls(**{**data, "options": {k: frozenset(v) for k, v in data["options"].items()}})

  def missing_options(self, requested: Mapping[str, Mapping[str, Any]]) -> str | None:
    """Why the installed Orbax cannot express `requested` ({section: {field: value}}), or None.

    Nested fields may be dotted ("storage_options.chunk_byte_size"); their top field is checked.
    """
    if not self.v1_api:
      return f"orbax-checkpoint {self.version}: its v1 API does not import ({self.v1_import_error})"
    missing = [
        f"{section}.{name.split('.')[0]}" for section, fields in requested.items()
        for name in fields if name.split(".")[0] not in self.options.get(section, frozenset())
    ]  # fmt: skip
    if missing:
      return f"orbax-checkpoint {self.version} lacks the option(s) {', '.join(sorted(missing))}"
    return None


  def missing(self, required: tuple[str, ...]) -> str | None:
    """Why the installed Orbax lacks one of the `required` capabilities (field names), or None."""
    lacking = [name for name in required if not getattr(self, name)]
    if lacking:
      return f"orbax-checkpoint {self.version} lacks {', '.join(lacking)}"
    return None


def _dataclass_fields(cls: Any) -> frozenset[str]:
  return frozenset(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else frozenset()


def _options_class(options_module: Any, path: tuple[str, ...]) -> Any:
  obj = options_module
  for name in path:
    obj = getattr(obj, name, None)
    if obj is None:
      return None
  return obj


@functools.cache
def orbax_capabilities() -> OrbaxCapabilities:
  """Probes the installed orbax-checkpoint once per process, or reads the probe kept on disk.

  A process that has not imported Orbax (`ckptbench plan`) reads the kept probe of this
  installation (`_probe_cache.py`) and so starts neither Orbax nor JAX; one that has, probes.
  A probe where Orbax's v1 API did not import is never kept: a dependency installed later
  (flax for 0.11.34) changes that answer without changing orbax-checkpoint.
  """
  path = None if "orbax.checkpoint" in sys.modules else probe_cache_path()
  kept = read_probe(path)
  if kept is not None:
    try:
      return OrbaxCapabilities.from_json(kept)
    except (TypeError, KeyError, AttributeError):  # kept by a ckptbench whose record differs: probe again
      pass
  capabilities = _probe()
  if path is not None and capabilities.v1_api:
    write_probe(path, capabilities.to_json())
  return capabilities


def _probe() -> OrbaxCapabilities:
  """Asks the installed orbax-checkpoint (importing it, and JAX)."""
  try:
    version = importlib.metadata.version("orbax-checkpoint")
  except importlib.metadata.PackageNotFoundError:
    version = None
  try:
    import orbax.checkpoint as ocp  # noqa: PLC0415
    from orbax.checkpoint import v1  # noqa: PLC0415
  except ImportError as e:  # e.g. 0.11.34 imports flax without declaring it
    return OrbaxCapabilities(version, False, False, False, {}, False, False, False, f"{type(e).__name__}: {e}")
  options = {
      section: _dataclass_fields(_options_class(v1.options, path)) for section, (_, path) in _SECTIONS.items()
  }
  try:
    import orbax.checkpoint._src.logging.event_tracking  # noqa: F401, PLC0415

    events = True
  except ImportError:
    events = False
  return OrbaxCapabilities(
      version=version,
      v1_api=True,
      v1_save_load=all(hasattr(v1, n) for n in ("save", "load", "save_async")),
      v1_context_sections=hasattr(v1.Context(), "array"),
      options=options,
      v1_training=hasattr(getattr(v1, "training", None), "Checkpointer"),
      checkpoint_manager=hasattr(ocp, "CheckpointManager"),
      events=events,
  )


def orbax_v1_context(settings: Mapping[str, Mapping[str, Any]]) -> Any:
  """A `v1.Context` with `settings` ({"saving"|"loading"|"memory": {field: value}}) applied.

  Nested fields are dotted: `{"saving": {"storage_options.chunk_byte_size": 1 << 20}}`.

  Raises:
    ValueError: when the installed Orbax lacks a field (check `missing_options` first).
  """
  caps = orbax_capabilities()
  reason = caps.missing_options(settings)
  if reason:
    raise ValueError(reason)
  from orbax.checkpoint import v1  # noqa: PLC0415

  if caps.v1_context_sections:
    ctx = v1.Context()
    sections = {"saving": ctx.array.saving, "loading": ctx.array.loading, "memory": ctx.memory}
    for section, fields in settings.items():
      for name, value in fields.items():
        _set_dotted(sections[section], name, value)
    return ctx
  # 0.11.x: option objects passed to the constructor.
  objects = {s: _options_class(v1.options, path)() for s, (_, path) in _SECTIONS.items() if s in settings}
  for section, fields in settings.items():
    for name, value in fields.items():
      _set_dotted(objects[section], name, value)
  kwargs: dict[str, Any] = {}
  if "saving" in objects or "loading" in objects:
    array = v1.options.ArrayOptions
    kwargs["array_options"] = array(
        saving=objects.get("saving", array.Saving()), loading=objects.get("loading", array.Loading())
    )
  if "memory" in objects:
    kwargs["memory_options"] = objects["memory"]
  return v1.Context(**kwargs)


def _set_dotted(obj: Any, dotted: str, value: Any) -> None:
  *parents, last = dotted.split(".")
  for name in parents:
    obj = getattr(obj, name)
  object.__setattr__(obj, last, value)  # the 0.11.x option objects are frozen dataclasses


@dataclasses.dataclass(frozen=True)
class OrbaxV1IO:
  """The v1 save/load calls under the installed Orbax's names."""

  save: Callable[..., Any]
  save_async: Callable[..., Any]
  load: Callable[..., Any]


def orbax_v1_io() -> OrbaxV1IO:
  """`save`, `save_async` and `load` of the v1 API (`*_pytree` before 0.12)."""
  from orbax.checkpoint import v1  # noqa: PLC0415

  if orbax_capabilities().v1_save_load:
    return OrbaxV1IO(v1.save, v1.save_async, v1.load)
  return OrbaxV1IO(v1.save_pytree, v1.save_pytree_async, v1.load_pytree)
