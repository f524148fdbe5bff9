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
import logging
import sys
import types
from typing import Any, Callable, ClassVar, Sequence

from etils import epath

import ckptbench
from ckptbench.compat.orbax.core import _hardware

_log = logging.getLogger(__name__)

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

  The sweep, meshes, checkpoint data and directories come from the suite, as
  with every ckptbench generator; the constructor takes Orbax's arguments so
  code that builds a generator by hand still works, and ckptbench builds it
  with none.
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
