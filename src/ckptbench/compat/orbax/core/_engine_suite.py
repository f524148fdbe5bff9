"""How `core.TestSuite` hands Orbax's generators to ckptbench's engine: the suite document, import
paths for classes defined anywhere, OUT, and what a run leaves behind (a torch process group)."""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import pathlib
import sys
import tempfile
import types
from typing import Any, Iterator, Sequence

def recorded_exception(error: Any) -> Exception:
  """A recorded error as an exception: of its builtin type when it had one, else RuntimeError naming the type."""
  kind = getattr(builtins, error.type, None)
  if isinstance(kind, type) and issubclass(kind, Exception):
    return kind(error.message)
  return RuntimeError(f"{error.type}: {error.message}")


def suite_groups(generators: Sequence[Any]) -> list[list[Any]]:
  """The generators in runs of one engine suite each: those sharing checkpoint and mesh configs, in order."""
  groups: list[list[Any]] = []
  for generator in generators:
    if generator._options is None:
      raise ValueError(f"{type(generator).__name__} was built without options: a TestSuite needs them")
    if groups and _configs(groups[-1][0]) == _configs(generator):
      groups[-1].append(generator)
    else:
      groups.append([generator])
  return groups


def _configs(generator: Any) -> tuple[list[Any], list[Any]]:
  return [plain_config(c) for c in generator._checkpoint_configs], [plain_config(m) for m in generator._mesh_configs or ()]


def plain_config(config: Any) -> Any:
  """A checkpoint or mesh config as the suite file writes it."""
  if hasattr(config, "model_dump"):
    return config.model_dump(exclude_none=True, exclude_defaults=True)
  return dict(config) if isinstance(config, dict) else dataclasses.asdict(config)


def options_mapping(options: Any) -> dict[str, Any]:
  """The options as a suite's `options:` mapping (tuples as lists: YAML has no tuple)."""

  def plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
      return [plain(v) for v in value]
    if isinstance(value, dict):
      return {k: plain(v) for k, v in value.items()}
    return value

  return {k: plain(v) for k, v in dataclasses.asdict(options).items()}


# Generator classes a suite cannot import by their own path (defined inside a function) are
# reached through this module, which the engine imports by name.
_LOCAL_GENERATORS = types.ModuleType(f"{__name__}_local_generators")


def generator_path(cls: type) -> str:
  """An import path the engine resolves to `cls`."""
  if getattr(sys.modules.get(cls.__module__), cls.__qualname__, None) is cls:
    return f"{cls.__module__}.{cls.__qualname__}"
  sys.modules.setdefault(_LOCAL_GENERATORS.__name__, _LOCAL_GENERATORS)
  name = f"{cls.__name__}_{id(cls):x}"
  setattr(_LOCAL_GENERATORS, name, cls)
  return f"{_LOCAL_GENERATORS.__name__}.{name}"


def fresh_process_can_import(suite: Any) -> bool:
  """Whether a fresh process (the engine's memory pass) can import every generator of `suite`: none
  is reached through this module's stand-in for classes defined inside a function."""
  return not any(e.generator_path.startswith(f"{_LOCAL_GENERATORS.__name__}.") for e in suite.entries)


@contextlib.contextmanager
def own_torch_group() -> Iterator[None]:
  """Tears down the torch process group the engine set up for a module using `torch.distributed`
  (Orbax's PyTorch runner does too), leaving one the caller had alone."""
  dist = sys.modules.get("torch.distributed")
  had_group = dist is not None and dist.is_available() and dist.is_initialized()
  try:
    yield
  finally:
    dist = sys.modules.get("torch.distributed")
    if not had_group and dist is not None and dist.is_available() and dist.is_initialized():
      dist.destroy_process_group()


@contextlib.contextmanager
def engine_output_dir(output_dir: str | None, sub: str | None) -> Iterator[pathlib.Path]:
  """The engine's OUT: `output_dir` (or its `sub` directory), else a temporary directory removed afterwards."""
  if output_dir is not None:
    yield pathlib.Path(output_dir) / sub if sub else pathlib.Path(output_dir)
    return
  with tempfile.TemporaryDirectory(prefix="ckptbench-testsuite-") as scratch:
    yield pathlib.Path(scratch)
