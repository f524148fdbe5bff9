"""`pytorch`: the same tensors saved and loaded by PyTorch's checkpoint libraries and by Orbax.

The suite's checkpoint data becomes a flat dict of CPU `torch.Tensor`s
(`"params/layer_0/w"`), and `library` picks how it is saved and loaded:

- `torch_save`: `torch.save` / `torch.load(weights_only=True)`, one file.
- `safetensors`: `safetensors.torch.save_file` / `load(file bytes)`, one file, read eagerly.
- `safetensors_mmap`: the same file loaded with `load_file`, which maps it: its
  `load` ends before the data is read (the pages are read during `verify`).
- `dcp`: `torch.distributed.checkpoint.save` / `load`, one rank per process over gloo
  (alone, or every process of `ckptbench launch -n N`, each saving its DTensor shards).
- `dcp_async`: `torch.distributed.checkpoint.async_save`, then `load`.
  Both also write to gs:// and s3:// run paths, through DCP's fsspec writer and reader.
- `orbax`: tensors converted to JAX arrays, `orbax.checkpoint.v1.save` / `load`, converted back.
- `torchax`: tensors moved to torchax's JAX-backed device, saved and loaded with Orbax
  (needs the `torchax` extra's torch 2.12.1; skipped with the reason when torchax does not
  import, as beside torch 2.13). Once torchax is imported, `dcp` in the same process saves
  without copy-ahead (`save_per_thread_copy_ahead_mb` above 0 is refused) and says so in a note.

One metric vocabulary for all: `save` (from tensors in memory to files on disk,
conversions included), `save_blocking` (the part an async save blocks for;
equal to the save for synchronous libraries), `load` (from files to tensors in
memory) and `verify`; `save_5_inventory/save_total_gb` (the tensor bytes this
process saved; Orbax's own count for `orbax` and `torchax`), from which
`save_4_throughput/save_total_gbps` and its share of the disk's write bandwidth
(`..._of_disk_write`) are derived. Sweep `library: [...]` to compare them in one table.
Every load is checked bit for bit against the saved tensors (with several
ranks, each rank its own shards).

Orbax's in-tree `pytorch_checkpoint_benchmark.PyTorchCheckpointBenchmark`
resolves to `PyTorchCheckpointBenchmark` below: DCP with that benchmark's
option names and defaults (`enable_async_save`, `save_thread_count`,
`save_per_thread_copy_ahead_mb`, `cache_staged_state_dict`,
`single_file_per_rank`, `reference_checkpoint_path`: a directory of
`.safetensors` files whose tensors are saved instead of the suite's data).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import numpy as np

import ckptbench
from ckptbench.benchmarks import _dcp

_LOCAL_FILE_LIBRARIES = ("torch_save", "safetensors", "safetensors_mmap")
LIBRARIES = ("torch_save", "safetensors", "safetensors_mmap", "dcp", "dcp_async", "orbax", "torchax")


@functools.cache
def _import_problem(module: str) -> str | None:
  try:
    __import__(module)
  except Exception as e:  # torchax fails with errors other than ImportError
    return f"{module} does not import: {type(e).__name__}: {e}"
  return None


_DCP_KNOBS = (
    "enable_async_save", "save_thread_count", "save_per_thread_copy_ahead_mb",
    "cache_staged_state_dict", "single_file_per_rank",
)  # fmt: skip


@dataclasses.dataclass(frozen=True, kw_only=True)
class PyTorchOptions(ckptbench.BenchmarkOptions):
  """Options of `pytorch` (a list sweeps).

  Attributes:
    library: torch_save | safetensors | safetensors_mmap | dcp | dcp_async | orbax | torchax.
    reference_checkpoint_path: a directory of `.safetensors` files to save and
      load instead of the suite's checkpoint data.
    enable_async_save: with `dcp`, save with async_save (as `dcp_async`).
    save_thread_count: DCP writer threads per rank (None: torch's 1).
    save_per_thread_copy_ahead_mb: bytes each DCP writer thread copies ahead, MiB
      (None: torch's 10 MB).
    cache_staged_state_dict: DCP async saves keep the staged CPU copy for the next save.
    single_file_per_rank: DCP writes one file per rank (else one per tensor).
    enable_gcs_connector: Google's DCP connector for GCS; not available here, so invalid.
    metric_tracemalloc_enabled: Orbax's switch for the tracemalloc collector;
      only false is accepted (this benchmark measures with the default collectors).
    cold_cache: evict the saved files from the page cache before the load
      (`load_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  library: str | list[str] = "torch_save"
  reference_checkpoint_path: str | None = None
  enable_async_save: bool | None | list[bool | None] = None
  save_thread_count: int | None | list[int | None] = None
  save_per_thread_copy_ahead_mb: int | None | list[int | None] = None
  cache_staged_state_dict: bool | None | list[bool | None] = None
  single_file_per_rank: bool | None | list[bool | None] = None
  enable_gcs_connector: bool | list[bool] = False
  metric_tracemalloc_enabled: bool = False
  cold_cache: bool | list[bool] = True

  @property
  def effective_library(self) -> str:
    return "dcp_async" if self.library == "dcp" and self.enable_async_save else self.library

  def invalid_reason(self) -> str | None:
    if self.library not in LIBRARIES:
      return f"library must be one of {', '.join(LIBRARIES)}"
    if self.enable_gcs_connector:
      return "enable_gcs_connector needs Google's DCP connector for GCS, which ckptbench does not ship"
    if self.metric_tracemalloc_enabled:
      return "metric_tracemalloc_enabled: pytorch measures with the default collectors only"
    given = [k for k in _DCP_KNOBS if getattr(self, k) is not None]
    if given and not self.library.startswith("dcp"):
      return f"{', '.join(given)} apply to library dcp or dcp_async, not {self.library}"
    return None

  def unsupported_reason(self) -> str | None:
    # Asked only when the run starts, after JAX's flags are set: importing torchax opens JAX's devices.
    needed = {"safetensors": "safetensors", "safetensors_mmap": "safetensors", "torchax": "torchax"}.get(
        self.library, "torch"
    )
    return _import_problem("torch") or _import_problem(needed)


def _to_torch(array: Any):
  import torch

  host = np.asarray(array)
  if host.dtype.name == "bfloat16":  # numpy's bfloat16 (ml_dtypes) has no torch twin
    return torch.from_numpy(host.view(np.uint16).copy()).view(torch.bfloat16)
  return torch.from_numpy(host.copy())


def _to_numpy(tensor) -> np.ndarray:
  import torch

  tensor = tensor.detach().cpu().contiguous()
  if tensor.dtype == torch.bfloat16:
    return tensor.view(torch.uint16).numpy().view(jax.numpy.bfloat16)
  return tensor.numpy()


def _leaf_key(path) -> str:
  return "/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path)


def torch_tensors(pytree: Any) -> dict[str, Any]:
  """The arrays of `pytree` as CPU torch tensors keyed by their "a/b/c" path."""
  out = {}
  for path, leaf in jax.tree_util.tree_leaves_with_path(pytree):
    if isinstance(leaf, (jax.Array, np.ndarray)):
      out[_leaf_key(path)] = _to_torch(leaf)
  return out


def _verify(saved: dict[str, Any], loaded: dict[str, Any], library: str) -> None:
  expected = {k: _to_numpy(v) for k, v in saved.items()}
  try:
    ckptbench.verify_pytree(expected, {k: _to_numpy(v) for k, v in loaded.items()})
  except ckptbench.DataMismatchError as e:
    raise ckptbench.DataMismatchError(f"pytorch library={library}: {e}") from None


def _full_host_arrays(pytree: Any) -> Any:
  """Every array whole on this process (gathered from all processes under `launch`)."""
  if jax.process_count() == 1:
    return pytree
  from jax.experimental import multihost_utils

  return jax.tree.map(
      lambda x: np.asarray(multihost_utils.process_allgather(x, tiled=True)) if isinstance(x, jax.Array) else x,
      pytree,
  )


def reference_tensors(directory: str) -> dict[str, Any]:
  """The tensors of every `.safetensors` file in `directory`, by name."""
  import pathlib

  from safetensors.torch import load_file

  files = sorted(pathlib.Path(directory).glob("*.safetensors"))
  if not files:
    raise ckptbench.CkptbenchError(f"reference_checkpoint_path {directory} holds no .safetensors files")
  out: dict[str, Any] = {}
  for file in files:
    out.update(load_file(file))
  return out


def _save_load_torch(library: str, tensors: dict, path, metrics, context, cold: bool) -> dict:
  import torch

  if library == "torch_save":
    file = path / "model.pt"
    with metrics.measure("save"), metrics.measure("save_blocking"), context.trace("save"):
      torch.save(tensors, file)
    ckptbench.evict_for_load(file, metrics, "load", cold)
    with metrics.measure("load"), context.trace("load"):
      return torch.load(file, weights_only=True)
  if library.startswith("safetensors"):
    from safetensors.torch import load, load_file, save_file

    file = path / "model.safetensors"
    with metrics.measure("save"), metrics.measure("save_blocking"), context.trace("save"):
      save_file(tensors, file)
    ckptbench.evict_for_load(file, metrics, "load", cold)
    with metrics.measure("load"), context.trace("load"):
      if library == "safetensors_mmap":
        return load_file(file)  # maps the file: pages are read when first touched
      return load(file.read_bytes())
  raise AssertionError(f"not a torch file library: {library}")


def _save_load_dcp(library: str, tensors: dict, path, metrics, context, options) -> tuple[dict, dict]:
  """(what this rank saved, what it loaded back): its own parts of every tensor."""
  rank, world = ckptbench.torch_process_group()
  state = _dcp.distribute(tensors, rank, world)
  loaded = _dcp.save_and_load(state, str(path / "dcp"), options, library == "dcp_async", metrics, context)
  metrics.record("save", "9_other/ranks", world, "count")
  local = lambda d: {k: _dcp.local_part(v) for k, v in d.items()}  # noqa: E731
  return local(state), local(loaded)


def _save_load_orbax(library: str, tensors: dict, path, metrics, context, cold: bool) -> dict:
  from orbax.checkpoint import v1 as ocp

  directory = path / "orbax"
  if library == "torchax":
    import torchax
    from torchax import interop

    with metrics.measure("save"), metrics.measure("save_blocking"), context.trace("save"):
      with torchax.default_env():
        arrays = {k: interop.jax_view(v.to("jax")) for k, v in tensors.items()}
      ocp.save(directory, arrays)
    ckptbench.evict_for_load(directory, metrics, "load", cold)
    with metrics.measure("load"), context.trace("load"):
      restored = ocp.load(directory, ckptbench.abstract_pytree(arrays))
      with torchax.default_env():
        return {k: interop.torch_view(v).to("cpu") for k, v in restored.items()}
  with metrics.measure("save"), metrics.measure("save_blocking"), context.trace("save"):
    arrays = {k: jax.numpy.asarray(_to_numpy(v)) for k, v in tensors.items()}
    ocp.save(directory, arrays)
  ckptbench.evict_for_load(directory, metrics, "load", cold)
  with metrics.measure("load"), context.trace("load"):
    restored = ocp.load(directory, ckptbench.abstract_pytree(arrays))
    return {k: _to_torch(v) for k, v in restored.items()}


class DcpAsyncManager:
  """Async saves of a JAX training state with `torch.distributed.checkpoint.async_save`.

  The same interface as `checkpoint_manager.Manager`, so a training loop can
  put DCP beside Orbax's managers. A save converts the state to CPU torch
  tensors (the part the loop waits for, like Orbax's device-to-host copy),
  waits for the previous save to finish (as Orbax's managers do), then starts
  the write in the background; `durability` records when each save commits.
  """

  def __init__(self, directory, durability):
    import torch.distributed.checkpoint as dcp

    ckptbench.torch_process_group()
    self._dcp, self._directory, self.durability = dcp, directory, durability
    self._pending = None
    self._saved: list[int] = []

  def save(self, step: int, state: Any) -> None:
    self.durability.started(step)
    self.wait()
    tensors = torch_tensors(state)
    self._pending = self._dcp.async_save(tensors, checkpoint_id=str(self._directory / str(step)))
    self._pending.add_done_callback(lambda _: self.durability.committed(step))
    self._saved.append(step)

  def wait(self) -> None:
    if self._pending is not None:
      self._pending.result()
      self._pending = None

  def steps(self) -> list[int]:
    return list(self._saved)

  def restore(self, step: int, abstract: Any) -> Any:
    """Loads `step` back into arrays shaped and sharded like `abstract`."""
    leaves = {_leaf_key(path): leaf for path, leaf in jax.tree_util.tree_leaves_with_path(abstract)}
    loaded = {key: _to_torch(np.zeros(leaf.shape, leaf.dtype)) for key, leaf in leaves.items()}
    self._dcp.load(loaded, checkpoint_id=str(self._directory / str(step)))
    arrays = [jax.device_put(_to_numpy(loaded[key]), leaf.sharding) for key, leaf in leaves.items()]
    return jax.tree.unflatten(jax.tree.structure(abstract), arrays)

  def close(self) -> None:
    self.wait()


@ckptbench.benchmark_options(PyTorchOptions)
class PyTorchBenchmark(ckptbench.BenchmarksGenerator):
  """Saves and loads torch tensors with one library; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="pytorch",
      measures="the same tensors with `torch.save`, `torch.distributed.checkpoint` (sync/async), safetensors and Orbax, in one table",
      example="pytorch.yaml",
      saves_with=("orbax", "safetensors", "torch"),
      cold_load="load",
      extras=("torch",),
  )

  orbax_requires = ("v1_save_load",)  # v1.save/v1.load (0.12+)

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options = context.options
    if context.pytree is None and options.reference_checkpoint_path is None:
      raise ckptbench.CkptbenchError(
          "pytorch needs checkpoint data (checkpoint_config spec, preset or path) or reference_checkpoint_path"
      )
    problem = options.invalid_reason() or options.unsupported_reason()
    if problem:
      raise ckptbench.CkptbenchError(f"pytorch: {problem}")
    if "://" in str(context.path) and options.library in _LOCAL_FILE_LIBRARIES:
      raise ckptbench.CkptbenchError(
          f"pytorch library={options.library} writes local files only; on {str(context.path).split('://')[0]}://"
          " use dcp or dcp_async (through fsspec)"
      )
    if options.reference_checkpoint_path is not None:
      tensors = reference_tensors(options.reference_checkpoint_path)
    else:
      tensors = torch_tensors(_full_host_arrays(context.pytree))
    metrics = ckptbench.Metrics()
    metrics.record("save", "9_other/tensors", len(tensors), "count")
    library = options.effective_library
    if library.startswith("dcp"):
      tensors, loaded = _save_load_dcp(library, tensors, context.path, metrics, context, options)
    else:
      # Libraries without ranks: under `launch`, each process writes its own copy.
      path = context.path / f"process_{jax.process_index()}" if jax.process_count() > 1 else context.path
      path.mkdir(parents=True, exist_ok=True)
      run = _save_load_orbax if library in ("orbax", "torchax") else _save_load_torch
      loaded = run(library, tensors, path, metrics, context, options.cold_cache)
    if library not in ("orbax", "torchax"):  # Orbax counts its own bytes (the same tag)
      # The bytes this process wrote, so the save's bandwidth and its share of the disk's are derived.
      saved_gib = sum(t.numel() * t.element_size() for t in tensors.values()) / 2**30
      metrics.record("save", "5_inventory/save_total_gb", saved_gib, "GiB")
    with metrics.measure("verify", ["time"]):
      _verify(tensors, loaded, library)
    notes = (_dcp.BESIDE_TORCHAX_NOTE,) if library.startswith("dcp") and _dcp.beside_torchax() else ()
    return ckptbench.TestResult(metrics=metrics, notes=notes)


@dataclasses.dataclass(frozen=True, kw_only=True)
class PyTorchCheckpointOptions(PyTorchOptions):
  """`pytorch`'s options with the defaults of Orbax's PyTorch (DCP) benchmark."""

  library: str | list[str] = "dcp"
  enable_async_save: bool | None | list[bool | None] = False
  save_thread_count: int | None | list[int | None] = 10
  save_per_thread_copy_ahead_mb: int | None | list[int | None] = 100
  cache_staged_state_dict: bool | None | list[bool | None] = False
  single_file_per_rank: bool | None | list[bool | None] = False


@ckptbench.benchmark_options(PyTorchCheckpointOptions)
class PyTorchCheckpointBenchmark(PyTorchBenchmark):
  """DCP save and load, as Orbax's `pytorch_checkpoint_benchmark` runs it (what its import path resolves to)."""

  builtin = ckptbench.Builtin(
      name="pytorch_dcp",
      measures="`torch.distributed.checkpoint` with Orbax's PyTorch-benchmark options, one rank per process under `ckptbench launch`",
      example="pytorch_dcp.yaml",
      saves_with=("torch",),
      cold_load="load",
      extras=("torch",),
      orbax_alias="pytorch_checkpoint_benchmark.PyTorchCheckpointBenchmark",
  )
