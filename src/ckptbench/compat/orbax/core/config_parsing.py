"""Orbax's `core.config_parsing` on ckptbench: a suite's YAML -> `core.TestSuite`.

The YAML (Orbax's keys) is parsed by ckptbench's suite reader, its errors are
Orbax's, word for word where code matches on them, and its checkpoint, mesh and
`simdevice:` blocks become ckptbench's models (validated here, not mid-run). A
suite with a `simdevice:` block is left to `ckptbench run`, which starts the
emulated processes and devices before JAX; `ckptbench run SUITE.yaml` reads any
suite with ckptbench's own loader, which names the file and line of every error.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any, TypeVar

import yaml
from etils import epath

import ckptbench
from ckptbench.compat.orbax.core import core

_log = logging.getLogger(__name__)

_M = TypeVar("_M")
_SIMDEVICE_KEY = "simdevice"
_DIGEST_PATHS = ("capture_digests_path", "reference_digests_path")


def _import_class(class_path: str) -> type[Any]:
  """The class at `module.Class`; ImportError naming the path otherwise."""
  try:
    module_path, class_name = class_path.rsplit(".", 1)
    return getattr(importlib.import_module(module_path), class_name)
  except (ImportError, ValueError, AttributeError) as e:
    raise ImportError(f"Failed to import class {class_path}: {e}") from e


def _load_yaml_config(config_path: str) -> dict[str, Any]:
  """The YAML document at `config_path` (a local path or any location etils reads, gs:// included),
  parsed by ckptbench's suite reader; `yaml.YAMLError` (Orbax's) naming the line when it is not YAML."""
  _log.info("Loading configuration from: %s", config_path)
  with epath.Path(config_path).open("r") as f:
    text = f.read()
  try:
    return ckptbench.parse_yaml(text, str(config_path)).data
  except ckptbench.ConfigError as e:
    raise yaml.YAMLError(str(e)) from None


def _validate_config(config: dict[str, Any]) -> None:
  """Raises ValueError (Orbax's messages) for a config missing what a suite needs."""
  for key in ("suite_name", "benchmarks"):
    if key not in config:
      raise ValueError(f"Missing required key in YAML config: {key}")
  if not isinstance(config["benchmarks"], list):
    raise ValueError("'benchmarks' must be a list.")
  for i, entry in enumerate(config["benchmarks"]):
    if not isinstance(entry, dict):
      raise ValueError(f"Each item in 'benchmarks' must be a dict, got {type(entry)} at index {i}")
    for key in ("generator", "options"):
      if key not in entry:
        raise ValueError(f"Missing '{key}' in benchmarks entry at index {i}")
    if not isinstance(entry["options"], dict):
      raise ValueError(f"'options' must be a dict in benchmarks entry at index {i}")
    digests = [bool(entry["options"].get(key)) for key in _DIGEST_PATHS]
    if all(digests):
      raise ValueError(f"capture_digests_path and reference_digests_path are mutually exclusive in benchmarks entry at"
                       f" index {i}: a run either captures digests or compares against them.")  # fmt: skip
    if _SIMDEVICE_KEY in config and any(digests):
      raise ValueError(f"Correctness digests cannot be captured or compared on SimDevice (benchmarks entry at index {i}):"
                       " values that pass through a compiled program are fabricated, so the digests do not describe"
                       " real data.")  # fmt: skip
  _parse_simdevice_config(config)  # raises for a malformed block


def _parse_simdevice_config(config: dict[str, Any]) -> ckptbench.SimDeviceConfig | None:
  return _model(ckptbench.SimDeviceConfig, config[_SIMDEVICE_KEY], _SIMDEVICE_KEY) if _SIMDEVICE_KEY in config else None


def parse_simdevice_config(config_path: str) -> ckptbench.SimDeviceConfig | None:
  """The `simdevice:` block of the YAML at `config_path` as ckptbench's model, or None."""
  return _parse_simdevice_config(_load_yaml_config(config_path))


def _model(model: type[_M], block: Any, key: str) -> _M:
  """ckptbench's model of one block; ValueError naming the key and each problem, on one line."""
  if not isinstance(block, dict):
    raise ValueError(f"'{key}' must be a dict, got {type(block)}.")
  try:
    return model(**block)
  except ValueError as e:  # pydantic's ValidationError: one line per problem, made one line here
    problems = getattr(e, "errors", lambda: [{"loc": (), "msg": str(e)}])()
    text = "; ".join(f"{'.'.join(map(str, p['loc'])) or key}: {p['msg']}" for p in problems)
    raise ValueError(f"Invalid '{key}' block: {text}") from None


def _blocks(config: dict[str, Any], model: type[_M], key: str) -> list[_M] | None:
  """The suite's `<key>s` (a list) or `<key>` (one) as ckptbench's models; None when it has neither."""
  if f"{key}s" in config:
    return [_model(model, block, f"{key}s") for block in config[f"{key}s"]]
  return [_model(model, config[key], key)] if key in config else None


def _parse_checkpoint_configs(config: dict[str, Any]) -> list[ckptbench.CheckpointConfig]:
  return _blocks(config, ckptbench.CheckpointConfig, "checkpoint_config") or [ckptbench.CheckpointConfig()]


def _parse_mesh_configs(config: dict[str, Any]) -> list[ckptbench.MeshConfig] | None:
  return _blocks(config, ckptbench.MeshConfig, "mesh_config")


def parse_config(config_path: str) -> tuple[list[ckptbench.CheckpointConfig], list[ckptbench.MeshConfig] | None]:
  """The checkpoint configs and mesh configs (None: none named) of the YAML at `config_path`."""
  config = _load_yaml_config(config_path)
  return _parse_checkpoint_configs(config), _parse_mesh_configs(config)


def load_config(config_path: str) -> dict[str, Any]:
  """The YAML at `config_path` as a dict, validated (ValueError with Orbax's messages)."""
  config = _load_yaml_config(config_path)
  _validate_config(config)
  return config


def _generator(class_path: str) -> type[ckptbench.BenchmarksGenerator]:
  generator_class = _import_class(class_path)
  if not (isinstance(generator_class, type) and issubclass(generator_class, ckptbench.BenchmarksGenerator)):
    raise TypeError(f"Class {class_path} is not a subclass of BenchmarksGenerator.")
  # Undecorated, a generator inherits its base's options class, which has no options of its own.
  if generator_class.options_class in (None, ckptbench.BenchmarkOptions, core.BenchmarkOptions):
    raise TypeError(f"Generator class {class_path} is not decorated with @benchmark_options.")
  return generator_class


def _options(options_class: type[ckptbench.BenchmarkOptions], values: dict[str, Any]) -> ckptbench.BenchmarkOptions:
  """The options from a suite's mapping: Orbax's `from_dict` where the class has one (a list sweeps)."""
  from_dict = getattr(options_class, "from_dict", None)
  return from_dict(values) if from_dict is not None else options_class(**values)


def create_test_suite_from_config(config_path: str, output_dir: str | None = None, local_directory: str | None = None,
                                  remove_repeated_dir: bool = False) -> core.TestSuite:  # fmt: skip
  """The `TestSuite` the YAML at `config_path` describes, writing into `output_dir` (OUT). ValueError
  (Orbax's) for a missing key or a `simdevice:` block (`ckptbench run` runs those), ImportError for a
  generator path that does not resolve, TypeError for a class that is not a decorated generator or
  options that do not fit it."""
  config = load_config(config_path)
  if _SIMDEVICE_KEY in config:
    # Its devices and processes exist only if they were made before JAX started in this process.
    raise ValueError(
        f"{config_path} has a '{_SIMDEVICE_KEY}' block: run it with `ckptbench run {config_path}`, which starts"
        " the emulated cluster's processes and devices; a TestSuite built here would run on this process's devices"
    )
  checkpoint_configs, mesh_configs = _parse_checkpoint_configs(config), _parse_mesh_configs(config)
  generators = []
  for i, entry in enumerate(config["benchmarks"]):
    _log.info("Processing benchmark group %d: %s", i + 1, entry["generator"])
    generator_class = _generator(entry["generator"])
    options = _options(generator_class.options_class, entry["options"])
    generators.append(generator_class(
        checkpoint_configs=checkpoint_configs, options=options, output_dir=output_dir, mesh_configs=mesh_configs,
        local_directory=local_directory,
    ))  # fmt: skip
  return core.TestSuite(
      name=config["suite_name"], benchmarks_generators=generators, num_repeats=config.get("num_repeats", 1),
      output_dir=output_dir, local_directory=local_directory, remove_repeated_dir=remove_repeated_dir,
      baseline_path=config.get("baseline_path"), baseline_capture_path=config.get("baseline_capture_path"),
  )  # fmt: skip
