"""Options shared by the Orbax built-ins, under the names Orbax's v1 built-ins use."""

from __future__ import annotations

import dataclasses
from typing import Any

from ckptbench import BenchmarkOptions

_GIB = 1024**3


@dataclasses.dataclass(frozen=True, kw_only=True)
class OrbaxOptions(BenchmarkOptions):
  """Storage and I/O knobs of an Orbax v1 save or load.

  Attributes:
    async_enabled: save with `save_async`, timing the blocking part apart from
      the whole save.
    use_ocdbt: write through the OCDBT key-value store (one file set per save).
    use_zarr3: store arrays as Zarr v3 (else Zarr v2).
    use_compression: compress array chunks (zstd).
    use_replica_parallel: split the writes of replicated arrays across replicas.
    enable_replica_parallel_separate_folder: each replica writes its own folder
      (needs use_replica_parallel and use_ocdbt).
    use_load_and_broadcast: one replica reads, then broadcasts to the others.
    chunk_byte_size: target chunk size in bytes; None lets Orbax choose.
    save_concurrent_gb: bytes in flight while saving (GiB); None: unlimited.
    restore_concurrent_gb: bytes in flight while loading (GiB); None: unlimited.
  """

  async_enabled: bool | list[bool] = True
  use_ocdbt: bool | list[bool] = True
  use_zarr3: bool | list[bool] = True
  use_compression: bool | list[bool] = True
  use_replica_parallel: bool | list[bool] = False
  enable_replica_parallel_separate_folder: bool | list[bool] = False
  use_load_and_broadcast: bool | list[bool] = False
  chunk_byte_size: int | None | list[int | None] = None
  save_concurrent_gb: int | None | list[int | None] = None
  restore_concurrent_gb: int | None | list[int | None] = None

  def invalid_reason(self) -> str | None:
    if self.enable_replica_parallel_separate_folder and not (
        self.use_replica_parallel and self.use_ocdbt
    ):
      return "enable_replica_parallel_separate_folder needs use_replica_parallel and use_ocdbt"
    return None

  def is_valid(self) -> bool:
    return self.invalid_reason() is None

  def orbax_context(self) -> Any:
    """An `orbax.checkpoint.v1.Context` with these options; enter it around Orbax calls."""
    from orbax.checkpoint import v1 as ocp

    ctx = ocp.Context()
    saving = ctx.array.saving
    saving.use_ocdbt = self.use_ocdbt
    saving.use_zarr3 = self.use_zarr3
    saving.use_compression = self.use_compression
    saving.use_replica_parallel = self.use_replica_parallel
    saving.enable_replica_parallel_separate_folder = self.enable_replica_parallel_separate_folder
    saving.storage_options.chunk_byte_size = self.chunk_byte_size
    ctx.array.loading.use_load_and_broadcast = self.use_load_and_broadcast
    if self.save_concurrent_gb is not None:
      ctx.memory.write_concurrent_bytes = self.save_concurrent_gb * _GIB
    if self.restore_concurrent_gb is not None:
      ctx.memory.read_concurrent_bytes = self.restore_concurrent_gb * _GIB
    return ctx
