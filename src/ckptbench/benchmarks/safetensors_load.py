"""`safetensors_load`: Hugging Face-style sharded `.safetensors` files loaded into sharded JAX arrays.

Orbax's in-tree `safetensors.load_benchmark.SafetensorLoadBenchmark` resolves
here, with the same option names. Orbax's v1 loader reads the files
(`checkpoint_layout: SAFETENSORS`), coalescing the byte ranges each device
needs into reads: `safetensors_max_over_read_ratio` bounds how many bytes a
coalesced read may fetch per byte needed (strided shardings such as an inner
tensor-parallel split trade read count against over-read), and
`safetensors_read_chunk_mb` splits coalesced blocks into concurrent ranged
reads of that size. Everything else (layout from `sharding_config_path`, the
`load` measurement, per-host SHA-256 digests) is `orbax_load`'s.

No download from the Hub: `ckptbench fixture SUITE -o DIR --format safetensors`
writes such files from the suite's preset or spec.
"""

from __future__ import annotations

import dataclasses

from orbax.checkpoint import v1 as ocp

import ckptbench
from ckptbench.benchmarks.orbax_load import OrbaxLoadBenchmark, OrbaxLoadOptions

_MIB = 1 << 20


@dataclasses.dataclass(frozen=True)
class SafetensorsLoadOptions(OrbaxLoadOptions):
  """`orbax_load`'s options (checkpoint_path: a directory of `*.safetensors`) plus (a list sweeps):

  Attributes:
    safetensors_max_over_read_ratio: bytes a coalesced read may fetch per byte
      needed (None: Orbax's default, 2.0 in 0.12.8).
    safetensors_read_chunk_mb: size of the concurrent ranged reads a coalesced
      block is split into, MiB (None: Orbax's default, 128 MiB in 0.12.8).
    enable_xprof: Orbax's name for a profiler trace of the load; here it
      records the same `jax.profiler` trace as `enable_trace` (XProf reads it).
  """

  safetensors_max_over_read_ratio: float | None | list[float | None] = None
  safetensors_read_chunk_mb: int | None | list[int | None] = None
  enable_xprof: bool = False

  def __post_init__(self):
    if self.enable_xprof:
      object.__setattr__(self, "enable_trace", True)  # one switch for the trace, two names

  def invalid_reason(self) -> str | None:
    ratio, chunk = self.safetensors_max_over_read_ratio, self.safetensors_read_chunk_mb
    if ratio is not None and ratio < 1:
      return "safetensors_max_over_read_ratio below 1 cannot read the bytes needed"
    if chunk is not None and chunk < 1:
      return "safetensors_read_chunk_mb must be at least 1"
    return super().invalid_reason()

  def load_context(self) -> ocp.Context:
    ctx = super().load_context()
    ctx.checkpoint_layout = ocp.options.CheckpointLayout.SAFETENSORS
    ctx.safetensors.max_over_read_ratio = self.safetensors_max_over_read_ratio
    if self.safetensors_read_chunk_mb is not None:
      ctx.safetensors.read_chunk_bytes = self.safetensors_read_chunk_mb * _MIB
    return ctx


@ckptbench.benchmark_options(SafetensorsLoadOptions)
class SafetensorsLoadBenchmark(OrbaxLoadBenchmark):
  """Loads a directory of safetensors files; captures or checks per-host digests."""

  builtin = ckptbench.Builtin(
      name="safetensors_load",
      measures="Hugging Face-style sharded `.safetensors` into sharded JAX arrays, over Orbax's over-read ratio and read chunk size (`ckptbench fixture --format safetensors` writes the files)",
      example="safetensors_load.yaml",
      cold_load="load",
      orbax_alias="safetensors.load_benchmark.SafetensorLoadBenchmark",
  )
