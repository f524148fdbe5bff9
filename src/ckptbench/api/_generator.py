"""What a benchmark class sees (TestContext) and returns (TestResult)."""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import pathlib
import re
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, TypeVar

from ckptbench.api._options import BenchmarkOptions

if TYPE_CHECKING:  # an annotation only: loading the metrics' tables with the base class would cost `plan`
  from ckptbench.api._builtin import Builtin
  from ckptbench.api._metrics import Metrics

_G = TypeVar("_G", bound=type)

_UNSAFE_PATH_CHARS = re.compile(r"[^A-Za-z0-9_.=,+-]+")


def safe_path_component(text: str, max_len: int = 120) -> str:
  """A file-name-safe form of `text`: no separators, no '..', never empty."""
  cleaned = _UNSAFE_PATH_CHARS.sub("_", text).strip("._") or "_"
  cleaned = cleaned.replace("..", "_")
  return cleaned[:max_len]


@dataclasses.dataclass(frozen=True)
class TestContext:
  """The input of `test_fn`.

  Attributes:
    pytree: the checkpoint data (generated from `spec`, built from a preset, or
      loaded from `path`); None when the suite gives no checkpoint.
    path: a fresh, empty directory for this run (an `etils.epath.Path` on a gs://
      or s3:// checkpoint root, which Orbax, gcsfs and s3fs accept).
    options: the options of this sweep point.
    mesh: the `jax.sharding.Mesh` of this run, or None when no mesh is set.
    repeat_index: which repeat this is (0-based).
    local_path: a host-local scratch directory, when `--local_directory` is set.
    name: the readable benchmark name.
    key: the short stable benchmark key.
    checkpoint_config: the parsed checkpoint config (see ckptbench.config).
    trace_root: where profiler traces go (OUT/tensorboard); None disables them.
    host_memory_absent: why this run measures no host memory (the `rss` collector is held: a memory
      pass measures it after the timed runs, or `host_memory off`), for a note on the figures a test_fn
      derives from host memory, which it then leaves out; None where this run measures it.
    warmup: True in a warm-up run (`num_warmups`, the first run on each mesh and data, the memory
      pass's first run of each generator, mesh and data), recorded but never counted. A warm-up is there to take
      first-run effects (compilation, lazy initialisation, allocator and thread-pool start-up) out of
      the counted runs, so a test_fn that repeats one operation many times may do a smaller version
      of its work here (one checkpoint instead of ten), as long as it goes through the same code
      paths with the same data and options and the counted runs read the same after it; host
      memory may need the whole work (see `host_memory_absent`).
  """

  __test__: ClassVar[bool] = False  # not a pytest test class

  pytree: Any
  path: pathlib.Path
  options: BenchmarkOptions
  mesh: Any = None
  repeat_index: int = 0
  local_path: pathlib.Path | None = None
  name: str = ""
  key: str = ""
  checkpoint_config: Any = None
  trace_root: pathlib.Path | None = None
  host_memory_absent: str | None = None
  warmup: bool = False

  def trace_path(self, operation: str) -> pathlib.Path | None:
    """The profiler-trace directory for `operation`, or None when not tracing.

    Traces are taken when `options.enable_trace` is set, on the first repeat
    only unless `options.trace_every_repeat`. The directory lies under
    OUT/tensorboard/, so TensorBoard's Profile tab shows it.
    """
    if self.trace_root is None or not getattr(self.options, "enable_trace", False):
      return None
    if self.repeat_index != 0 and not getattr(self.options, "trace_every_repeat", False):
      return None
    # `<bench>__<op>`, with `<bench>` the same directory name as the benchmark's scalars.
    run = f"{safe_path_component(self.name)}__{safe_path_component(operation)}"
    if getattr(self.options, "trace_every_repeat", False):
      run += f"__repeat_{self.repeat_index}"
    path = self.trace_root / run
    path.mkdir(parents=True, exist_ok=True)
    return path

  @contextlib.contextmanager
  def trace(self, operation: str) -> Iterator[pathlib.Path | None]:
    """Runs the block under `jax.profiler.trace` when `trace_path(operation)` is set."""
    path = self.trace_path(operation)
    if path is None:
      yield None
      return
    import jax  # deferred: only tracing runs need the profiler

    with jax.profiler.trace(str(path)):
      yield path


@dataclasses.dataclass
class TestResult:
  """The output of `test_fn`.

  Attributes:
    metrics: what the test measured.
    inventory: optional description of the checkpoint the test used, when it is
      not the run directory (a load benchmark reports what it loaded): a dict
      from `scan_inventory(path).to_dict()`, the inventory itself, or Orbax's
      `CheckpointInventory`. Leave it None and the framework fills it in from a
      scan of the run directory.
    notes: what the reader of the record must know to trust its figures, for
      example what was emulated because this machine lacks the hardware
      (slices emulated as processes); written to the record as `notes`.
    artifacts: files the run wrote for its reader besides the checkpoint (names
      relative to the run directory, e.g. "timeline.json"); they stay in OUT when
      the run's checkpoint is removed after it (the default; see keep_checkpoints).
    path: the run directory; filled in by the framework.
  """

  __test__: ClassVar[bool] = False

  metrics: Metrics
  inventory: Any = None
  notes: tuple[str, ...] = ()
  artifacts: tuple[str, ...] = ()
  path: pathlib.Path | None = None


class BenchmarksGenerator(abc.ABC):
  """Base class of a benchmark: bind options with `@benchmark_options` and write `test_fn`.

  Example:
    >>> @benchmark_options(MyOptions)
    ... class MyBenchmark(BenchmarksGenerator):
    ...   def test_fn(self, context):
    ...     metrics = Metrics()
    ...     with metrics.measure("save"):
    ...       ocp.save(context.path / "ckpt", context.pytree)
    ...     return TestResult(metrics=metrics)
  """

  options_class: ClassVar[type[BenchmarkOptions]] = BenchmarkOptions
  # Capabilities of the installed Orbax this benchmark needs: names of boolean fields
  # of `OrbaxCapabilities` (e.g. "v1_save_load"). Where one is missing, the benchmark
  # is recorded as unsupported with the reason instead of being run.
  orbax_requires: ClassVar[tuple[str, ...]] = ()
  # ckptbench's own built-ins declare their catalogue entry here (`ckptbench.Builtin`).
  builtin: ClassVar[Builtin | None] = None

  @abc.abstractmethod
  def test_fn(self, context: TestContext) -> TestResult:
    """Runs the measured code once; called for every sweep point and repeat."""


def benchmark_options(options_cls: type[BenchmarkOptions]):
  """Class decorator binding an options dataclass to a `BenchmarksGenerator`.

  Example:
    >>> @benchmark_options(MyOptions)
    ... class MyBenchmark(BenchmarksGenerator):
    ...   def test_fn(self, context): ...

  Raises:
    TypeError: when `options_cls` is not a dataclass subclass of
      `BenchmarkOptions`, or the decorated object is not a generator class.
  """
  if not (isinstance(options_cls, type) and issubclass(options_cls, BenchmarkOptions)):
    raise TypeError(
        "@benchmark_options expects a subclass of ckptbench.BenchmarkOptions, got"
        f" {options_cls!r}; did you forget to pass the options class, as in"
        " @benchmark_options(MyOptions)?"
    )
  if not dataclasses.is_dataclass(options_cls):
    raise TypeError(
        f"@benchmark_options: {options_cls.__name__} must be a dataclass; decorate"
        " it with @dataclasses.dataclass(frozen=True)."
    )

  def bind(generator_cls: _G) -> _G:
    if not (isinstance(generator_cls, type) and issubclass(generator_cls, BenchmarksGenerator)):
      raise TypeError(
          "@benchmark_options must decorate a subclass of"
          f" ckptbench.BenchmarksGenerator, got {generator_cls!r}"
      )
    generator_cls.options_class = options_cls
    return generator_cls

  return bind
