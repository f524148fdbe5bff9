"""Orbax's `core.core` translated onto ckptbench: options, the generator base, context, result, suite.

The options and the decorator are ckptbench's (the options class gains Orbax's
`from_dict`). The generator base wraps every `test_fn` a subclass defines, so
the code inside sees Orbax's objects (a mutable context with `etils` paths; a
result whose `error` fails the run) and ckptbench's runner its own; before the
first call absl's flags are marked parsed and a module using
`torch.distributed` gets the gloo group spanning ckptbench's processes, as
Orbax's runners do. A generator's sweep is ckptbench's (`suite_document()` read
by ckptbench's loader), its meshes ckptbench's `build_mesh`, and a `TestSuite`
runs on ckptbench's engine. A module that needs hardware this machine lacks
(`torch.cuda.set_device` without CUDA) is recorded as unsupported, not run.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import functools
import hashlib
import inspect
import json
import pathlib
import re
import sys
import tempfile
import types
from typing import Any, Callable, ClassVar, Iterator, Sequence

import jax
import numpy as np
from absl import logging
from etils import epath

import ckptbench
from ckptbench.compat.orbax.core import checkpoint_generation, device_mesh, directory_setup, inventory, metric
from ckptbench.compat.orbax.core import metrics_manager, multihost

benchmark_options = ckptbench.benchmark_options


@dataclasses.dataclass(frozen=True, kw_only=True)
class BenchmarkOptions(ckptbench.BenchmarkOptions):
  """ckptbench's options base with Orbax's `from_dict`, which ckptbench's loader calls with the suite's
  plain values (a subclass may override it to build typed fields)."""

  @classmethod
  def from_dict(cls, options_dict: dict[str, Any]) -> "BenchmarkOptions":
    """The options from a suite's `options:` mapping (a list value sweeps)."""
    return cls(**options_dict)

  def unsupported_reason(self) -> str | None:
    return _missing_hardware(sys.modules.get(type(self).__module__))


@dataclasses.dataclass
class TestContext:
  """What a ported `test_fn` receives: Orbax's `TestContext`, built from ckptbench's (`native`).

  `pytree` is intact at the start of every run (data a previous run deleted or
  donated is built again) and assignable; `local_path` is `--local_directory`'s
  scratch directory, `output_dir` the run's OUT, `key` ckptbench's benchmark key.
  """

  __test__: ClassVar[bool] = False  # not a pytest test class

  pytree: Any | None
  path: epath.Path
  options: ckptbench.BenchmarkOptions
  mesh: Any = None
  repeat_index: int | None = None
  local_path: epath.Path | None = None
  output_dir: epath.Path | None = None
  name: str | None = None
  key: str = ""
  checkpoint_config: Any = None
  native: ckptbench.TestContext | None = dataclasses.field(default=None, repr=False, compare=False)

  @classmethod
  def from_native(cls, context: ckptbench.TestContext) -> "TestContext":
    """The Orbax-shaped view of the context ckptbench's runner passes."""
    return cls(
        pytree=context.pytree, path=epath.Path(context.path), options=context.options, mesh=context.mesh,
        repeat_index=context.repeat_index, local_path=None if context.local_path is None else epath.Path(context.local_path),
        output_dir=None if context.trace_root is None else epath.Path(context.trace_root).parent, name=context.name,
        key=context.key, checkpoint_config=context.checkpoint_config, native=context,
    )  # fmt: skip

  def trace_path(self, operation: str) -> epath.Path | None:
    """Where to write the profiler trace of `operation`, or None when not tracing: ckptbench's trace
    directory under its runner, else Orbax's rule (`<output_dir>/tensorboard/<name>__<op>`, first
    repeat only unless `trace_every_repeat`)."""
    if self.native is not None:
      found = self.native.trace_path(operation)
      return None if found is None else epath.Path(found)
    if not getattr(self.options, "enable_trace", False) or self.output_dir is None or self.name is None:
      return None
    if (self.repeat_index or 0) > 0 and not getattr(self.options, "trace_every_repeat", False):
      return None
    return epath.Path(self.output_dir) / "tensorboard" / f"{self.name}__{operation}"


@dataclasses.dataclass
class TestResult:
  """What a ported `test_fn` returns: Orbax's `TestResult` (plus ckptbench's `notes`). A run with an
  `error` is recorded as failed with it; `inventory` (compat's or Orbax's) describes the checkpoint
  the run used when that is not the run directory."""

  __test__: ClassVar[bool] = False

  metrics: ckptbench.Metrics
  error: Exception | None = None
  path: epath.Path | None = None
  local_path: epath.Path | None = None
  inventory: Any = None
  notes: tuple[str, ...] = ()

  def is_successful(self) -> bool:
    """Whether the run finished without an error."""
    return self.error is None

  def to_native(self) -> ckptbench.TestResult:
    """ckptbench's result; raises the run's `error` when there is one."""
    if self.error is not None:
      raise self.error
    return ckptbench.TestResult(metrics=self.metrics, inventory=self.inventory, notes=tuple(self.notes))


class BenchmarksGenerator(ckptbench.BenchmarksGenerator):
  """Orbax's generator base on ckptbench: subclasses write `test_fn(TestContext) -> TestResult`.

  ckptbench's runner builds it with no arguments (the suite gives the rest). Built
  by hand with Orbax's arguments, it checks them as Orbax does, `suite_document()`
  is the suite it stands for, and `generate()` gives Orbax's `Benchmark` objects.
  """

  options_class: ClassVar[type[ckptbench.BenchmarkOptions]] = BenchmarkOptions

  def __init__(self, checkpoint_configs: Sequence[Any] = (), options: ckptbench.BenchmarkOptions | None = None,
               output_dir: str | None = None, mesh_configs: Sequence[Any] | None = None,
               local_directory: str | None = None):  # fmt: skip
    if options is not None:
      if type(self).options_class is BenchmarkOptions:
        raise TypeError(
            f"BenchmarksGenerator subclass {type(self).__name__} must be decorated with"
            " @benchmark_options to set the 'options_class' attribute."
        )
      if not isinstance(options, self.options_class):
        raise TypeError(f"Expected options of type {self.options_class.__name__}, but got {type(options).__name__}")
    self._checkpoint_configs = checkpoint_configs
    self._options = options
    self._output_dir = output_dir
    self._mesh_configs = mesh_configs
    self._local_directory = local_directory

  def __init_subclass__(cls, **kwargs: Any) -> None:
    super().__init_subclass__(**kwargs)
    own = cls.__dict__.get("test_fn")
    if own is not None and not getattr(own, "_ckptbench_adapted", False):
      cls.test_fn = _adapted(own)  # type: ignore[method-assign]

  def suite_document(self) -> dict[str, Any]:
    """This generator as a ckptbench suite document (one `benchmarks:` entry); ValueError without options."""
    if self._options is None:
      raise ValueError(f"{type(self).__name__} was built without options: a suite needs them")
    document: dict[str, Any] = {
        "checkpoint_configs": [_plain(c) for c in self._checkpoint_configs] or [{"spec": {}}],
        "benchmarks": [{"generator": _generator_path(type(self)), "options": _plain(self._options)}],
    }
    if self._mesh_configs:
      document["mesh_configs"] = [_plain(m) for m in self._mesh_configs]
    return document

  def _get_options_product(self) -> list[ckptbench.BenchmarkOptions]:
    """The valid combinations of the options' list values: ckptbench's sweep of them (an empty list sweeps nothing)."""
    points = _points(self.suite_document())
    for point in points:
      if point.invalid_reason is not None:
        logging.info("Skipping invalid option combination: %s", point.options)
    return [point.options for point in points if point.invalid_reason is None]

  def _get_meshes(self, skip_incompatible_mesh_configs: bool) -> list[jax.sharding.Mesh]:
    """The meshes of `mesh_configs` (`device_mesh.create_mesh`: ckptbench's `build_mesh`); one that
    cannot be built is skipped with a warning, or a ValueError, as is finding none."""
    meshes = []
    for mesh_config in self._mesh_configs or ():
      try:
        meshes.append(device_mesh.create_mesh(mesh_config))
      except ValueError as e:
        if not skip_incompatible_mesh_configs:
          raise ValueError(f"Failed to create mesh with config {mesh_config}: {e}") from e
        logging.warning("Failed to create mesh with config %s: %s", mesh_config, e)
    if not meshes:
      raise ValueError("No compatible meshes found.")
    return meshes

  def generate_benchmark_name(self, option: Any, mesh: Any, checkpoint_config: Any) -> str:
    """Orbax's stable name: the class and a hash of the options, mesh and checkpoint config."""
    long_name = f"{type(self).__name__}-{option!r}-{mesh!r}-{checkpoint_config!r}"
    return f"{type(self).__name__}_{hashlib.md5(long_name.encode()).hexdigest()[:12]}"

  def generate(self, skip_incompatible_mesh_configs: bool = True) -> list["Benchmark"]:
    """Orbax's `Benchmark` objects: one per valid option combination, mesh and checkpoint config
    (ValueError without options, or when no mesh fits)."""
    if self._options is None:
      raise ValueError(f"{type(self).__name__} was built without options: give options= to generate()")
    meshes = [None] if self._mesh_configs is None else self._get_meshes(skip_incompatible_mesh_configs)
    return [
        Benchmark(
            test_fn=self.test_fn, checkpoint_config=checkpoint_config, options=option,
            name=self.generate_benchmark_name(option, mesh, checkpoint_config), output_dir=self._output_dir,
            mesh=mesh, local_directory=self._local_directory,
        )  # fmt: skip
        for option in self._get_options_product()
        for mesh in meshes
        for checkpoint_config in self._checkpoint_configs
    ]


@dataclasses.dataclass(eq=False)
class Benchmark:
  """One of Orbax's runnable benchmarks; `run()` runs its test_fn once in a fresh directory, as Orbax's
  does, for code that calls it by hand. Runs that ckptbench records go through a `TestSuite`."""

  test_fn: Callable[[TestContext], TestResult]
  checkpoint_config: Any
  options: ckptbench.BenchmarkOptions
  name: str
  output_dir: str | None = None
  mesh: jax.sharding.Mesh | None = None
  local_directory: str | None = None

  def _pytree(self) -> Any:
    if self.checkpoint_config.path is not None:
      return checkpoint_generation.load_checkpoint(self.checkpoint_config)
    if self.checkpoint_config.spec is not None:
      return checkpoint_generation.generate_checkpoint(self.checkpoint_config, mesh=self.mesh)
    return None

  def run(self, repeat_index: int | None = None) -> TestResult:
    """Runs the test_fn once; its result, with `error` set when it raised."""
    name = self.name if repeat_index is None else f"{self.name}_repeat_{repeat_index}"
    own_metrics = metric.Metrics(name=f"{name} Internal")
    with own_metrics.measure("sync_global_processes:benchmark:run", ["time"]):
      multihost.sync_global_processes("benchmark:run")
    path = directory_setup.setup_test_directory(self.name, self.output_dir, repeat_index)
    local_path = None if self.local_directory is None else epath.Path(self.local_directory) / name
    if local_path is not None and repeat_index is not None:
      local_path = local_path / f"repeat_{repeat_index}"
    with own_metrics.measure("sync_global_processes:benchmark:setup_test_directory", ["time"]):
      multihost.sync_global_processes("benchmark:setup_test_directory")
    try:
      context = TestContext(
          pytree=self._pytree(), path=path, options=self.options, mesh=self.mesh, repeat_index=repeat_index,
          local_path=local_path, output_dir=None if self.output_dir is None else epath.Path(self.output_dir),
          name=self.name, checkpoint_config=self.checkpoint_config,
      )  # fmt: skip
      with own_metrics.measure("sync_global_processes:benchmark:setup_pytree", ["time"]):
        multihost.sync_global_processes("benchmark:setup_pytree")
      result = self.test_fn(context)
      result.path, result.local_path = path, local_path
      if result.inventory is None and multihost.get_process_index() == 0:
        result.inventory = inventory.scan_checkpoint(path)
    except Exception as e:  # noqa: BLE001  (Orbax records any error of a run in its result)
      logging.error("Test function %r raised an exception: %s", name, e, exc_info=True)
      result = TestResult(metrics=metric.Metrics(), error=e, path=path, local_path=local_path)
    result.metrics.name = name
    result.metrics.report()
    own_metrics.report()
    return result


def _adapted(test_fn: Callable[[Any, TestContext], Any]) -> Callable[[Any, Any], ckptbench.TestResult]:
  """`test_fn` taking ckptbench's context and returning ckptbench's result."""

  @functools.wraps(test_fn)
  def adapted(self: Any, context: Any) -> Any:
    if isinstance(context, TestContext):  # a subclass calling super().test_fn, or a direct call
      return test_fn(self, context)
    _prepare_process(sys.modules.get(type(self).__module__))
    result = test_fn(self, TestContext.from_native(context))
    if isinstance(result, TestResult):
      return result.to_native()
    return result  # a ckptbench.TestResult, or a wrong type the runner names

  adapted._ckptbench_adapted = True  # type: ignore[attr-defined]
  return adapted


def _prepare_process(module: types.ModuleType | None) -> None:
  """What Orbax's runners set up before any test_fn: parsed absl flags, torch's process group."""
  from absl import flags

  if not flags.FLAGS.is_parsed():
    flags.FLAGS.mark_as_parsed()  # no command line to parse: every flag keeps its default
  if module is not None and _torch_modules(module, "torch.distributed"):
    ckptbench.torch_process_group()


class TestSuite:
  """Orbax's suite of generators, run by ckptbench's engine: each run of generators sharing checkpoint
  and mesh configs is one suite of their `suite_document()`s, swept, measured, recorded and compared
  with a baseline as `ckptbench run` does (into `output_dir`, else a temporary directory). Each timed
  run then goes to the `MetricsManager` (Orbax's report; TensorBoard in Orbax's layout)."""

  __test__: ClassVar[bool] = False  # not a pytest test class

  def __init__(self, name: str, benchmarks_generators: Sequence[BenchmarksGenerator], output_dir: str | None = None,
               skip_incompatible_mesh_configs: bool = True, num_repeats: int = 1, local_directory: str | None = None,
               remove_repeated_dir: bool = False, baseline_path: str | None = None,
               baseline_capture_path: str | None = None):  # fmt: skip
    self._name = name
    self._benchmarks_generators = list(benchmarks_generators)
    self._output_dir = output_dir
    self._skip_incompatible_mesh_configs = skip_incompatible_mesh_configs
    self._num_repeats = num_repeats
    self._local_directory = local_directory
    self._remove_repeated_dir = remove_repeated_dir
    self._baseline_path = baseline_path
    self._baseline_capture_path = baseline_capture_path
    tensorboard_dir = epath.Path(output_dir) / "tensorboard" if output_dir else None
    self._suite_metrics = metrics_manager.MetricsManager(name=name, num_repeats=num_repeats, tensorboard_dir=tensorboard_dir)

  def run(self) -> list[TestResult]:
    """Runs every generator's benchmarks through ckptbench's engine; every run's result, in order
    (ValueError for a mesh that does not fit when not skipping; CkptbenchError when the engine refuses)."""
    groups: list[list[dict[str, Any]]] = []
    for generator in self._benchmarks_generators:
      document = generator.suite_document()
      if all(point.invalid_reason for point in _points(document)):
        logging.warning("Generator %s produced no benchmarks.", type(generator).__name__)
      elif groups and _configs(groups[-1][0]) == _configs(document):
        groups[-1].append(document)
      else:
        groups.append([document])
    results: list[TestResult] = []
    for i, group in enumerate(groups):
      suite = _suite(group, self._name, self._suite_settings())
      for mesh_config in [] if self._skip_incompatible_mesh_configs else filter(None, suite.meshes):
        try:
          device_mesh.create_mesh(mesh_config)
        except ValueError as e:
          raise ValueError(f"Failed to create mesh with config {mesh_config}: {e}") from e
      with _engine_output_dir(self._output_dir, None if len(groups) == 1 else f"group_{i}") as out, _own_torch_group():
        outcome = ckptbench.run(suite, self._settings(out, _fresh_process_can_import(suite)))
      results += [self._record_result(r) for r in ckptbench.timed_runs(outcome.records) if r.host == 0]
    if not results:
      logging.warning("No benchmarks were run for this suite.")
    self._suite_metrics.generate_report()
    multihost.sync_global_processes("test_suite:run_end")
    return results

  def _suite_settings(self) -> dict[str, Any]:
    baselines = {"baseline_path": self._baseline_path, "baseline_capture_path": self._baseline_capture_path}
    return {"num_repeats": self._num_repeats, "num_warmups": 0, **{k: str(v) for k, v in baselines.items() if v}}

  def _settings(self, out: pathlib.Path, memory_pass: bool) -> ckptbench.RunSettings:
    """The engine's settings; host memory inline where a fresh process could not import a generator."""
    return ckptbench.RunSettings(
        output_dir=out, local_directory=None if self._local_directory is None else pathlib.Path(self._local_directory),
        remove_repeated_dir=self._remove_repeated_dir, overwrite=True, show_progress=False, distributed="off",
        write_views=False,  # TensorBoard in Orbax's layout comes from the MetricsManager
        host_memory=None if memory_pass else "inline",
    )  # fmt: skip

  def _record_result(self, record: ckptbench.RunRecord) -> TestResult:
    """One run's record as Orbax's result; the MetricsManager gets it too."""
    metrics = metric.Metrics(name=f"{record.benchmark}_repeat_{record.repeat}")
    for tag, entry in record.metrics.items():
      metrics.set(tag, entry.value, entry.unit)
    error = None if record.error is None else _recorded_exception(record.error)
    found = None if record.inventory is None else inventory.from_record(record.inventory)
    self._suite_metrics.add_result(
        record.benchmark, metrics, benchmark_options=record.options, checkpoint_config=record.checkpoint_config,
        error=error, inventory=found,
    )  # fmt: skip
    return TestResult(metrics=metrics, error=error, path=epath.Path(record.path), inventory=found)


def _plain(value: Any) -> Any:
  """Options or a config as a suite file writes them: mappings, lists, a dtype by its name."""
  if hasattr(value, "model_dump"):  # ckptbench's configs
    value = value.model_dump(exclude_none=True, exclude_defaults=True)
  if dataclasses.is_dataclass(value) and not isinstance(value, type):
    value = dataclasses.asdict(value)
  if isinstance(value, np.dtype) or (isinstance(value, type) and (
      issubclass(value, np.generic) or isinstance(getattr(value, "dtype", None), np.dtype))):  # `jnp.float32`
    return np.dtype(value).name
  if isinstance(value, dict):
    return {k: _plain(v) for k, v in value.items()}
  return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


def _configs(document: dict[str, Any]) -> tuple[Any, Any]:
  return document["checkpoint_configs"], document.get("mesh_configs")


def _suite(documents: list[dict[str, Any]], name: str, settings: dict[str, Any] | None = None) -> ckptbench.Suite:
  """The generators' documents (sharing their configs) as one suite, read by ckptbench's loader."""
  document = {"suite_name": name, **(settings or {}), **documents[0]}
  document["benchmarks"] = [entry for document in documents for entry in document["benchmarks"]]
  try:
    text = json.dumps(document)
  except TypeError as e:
    raise TypeError(f"TestSuite {name}: an option or config value a suite file cannot hold: {e}") from None
  return ckptbench.load_suite_text(text, file=f"<TestSuite {name}>")


def _points(document: dict[str, Any]) -> list[Any]:
  """ckptbench's sweep of a generator document's options (each point built and checked); none when an
  option is an empty list, which sweeps nothing in Orbax's framework (ckptbench's loader refuses it)."""
  entry = document["benchmarks"][0]
  if any(value == [] for value in entry["options"].values()):
    return []
  return list(_suite([{"checkpoint_configs": [{"spec": {}}], "benchmarks": [entry]}], "options").entries[0].points)


# Generator classes a suite cannot import by their own path (defined inside a function) are
# reached through this module, which the engine imports by name.
_LOCAL_GENERATORS = types.ModuleType(f"{__name__}_local_generators")


def _generator_path(cls: type) -> str:
  """An import path the engine resolves to `cls`."""
  if getattr(sys.modules.get(cls.__module__), cls.__qualname__, None) is cls:
    return f"{cls.__module__}.{cls.__qualname__}"
  sys.modules.setdefault(_LOCAL_GENERATORS.__name__, _LOCAL_GENERATORS)
  name = f"{cls.__name__}_{id(cls):x}"
  setattr(_LOCAL_GENERATORS, name, cls)
  return f"{_LOCAL_GENERATORS.__name__}.{name}"


def _fresh_process_can_import(suite: ckptbench.Suite) -> bool:
  """Whether a fresh process (the engine's memory pass) can import every generator of `suite`."""
  return not any(e.generator_path.startswith(f"{_LOCAL_GENERATORS.__name__}.") for e in suite.entries)


def _recorded_exception(error: ckptbench.ErrorRecord) -> Exception:
  """A recorded error as an exception: of its builtin type when it had one, else RuntimeError naming the type."""
  kind = getattr(builtins, error.type, None)
  if isinstance(kind, type) and issubclass(kind, Exception):
    return kind(error.message)
  return RuntimeError(f"{error.type}: {error.message}")


@contextlib.contextmanager
def _own_torch_group() -> Iterator[None]:
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
def _engine_output_dir(output_dir: str | None, sub: str | None) -> Iterator[pathlib.Path]:
  """The engine's OUT: `output_dir` (or its `sub` directory), else a temporary directory removed afterwards."""
  if output_dir is not None:
    yield pathlib.Path(output_dir) / sub if sub else pathlib.Path(output_dir)
    return
  with tempfile.TemporaryDirectory(prefix="ckptbench-testsuite-") as scratch:
    yield pathlib.Path(scratch)


# Calls that raise on a machine without a CUDA device (CPU-only torch included).
_NEEDS_CUDA = re.compile(r"\btorch\.cuda\.(set_device|synchronize|current_device|get_device_name)\(")


def _torch_modules(module: types.ModuleType, prefix: str = "torch") -> list[str]:
  """The modules named `prefix...` the module imported (`torch.distributed`: it uses torch's process group)."""
  return [v.__name__ for v in vars(module).values() if isinstance(v, types.ModuleType) and v.__name__.startswith(prefix)]


@functools.lru_cache(maxsize=None)
def _cuda_calls(module: types.ModuleType) -> tuple[str, ...]:
  try:
    source = inspect.getsource(module)
  except (OSError, TypeError):
    return ()
  return tuple(sorted({f"torch.cuda.{m.group(1)}" for m in _NEEDS_CUDA.finditer(source)}))


def _missing_hardware(module: types.ModuleType | None) -> str | None:
  """Why this machine cannot run the module (it imports torch and calls `torch.cuda.set_device` or
  another call that needs a device, and torch sees no CUDA device), or None."""
  if module is None or not _torch_modules(module) or not _cuda_calls(module):
    return None
  import torch

  if torch.cuda.is_available():
    return None
  return f"{module.__name__} calls {', '.join(_cuda_calls(module))}: needs a CUDA device; torch sees none on this machine"
