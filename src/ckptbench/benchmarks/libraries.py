"""`libraries`: the same sharded arrays saved and loaded by each library a user would pick.

`library` picks how the suite's checkpoint data (every leaf a sharded `jax.Array`)
is saved below the run path and loaded back into the same shardings:

- `orbax`: Orbax v1 `save` / `load`, as `save_restore` does (Orbax's defaults: OCDBT,
  zarr3, zstd compression).
- `tensorstore`: TensorStore directly, one zarr3 array per leaf with one chunk per
  shard, each process writing its own shards (`use_ocdbt: true` puts an OCDBT
  database under them): Orbax's own backend without Orbax.
- `array_serialization`: `jax.experimental.array_serialization`'s serializer
  (`async_serialize` / `async_deserialize` of every array, awaited together).
- `safetensors`: one `.safetensors` file per process holding its shards
  (`safetensors.numpy`, no torch), fsync'd; loaded back shard by shard.
- `plain`: the floor. Each shard's bytes written with `os.write` and fsync'd, one
  file per shard, all shards at once, and read back into buffers of their dtype: the least any
  library can cost on this storage (a suite's `floor:` names it; docs/verdicts.md).

Every load reads cold (`cold_cache`), every loaded array is compared with the
saved one bit for bit (`DataMismatchError` names the library), and the
checkpoint is removed once the run is recorded. Tags: `save`, `load`, `verify`;
`save_5_inventory/save_total_gb` and `load_5_inventory/load_total_gb` (Orbax
counts its own) give `4_throughput/save_total_gbps` and `load_total_gbps`. On
gs:// and s3:// run paths, each library writes where it can (TensorStore,
array_serialization and `plain` through ckptbench's object-store protocol on both;
Orbax on gs://) and is refused, with the reason, where it cannot.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax

import ckptbench
from ckptbench.benchmarks import _library_io as io

LIBRARIES = ("orbax", "tensorstore", "array_serialization", "safetensors", "plain")
_OCDBT_LIBRARIES = ("orbax", "tensorstore", "array_serialization")
_COMPRESSION_LIBRARIES = ("orbax", "tensorstore")
_GIB = float(1 << 30)


@functools.cache
def _import_problem(module: str) -> str | None:
  try:
    __import__(module)
  except ImportError as e:
    return f"{module} does not import ({e}): pip install 'ckptbench[safetensors]'"
  return None


@dataclasses.dataclass(frozen=True, kw_only=True)
class LibrariesOptions(ckptbench.BenchmarkOptions):
  """Options of `libraries` (a list sweeps).

  Attributes:
    library: orbax | tensorstore | array_serialization | safetensors | plain.
    use_ocdbt: an OCDBT database under the arrays (orbax, tensorstore,
      array_serialization); None: the library's default (Orbax's on, the others off).
    use_compression: zstd-compress the chunks (orbax, tensorstore); None: the
      library's default (Orbax's on, TensorStore's off).
    cold_cache: evict the checkpoint from the page cache before the load
      (`load_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
    verify: compare what was loaded with what was saved, bit for bit (fails the run if not).
  """

  library: str | list[str] = "orbax"
  use_ocdbt: bool | None | list[bool | None] = None
  use_compression: bool | None | list[bool | None] = None
  cold_cache: bool | list[bool] = True
  verify: bool = True

  def invalid_reason(self) -> str | None:
    if self.library not in LIBRARIES:
      return f"library must be one of {', '.join(LIBRARIES)}"
    if self.use_ocdbt is not None and self.library not in _OCDBT_LIBRARIES:
      return f"use_ocdbt applies to library {', '.join(_OCDBT_LIBRARIES)}, not {self.library}"
    if self.use_compression is not None and self.library not in _COMPRESSION_LIBRARIES:
      return f"use_compression applies to library {', '.join(_COMPRESSION_LIBRARIES)}, not {self.library}"
    return None

  def unsupported_reason(self) -> str | None:
    if self.library == "array_serialization":
      return io.array_serialization_problem()
    if self.library == "safetensors":
      return _import_problem("safetensors")
    if self.library == "orbax":
      return ckptbench.orbax_capabilities().missing_options(self.orbax_settings())
    return None

  def orbax_settings(self) -> dict[str, dict[str, object]]:
    """The Orbax v1 Context settings asked for; those left None keep Orbax's defaults."""
    saving = {k: v for k, v in (("use_ocdbt", self.use_ocdbt), ("use_compression", self.use_compression)) if v is not None}
    return {"saving": saving} if saving else {}


def _place_problem(library: str, root: Any, options: LibrariesOptions) -> str | None:
  """Why `library` cannot save to `root` as asked, or None."""
  location = str(root)
  if library == "orbax":
    return ckptbench.orbax_write_problem(location)
  if library == "safetensors" and "://" in location:
    return "safetensors writes local files only (safetensors.numpy.save_file)"
  if options.use_ocdbt and jax.process_count() > 1:
    return (
        f"use_ocdbt with {jax.process_count()} processes: one OCDBT database written by several"
        " processes needs TensorStore's coordinator, which this built-in does not start"
    )
  return None


def _leaves(pytree: Any) -> tuple[dict[str, jax.Array], Any]:
  """{"a/b": array} of every leaf, and the tree's structure; every leaf must be a jax.Array."""
  flat, treedef = jax.tree_util.tree_flatten_with_path(pytree)
  arrays = {}
  for path, leaf in flat:
    key = "/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path)
    if not isinstance(leaf, jax.Array):
      raise ckptbench.CkptbenchError(
          f"libraries saves sharded jax.Arrays only; leaf {key!r} is a {type(leaf).__name__}"
          " (give checkpoint_config.spec arrays only)"
      )
    arrays[key] = leaf
  return arrays, treedef


def _save_and_load(library: str, root: Any, arrays: dict[str, jax.Array], options: LibrariesOptions,
                   metrics: ckptbench.Metrics, context: ckptbench.TestContext) -> dict[str, jax.Array]:  # fmt: skip
  """Times the save and the (cold) load of `arrays` through `library`; returns what was loaded."""
  targets = {k: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding) for k, a in arrays.items()}
  ocdbt, compression = bool(options.use_ocdbt), bool(options.use_compression)
  save, load = {
      "tensorstore": (functools.partial(io.save_tensorstore, use_ocdbt=ocdbt, use_compression=compression),
                      functools.partial(io.load_tensorstore, use_ocdbt=ocdbt, use_compression=compression)),
      "array_serialization": (functools.partial(io.save_array_serialization, use_ocdbt=ocdbt),
                              functools.partial(io.load_array_serialization, use_ocdbt=ocdbt)),
      "safetensors": (io.save_safetensors, io.load_safetensors),
      "plain": (io.save_plain, io.load_plain),
  }[library]  # fmt: skip
  with context.trace("save"), metrics.measure("save"):
    save(root, arrays)
    io.barrier("ckptbench-libraries-saved")  # a checkpoint is saved once every process's part is
  gib = io.saved_bytes(arrays) / _GIB
  metrics.record("save", "5_inventory/save_total_gb", gib, "GiB")
  ckptbench.evict_for_load(root, metrics, "load", options.cold_cache)
  with context.trace("load"), metrics.measure("load"):
    loaded = load(root, targets)
    jax.block_until_ready(loaded)
  metrics.record("load", "5_inventory/load_total_gb", gib, "GiB")
  return loaded


def _orbax_save_and_load(root: Any, pytree: Any, options: LibrariesOptions, metrics: ckptbench.Metrics,
                         context: ckptbench.TestContext) -> Any:  # fmt: skip
  """Orbax v1 `save` / `load` (Orbax records its bytes and phases through jax.monitoring)."""
  orbax = ckptbench.orbax_v1_io()
  with ckptbench.orbax_v1_context(options.orbax_settings()):
    with context.trace("save"), metrics.measure("save"):
      orbax.save(root, pytree)
    ckptbench.evict_for_load(root, metrics, "load", options.cold_cache)
    with context.trace("load"), metrics.measure("load"), ckptbench.reading_checkpoint(root):
      return orbax.load(root, ckptbench.abstract_pytree(pytree))


@ckptbench.benchmark_options(LibrariesOptions)
class LibrariesBenchmark(ckptbench.BenchmarksGenerator):
  """Saves and loads the suite's sharded arrays with one library; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="libraries",
      measures="the same sharded arrays through Orbax, TensorStore, JAX's array_serialization, safetensors and plain fsync'd files (the floor), in one table",
      example="libraries.yaml",
      saves_with=("orbax", "safetensors", "tensorstore"),
      cold_load="load",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: LibrariesOptions = context.options
    if context.pytree is None:
      raise ckptbench.CkptbenchError("libraries needs checkpoint data: give checkpoint_config.spec or preset")
    library = options.library
    root = context.path / library
    problem = _place_problem(library, root, options)
    if problem:
      raise ckptbench.CkptbenchError(f"libraries library={library}: {problem}")
    arrays, treedef = _leaves(context.pytree)
    metrics = ckptbench.Metrics()
    if library == "orbax":
      loaded = _orbax_save_and_load(root, context.pytree, options, metrics, context)
    else:
      by_key = _save_and_load(library, root, arrays, options, metrics, context)
      loaded = jax.tree_util.tree_unflatten(treedef, [by_key[k] for k in arrays])
    if options.verify:
      with metrics.measure("verify", ["time"]):
        try:
          ckptbench.verify_pytree(context.pytree, loaded)
        except ckptbench.DataMismatchError as e:
          raise ckptbench.DataMismatchError(f"libraries library={library}: {e}") from None
    del loaded
    return ckptbench.TestResult(metrics=metrics)
