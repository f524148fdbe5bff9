"""How each library of the `libraries` built-in saves sharded arrays and loads them back.

Every library gets the same thing: `{leaf key: jax.Array}` to save below a root
(a local directory or a store URL), and `{leaf key: jax.ShapeDtypeStruct}` (with
the saved sharding) to load into; it returns `{leaf key: jax.Array}`. The shard
libraries (`plain`, `safetensors`, `tensorstore`) write the shards this process
holds (replica 0 of each, so no shard is written twice) and read the shards its
devices need, as Orbax does.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import os
import pathlib
from typing import Any, Callable, Mapping

import jax
import numpy as np

import ckptbench

Arrays = Mapping[str, jax.Array]
Targets = Mapping[str, jax.ShapeDtypeStruct]
_MAX_FILES_IN_FLIGHT = 64


@dataclasses.dataclass(frozen=True)
class Shard:
  """One shard of one array: where it starts, and its bytes as this process holds them."""

  leaf: str
  start: tuple[int, ...]
  data: np.ndarray

  @property
  def name(self) -> str:
    return shard_name(self.leaf, self.start)

  @property
  def raw(self) -> np.ndarray:
    """The shard's bytes, as uint8 (bfloat16 has no buffer format of its own)."""
    return np.ascontiguousarray(self.data).reshape(-1).view(np.uint8)


def shard_name(leaf: str, start: tuple[int, ...]) -> str:
  return f"{leaf}/{'_'.join(map(str, start)) or 'whole'}"


def _start(index: tuple[slice, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
  return tuple(s.indices(n)[0] for s, n in zip(index, shape))


def saved_shards(arrays: Arrays) -> list[Shard]:
  """The shards this process writes: replica 0 of every shard it holds."""
  return [
      Shard(key, _start(s.index, array.shape), np.asarray(s.data))
      for key, array in arrays.items() for s in array.addressable_shards if s.replica_id == 0
  ]  # fmt: skip


def saved_bytes(arrays: Arrays) -> int:
  """The bytes of the checkpoint (every array once, whichever process writes it)."""
  return sum(array.size * array.dtype.itemsize for array in arrays.values())


def _needed(target: jax.ShapeDtypeStruct) -> dict[tuple[int, ...], tuple[slice, ...]]:
  """{start: index} of the shards this process's devices need, each once."""
  indices = target.sharding.addressable_devices_indices_map(target.shape).values()
  return {_start(index, target.shape): index for index in indices}


def _shape(index: tuple[slice, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
  return tuple(len(range(*s.indices(n))) for s, n in zip(index, shape))


def _assemble(targets: Targets, read: Mapping[str, np.ndarray]) -> dict[str, jax.Array]:
  """The arrays, each device given the shard read for its index."""
  return {
      key: jax.make_array_from_callback(
          t.shape, t.sharding, lambda index, key=key, t=t: read[shard_name(key, _start(index, t.shape))]
      )
      for key, t in targets.items()
  }


def _is_url(root: Any) -> bool:
  return "://" in str(root)


# plain: the floor.


def _each(function: Callable[[Any], Any], items: list[Any]) -> list[Any]:
  """`function` of every item, all at once (os.write, fsync and reads release the GIL), in order."""
  if len(items) < 2:
    return [function(item) for item in items]
  with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(items), _MAX_FILES_IN_FLIGHT)) as pool:
    return list(pool.map(function, items))


def _write_file(path: pathlib.Path, raw: np.ndarray) -> None:
  fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
  try:
    view = memoryview(raw)
    while view:
      view = view[os.write(fd, view) :]
    os.fsync(fd)
  finally:
    os.close(fd)


def save_plain(root: Any, arrays: Arrays) -> None:
  """One file per shard, all at once: its bytes with os.write, then fsync (one PUT on a store)."""
  shards = saved_shards(arrays)
  if _is_url(root):
    _each(lambda s: ckptbench.write_location(f"{root}/{s.name}", s.raw.tobytes()), shards)
    return
  for shard in shards:
    (pathlib.Path(root) / shard.name).parent.mkdir(parents=True, exist_ok=True)
  _each(lambda s: _write_file(pathlib.Path(root) / s.name, s.raw), shards)


def _read_file(path: pathlib.Path, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
  data = np.empty(shape, dtype=dtype)
  with open(path, "rb", buffering=0) as f:
    if f.readinto(data.reshape(-1).view(np.uint8)) != data.nbytes or f.read(1):
      raise ckptbench.DataMismatchError(f"{path}: {os.path.getsize(path)} bytes, the shard has {data.nbytes}")
  return data


def load_plain(root: Any, targets: Targets) -> dict[str, jax.Array]:
  """Each needed shard's file read, all at once, into a buffer of its dtype and shape."""
  wanted = [(shard_name(key, start), t.dtype, _shape(index, t.shape))
            for key, t in targets.items() for start, index in _needed(t).items()]  # fmt: skip
  if _is_url(root):
    read = lambda w: np.frombuffer(ckptbench.read_location(f"{root}/{w[0]}"), dtype=w[1]).reshape(w[2])  # noqa: E731
  else:
    read = lambda w: _read_file(pathlib.Path(root) / w[0], w[1], w[2])  # noqa: E731
  return _assemble(targets, dict(zip((w[0] for w in wanted), _each(read, wanted))))


# safetensors: a file per process of the shards it holds.


def save_safetensors(root: Any, arrays: Arrays) -> None:
  """`safetensors.numpy.save_file` of this process's shards, then fsync (safetensors leaves the
  file in the page cache, where a crash would lose it: the other libraries' saves are durable)."""
  from safetensors.numpy import save_file

  file = pathlib.Path(root) / f"process_{jax.process_index():05d}.safetensors"
  file.parent.mkdir(parents=True, exist_ok=True)
  save_file({s.name: np.ascontiguousarray(s.data) for s in saved_shards(arrays)}, file)
  fd = os.open(file, os.O_RDONLY)
  try:
    os.fsync(fd)
  finally:
    os.close(fd)


def load_safetensors(root: Any, targets: Targets) -> dict[str, jax.Array]:
  """The shards each device needs, from whichever process's file holds them (`safe_open`)."""
  from safetensors import safe_open

  files = sorted(pathlib.Path(root).glob("process_*.safetensors"))
  read = {}
  with contextlib.ExitStack() as stack:
    handles = [stack.enter_context(safe_open(f, framework="numpy")) for f in files]
    holder = {name: h for h in handles for name in h.keys()}
    for key, t in targets.items():
      for start in _needed(t):
        name = shard_name(key, start)
        if name not in holder:
          raise ckptbench.DataMismatchError(f"no safetensors file below {root} holds {name}")
        read[name] = holder[name].get_tensor(name)
  return _assemble(targets, read)


# tensorstore: zarr3 arrays, one chunk per shard, written and read by TensorStore directly.


def _zarr3_spec(root: Any, key: str, use_ocdbt: bool, use_compression: bool) -> dict[str, Any]:
  if use_ocdbt:
    kvstore = {**ckptbench.kvstore_spec(root, use_ocdbt=True), "path": f"{key}/"}
  else:
    kvstore = ckptbench.kvstore_spec(f"{root}/{key}")
    kvstore["path"] = kvstore["path"].rstrip("/") + "/"
  codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
  if use_compression:
    codecs.append({"name": "zstd", "configuration": {"level": 1}})
  return {"driver": "zarr3", "kvstore": kvstore, "metadata": {"codecs": codecs}}


def _fresh_context():
  import tensorstore as ts

  return ts.Context({"cache_pool": {"total_bytes_limit": 0}})  # every read goes to the storage


def barrier(name: str) -> None:
  if jax.process_count() > 1:
    from jax.experimental import multihost_utils

    multihost_utils.sync_global_devices(name)


def save_tensorstore(root: Any, arrays: Arrays, *, use_ocdbt: bool, use_compression: bool) -> None:
  """Process 0 creates each array (chunks the shape of a shard); every process writes its shards."""
  import tensorstore as ts

  context = _fresh_context()
  created = {}
  if jax.process_index() == 0:
    for key, array in arrays.items():
      spec = _zarr3_spec(root, key, use_ocdbt, use_compression)
      spec["metadata"].update(
          shape=list(array.shape), data_type=array.dtype.name,
          chunk_grid={"name": "regular", "configuration": {"chunk_shape": list(array.sharding.shard_shape(array.shape))}},
      )  # fmt: skip
      created[key] = ts.open(spec, create=True, delete_existing=True, context=context)
    created = {k: f.result() for k, f in created.items()}
  barrier("ckptbench-libraries-tensorstore-created")
  stores = created or {
      key: ts.open(_zarr3_spec(root, key, use_ocdbt, use_compression), open=True, context=context).result()
      for key in arrays
  }
  writes = [stores[s.leaf][tuple(slice(a, a + n) for a, n in zip(s.start, s.data.shape))].write(s.data)
            for s in saved_shards(arrays)]  # fmt: skip
  for write in writes:
    write.result()  # committed: written to the storage


def load_tensorstore(root: Any, targets: Targets, *, use_ocdbt: bool, use_compression: bool) -> dict[str, jax.Array]:
  """Every needed shard read at once through a fresh context (no cache)."""
  import tensorstore as ts

  context = _fresh_context()
  pending = {}
  for key, t in targets.items():
    store = ts.open(_zarr3_spec(root, key, use_ocdbt, use_compression), open=True, context=context).result()
    for start, index in _needed(t).items():
      pending[shard_name(key, start)] = store[index].read()
  return _assemble(targets, {name: future.result() for name, future in pending.items()})


# array_serialization: JAX's own TensorStore serializer.


def array_serialization_problem() -> str | None:
  """Why this JAX cannot run `array_serialization`, or None."""
  try:
    from jax.experimental.array_serialization import serialization
  except ImportError as e:
    return f"jax {jax.__version__} has no jax.experimental.array_serialization ({e})"
  missing = [f for f in ("run_serialization", "run_deserialization") if not hasattr(serialization, f)]
  if missing:
    return f"jax {jax.__version__}'s array_serialization lacks {', '.join(missing)}"
  return None


def _array_serialization_spec(root: Any, key: str, use_ocdbt: bool) -> dict[str, Any]:
  """A zarr3 array per leaf (JAX's default driver) on ckptbench's kvstore spec of the root (which
  carries a store's endpoint, as JAX's own path parsing does not)."""
  if use_ocdbt:
    return {"driver": "zarr3", "kvstore": {**ckptbench.kvstore_spec(root, use_ocdbt=True), "path": key}}
  return {"driver": "zarr3", "kvstore": ckptbench.kvstore_spec(f"{root}/{key}")}


def save_array_serialization(root: Any, arrays: Arrays, *, use_ocdbt: bool) -> None:
  """`serialization.run_serialization`: `async_serialize` of every array, awaited together."""
  from jax.experimental.array_serialization import serialization

  keys = list(arrays)
  serialization.run_serialization([arrays[k] for k in keys], [_array_serialization_spec(root, k, use_ocdbt) for k in keys])


def load_array_serialization(root: Any, targets: Targets, *, use_ocdbt: bool) -> dict[str, jax.Array]:
  """`serialization.run_deserialization`: `async_deserialize` of every array, awaited together."""
  from jax.experimental.array_serialization import serialization

  keys = list(targets)
  loaded = serialization.run_deserialization(
      [targets[k].sharding for k in keys], [_array_serialization_spec(root, k, use_ocdbt) for k in keys],
      global_shapes=[targets[k].shape for k in keys], dtypes=[targets[k].dtype for k in keys],
  )  # fmt: skip
  return dict(zip(keys, loaded))
