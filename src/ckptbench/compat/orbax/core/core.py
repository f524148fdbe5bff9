"""Orbax's `core.core` on ckptbench: options, the generator base, the test context and result.

The options and the decorator are ckptbench's (the options class gains Orbax's
`from_dict`). The generator base wraps every `test_fn` a subclass defines, so
the code inside sees Orbax's objects and ckptbench's runner sees its own:

- the context is Orbax's shape: a mutable dataclass (`context.pytree = ...`
  is allowed), `path`/`local_path`/`output_dir` as `etils.epath.Path`, and
  `trace_path` returning where ckptbench keeps the run's profiler traces;
- the returned `TestResult` (Orbax's fields: `error`, `local_path`, an
  inventory object) becomes a `ckptbench.TestResult`; a result carrying an
  `error` fails the run with that error, as Orbax's runner reports it;
- before the first call, absl's flags are marked parsed (Orbax's runner parses
  the command line with absl; ckptbench does not, so every flag keeps its
  default) and, when the module uses `torch.distributed`, the gloo process
  group spanning ckptbench's processes is set up, as Orbax's PyTorch runner does.

A module that needs hardware this machine lacks (a CUDA device for
`torch.cuda.set_device`) is recorded as unsupported with the reason
(`BenchmarkOptions.unsupported_reason`), not run.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import pathlib
import sys
import types
from typing import Any, Callable, ClassVar, Sequence

import jax
import yaml
from absl import logging
from etils import epath

import ckptbench
from ckptbench.compat.orbax.core import (
    _engine_suite,
    _hardware,
    checkpoint_generation,
    device_mesh,
    directory_setup,
    inventory,
    metric,
    metrics_manager,
    multihost,
)

benchmark_options = ckptbench.benchmark_options


@dataclasses.dataclass(frozen=True, kw_only=True)
class BenchmarkOptions(ckptbench.BenchmarkOptions):
  """ckptbench's options base with Orbax's `from_dict`.

  A subclass may override `from_dict` to build typed fields (dataclasses) from
  the suite's plain values; ckptbench's loader calls it with the YAML options.
  """

  @classmethod
  def from_dict(cls, options_dict: dict[str, Any]) -> "BenchmarkOptions":
    """The options from a suite's `options:` mapping (a list value sweeps)."""
    return cls(**options_dict)

  def unsupported_reason(self) -> str | None:
    return _hardware.missing_hardware(sys.modules.get(type(self).__module__))


@dataclasses.dataclass
class TestContext:
  """What a ported `test_fn` receives: Orbax's `TestContext`, built from ckptbench's.

  Attributes:
    pytree: the run's checkpoint data; intact at the start of every run (data a
      previous run deleted or donated is built again). Assignable.
    path: the run's fresh directory.
    options: this sweep point's options.
    mesh: the run's mesh, or None.
    repeat_index: which repeat this is (0-based).
    local_path: the host-local scratch directory (`--local_directory`), or None.
    output_dir: the run's OUT directory.
    name: the benchmark's readable name.
    key: ckptbench's stable benchmark key.
    checkpoint_config: the suite's checkpoint config for this run.
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
    trace_root = context.trace_root
    return cls(
        pytree=context.pytree,
        path=epath.Path(context.path),
        options=context.options,
        mesh=context.mesh,
        repeat_index=context.repeat_index,
        local_path=None if context.local_path is None else epath.Path(context.local_path),
        output_dir=None if trace_root is None else epath.Path(trace_root).parent,
        name=context.name,
        key=context.key,
        checkpoint_config=context.checkpoint_config,
        native=context,
    )

  def trace_path(self, operation: str) -> epath.Path | None:
    """Where to write the profiler trace of `operation`, or None when not tracing.

    Under ckptbench's runner this is ckptbench's trace directory
    (OUT/tensorboard/<bench>__<op>, created); a context built by hand follows
    Orbax's rule (`<output_dir>/tensorboard/<name>__<op>`, first repeat only
    unless `trace_every_repeat`).
    """
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
  """What a ported `test_fn` returns: Orbax's `TestResult` (plus ckptbench's `notes`).

  Attributes:
    metrics: what the run measured (a `ckptbench.Metrics`).
    error: an exception the run caught; the run is recorded as failed with it.
    path: the run directory (the framework's to fill in).
    local_path: the host-local directory (the framework's to fill in).
    inventory: the checkpoint the run used, when not the run directory: an
      inventory from `core.inventory.scan_checkpoint` (or Orbax's own).
    notes: what a reader of the record must know to trust its figures.
  """

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

  Under ckptbench's runner (a suite file, or a `TestSuite`) the sweep, meshes,
  checkpoint data and directories come from the suite, as with every ckptbench
  generator, and ckptbench builds the generator with no arguments. Built by
  hand with Orbax's arguments, it checks them as Orbax does, and `generate()`
  gives Orbax's `Benchmark` objects: one per valid option combination, mesh
  and checkpoint config.
  """

  options_class: ClassVar[type[ckptbench.BenchmarkOptions]] = BenchmarkOptions

  def __init__(
      self,
      checkpoint_configs: Sequence[Any] = (),
      options: ckptbench.BenchmarkOptions | None = None,
      output_dir: str | None = None,
      mesh_configs: Sequence[Any] | None = None,
      local_directory: str | None = None,
  ):
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

  def _get_options_product(self) -> list[ckptbench.BenchmarkOptions]:
    """Every combination of the options' list values (Orbax's sweep: only a `list` sweeps), valid ones only."""
    fields = [f.name for f in dataclasses.fields(self._options)]
    values = [getattr(self._options, f) for f in fields]
    combinations = itertools.product(*[v if isinstance(v, list) else [v] for v in values])
    valid = []
    for combination in combinations:
      option = type(self._options)(**dict(zip(fields, combination)))
      if option.is_valid():
        valid.append(option)
      else:
        logging.info("Skipping invalid option combination: %s", option)
    return valid

  def _get_meshes(self, skip_incompatible_mesh_configs: bool) -> list[jax.sharding.Mesh]:
    """The meshes of `mesh_configs` this machine can build; one it cannot is skipped with a warning, or raises.

    Raises:
      ValueError: a mesh cannot be built and `skip_incompatible_mesh_configs`
        is False, or none can.
    """
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
    """Orbax's `Benchmark` objects: one per valid option combination, mesh and checkpoint config.

    Raises:
      ValueError: when the generator was built without options (ckptbench's
        runner builds it so; a suite gives the options), or no mesh fits.
    """
    if self._options is None:
      raise ValueError(f"{type(self).__name__} was built without options: give options= to generate()")
    meshes = [None] if self._mesh_configs is None else self._get_meshes(skip_incompatible_mesh_configs)
    return [
        Benchmark(
            test_fn=self.test_fn,
            checkpoint_config=checkpoint_config,
            options=option,
            name=self.generate_benchmark_name(option, mesh, checkpoint_config),
            output_dir=self._output_dir,
            mesh=mesh,
            local_directory=self._local_directory,
        )
        for option, mesh, checkpoint_config in itertools.product(
            self._get_options_product(), meshes, self._checkpoint_configs
        )
    ]


class Benchmark:
  """One runnable benchmark of Orbax's: a test_fn with its options, mesh and checkpoint config.

  `run()` runs it once, as Orbax's `Benchmark.run` does: a fresh directory
  (`directory_setup`), the checkpoint data (`checkpoint_generation`), the
  test_fn with an Orbax context; an exception becomes the result's `error`.
  Runs that ckptbench records go through a `TestSuite` (ckptbench's engine).
  """

  def __init__(
      self,
      test_fn: Callable[[TestContext], TestResult],
      checkpoint_config: Any,
      options: ckptbench.BenchmarkOptions,
      name: str,
      output_dir: str | None = None,
      mesh: jax.sharding.Mesh | None = None,
      local_directory: str | None = None,
  ):
    self.test_fn = test_fn
    self.checkpoint_config = checkpoint_config
    self.options = options
    self.name = name
    self.output_dir = output_dir
    self.mesh = mesh
    self.local_directory = local_directory

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
    local_path = None
    if self.local_directory is not None:
      local_path = epath.Path(self.local_directory) / name
      if repeat_index is not None:
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
  if module is not None and _hardware.uses_torch_distributed(module):
    ckptbench.torch_process_group()


class TestSuite:
  """Orbax's suite of generators, run by ckptbench's engine (`ckptbench.run`).

  `run()` hands the generators, their options, checkpoint and mesh configs
  and the repeats to ckptbench's engine as one suite (one per generator when
  their checkpoint or mesh configs differ), so the runs are measured,
  recorded (OUT/results.jsonl, summary.json) and compared with a baseline as
  `ckptbench run` does. Each run then goes to the suite's `MetricsManager`,
  which logs Orbax's report and, with an `output_dir`, writes TensorBoard in
  Orbax's layout. Without an `output_dir` the engine writes into a temporary
  directory, removed afterwards.
  """

  __test__: ClassVar[bool] = False  # not a pytest test class

  def __init__(
      self,
      name: str,
      benchmarks_generators: Sequence[BenchmarksGenerator],
      output_dir: str | None = None,
      skip_incompatible_mesh_configs: bool = True,
      num_repeats: int = 1,
      local_directory: str | None = None,
      remove_repeated_dir: bool = False,
      baseline_path: str | None = None,
      baseline_capture_path: str | None = None,
  ):
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
    self._suite_metrics = metrics_manager.MetricsManager(
        name=name, num_repeats=num_repeats, tensorboard_dir=tensorboard_dir
    )

  def run(self) -> list[TestResult]:
    """Runs every generator's benchmarks through ckptbench's engine; every run's result, in order.

    Raises:
      ValueError: a mesh does not fit and `skip_incompatible_mesh_configs` is False.
      CkptbenchError: the engine refused the suite (a bad option, nothing to run).
    """
    results: list[TestResult] = []
    generators = []
    for generator in self._benchmarks_generators:
      if generator._options is not None and not generator._get_options_product():
        logging.warning("Generator %s produced no benchmarks.", type(generator).__name__)
      else:
        generators.append(generator)
    groups = _engine_suite.suite_groups(generators)
    for i, group in enumerate(groups):
      for generator in group:
        if generator._mesh_configs and not self._skip_incompatible_mesh_configs:
          generator._get_meshes(skip_incompatible_mesh_configs=False)
      sub = None if len(groups) == 1 else f"group_{i}"
      suite = self._suite(group)
      with _engine_suite.engine_output_dir(self._output_dir, sub) as out, _engine_suite.own_torch_group():
        outcome = ckptbench.run(suite, self._settings(out, _engine_suite.fresh_process_can_import(suite)))
      timed = [r for r in outcome.records if r.kind is ckptbench.RecordKind.TIMED and r.host == 0]
      results += [self._record_result(r) for r in timed]
    if not results:
      logging.warning("No benchmarks were run for this suite.")
    self._suite_metrics.generate_report()
    multihost.sync_global_processes("test_suite:run_end")
    return results

  def _suite(self, generators: list[BenchmarksGenerator]) -> ckptbench.Suite:
    first = generators[0]
    document: dict[str, Any] = {
        "suite_name": self._name,
        "num_repeats": self._num_repeats,
        "num_warmups": 0,
        "checkpoint_configs": [_engine_suite.plain_config(c) for c in first._checkpoint_configs] or [{"spec": {}}],
        "benchmarks": [
            {"generator": _engine_suite.generator_path(type(g)), "options": _engine_suite.options_mapping(g._options)}
            for g in generators
        ],
    }
    if first._mesh_configs:
      document["mesh_configs"] = [_engine_suite.plain_config(m) for m in first._mesh_configs]
    for key, value in (("baseline_path", self._baseline_path), ("baseline_capture_path", self._baseline_capture_path)):
      if value:
        document[key] = str(value)
    return ckptbench.load_suite_text(yaml.safe_dump(document, sort_keys=False))

  def _settings(self, out: pathlib.Path, memory_pass: bool) -> ckptbench.RunSettings:
    """The engine's settings; host memory inline where a fresh process could not import a generator."""
    return ckptbench.RunSettings(
        output_dir=out,
        local_directory=None if self._local_directory is None else pathlib.Path(self._local_directory),
        remove_repeated_dir=self._remove_repeated_dir,
        overwrite=True,
        show_progress=False,
        write_views=False,  # TensorBoard in Orbax's layout comes from the MetricsManager
        distributed="off",
        host_memory=None if memory_pass else "inline",
    )

  def _record_result(self, record: Any) -> TestResult:
    """One run's record as Orbax's result; the MetricsManager gets it too."""
    metrics = metric.Metrics(name=f"{record.benchmark}_repeat_{record.repeat}")
    for tag, entry in record.metrics.items():
      metrics.set(tag, entry.value, entry.unit)
    error = None if record.error is None else _engine_suite.recorded_exception(record.error)
    found = None if record.inventory is None else inventory.from_record(record.inventory)
    result = TestResult(metrics=metrics, error=error, path=epath.Path(record.path), inventory=found)
    self._suite_metrics.add_result(
        record.benchmark, metrics, benchmark_options=record.options, checkpoint_config=record.checkpoint_config,
        error=error, inventory=found,
    )  # fmt: skip
    return result
