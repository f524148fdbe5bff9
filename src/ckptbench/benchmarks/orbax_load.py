"""`orbax_load`: load an existing Orbax checkpoint, with per-host SHA-256 digests to check it later.

Orbax's in-tree `orbax_load.load_benchmark.OrbaxLoadBenchmark` resolves here,
with the same option names. The checkpoint (`checkpoint_path`, an `items`
directory written by `ocp.save`) is loaded onto the suite's mesh with the
partition specs of `sharding_config_path` (replicated without one; on all
devices when the suite has no mesh). Measured: `load`.

Load-only runs have no copy in memory to compare with, so correctness travels
as digests: `capture_digests_path` writes `host_<index>.json` per process, each
mapping every array to the SHA-256 of the shards that process holds (ordered by
their index, with dtype and shape); a later run with `reference_digests_path`
recomputes them and fails with `DataMismatchError` naming every array that
differs. Digests depend on the layout, so compare runs on the same mesh and
sharding file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
from orbax.checkpoint import v1 as ocp

import ckptbench

_GIB = 1 << 30


@dataclasses.dataclass(frozen=True)
class OrbaxLoadOptions(ckptbench.BenchmarkOptions):
  """Options of `orbax_load` (a list sweeps).

  Attributes:
    checkpoint_path: the Orbax checkpoint to load (required).
    sharding_config_path: partition spec per array (docs/builtins.md, "Sharding files").
    capture_digests_path: directory (or gs://, s3:// prefix) to write each process's digests into.
    reference_digests_path: directory (or store prefix) of digests captured earlier to check against.
    use_load_and_broadcast: one replica reads, then broadcasts to the others.
    use_colocated_python: Pathways' colocated-Python load; invalid elsewhere.
    restore_concurrent_gb: limit of bytes in flight while loading (GiB).
    metric_tracemalloc_enabled: add the tracemalloc collector.
    cold_cache: evict the checkpoint from the page cache before the load
      (`load_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  checkpoint_path: str | None = None
  sharding_config_path: str | None = None
  capture_digests_path: str | None = None
  reference_digests_path: str | None = None
  use_load_and_broadcast: bool | Sequence[bool] = False
  use_colocated_python: bool | Sequence[bool] = False
  restore_concurrent_gb: int | None | Sequence[int | None] = None
  metric_tracemalloc_enabled: bool = False
  cold_cache: bool | Sequence[bool] = True

  def invalid_reason(self) -> str | None:
    if self.checkpoint_path is None:
      return "checkpoint_path is required: the checkpoint to load"
    if self.capture_digests_path and self.reference_digests_path:
      return "give capture_digests_path or reference_digests_path, not both"
    if self.use_colocated_python:
      from orbax.checkpoint import multihost  # noqa: PLC0415

      if not multihost.is_pathways_backend():
        return "use_colocated_python needs a Pathways backend; this JAX has none"
    return None

  def load_context(self) -> ocp.Context:
    """The Orbax Context the load runs in."""
    ctx = ocp.Context()
    ctx.array.loading.use_load_and_broadcast = self.use_load_and_broadcast
    if self.restore_concurrent_gb is not None:
      ctx.memory.read_concurrent_bytes = int(self.restore_concurrent_gb * _GIB)
    if self.use_colocated_python:
      from orbax.checkpoint import pathways  # noqa: PLC0415  (Pathways only)

      ctx.pathways.checkpointing_impl = pathways.CheckpointingImpl.from_options(use_colocated_python=True)
    return ctx


def _bounds(index: tuple[slice, ...], shape: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
  """A shard's index as (start, stop) per dimension: JAX writes a whole dimension as 0:n or as `:`."""
  return tuple(s.indices(n)[:2] for s, n in zip(index, shape))


def host_digests(pytree: Any) -> dict[str, str]:
  """SHA-256 per array of the shards this process holds (dtype, shape, then each shard by position)."""
  out = {}
  for key_path, leaf in jax.tree_util.tree_leaves_with_path(pytree):
    if not hasattr(leaf, "shape"):
      continue
    h = hashlib.sha256(f"{np.dtype(leaf.dtype).str}{tuple(leaf.shape)}".encode())
    if isinstance(leaf, jax.Array):
      shards = {_bounds(s.index, leaf.shape): s for s in leaf.addressable_shards}  # one per replica set
      for bounds in sorted(shards):
        h.update(repr(bounds).encode())
        h.update(np.ascontiguousarray(np.asarray(shards[bounds].data)).view(np.uint8).tobytes())
    else:
      h.update(np.ascontiguousarray(np.asarray(leaf)).view(np.uint8).tobytes())
    out[jax.tree_util.keystr(key_path)] = h.hexdigest()
  return out


def compare_digests(reference: dict[str, str], actual: dict[str, str], where: str) -> None:
  """Raises DataMismatchError naming every array that is missing, extra or different."""
  problems = [f"{k}: missing from the load" for k in sorted(set(reference) - set(actual))]
  problems += [f"{k}: not in the reference" for k in sorted(set(actual) - set(reference))]
  problems += [f"{k}: digest differs" for k in sorted(set(reference) & set(actual)) if reference[k] != actual[k]]
  if problems:
    shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
    raise ckptbench.DataMismatchError(f"the load does not match the digests in {where}: {shown}")


@ckptbench.benchmark_options(OrbaxLoadOptions)
class OrbaxLoadBenchmark(ckptbench.BenchmarksGenerator):
  """Loads `checkpoint_path`; captures or checks per-host digests."""

  builtin = ckptbench.Builtin(
      name="orbax_load",
      measures="loading an existing checkpoint, with per-host SHA-256 digests captured once and checked later",
      example="orbax_load.yaml",
      cold_load="load",
      orbax_alias="orbax_load.load_benchmark.OrbaxLoadBenchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: OrbaxLoadOptions = context.options
    path = options.checkpoint_path
    mesh = context.mesh or jax.sharding.Mesh(np.asarray(jax.devices()), ("data",))
    shardings = ckptbench.read_sharding_config(options.sharding_config_path) if options.sharding_config_path else None
    keys = ckptbench.default_collectors() + ["tracemalloc"] if options.metric_tracemalloc_enabled else None
    metrics = ckptbench.Metrics()
    with options.load_context():
      abstract = ckptbench.abstract_from_checkpoint(path, mesh, shardings)
      ckptbench.evict_for_load(path, metrics, "load", options.cold_cache)
      with context.trace("load"), metrics.measure("load", keys), ckptbench.reading_checkpoint(path):
        loaded = jax.block_until_ready(ocp.load(path, abstract))
    ckptbench.check_loaded_shardings(loaded, abstract, f"loading {path}")
    host_file = f"host_{jax.process_index():05d}.json"
    if options.capture_digests_path or options.reference_digests_path:
      with metrics.measure("digest", ["time"]):
        digests = host_digests(loaded)
      if options.capture_digests_path:
        target = f"{str(options.capture_digests_path).rstrip('/')}/{host_file}"
        ckptbench.write_location(target, json.dumps(digests, indent=1, sort_keys=True).encode())
      else:
        reference = f"{str(options.reference_digests_path).rstrip('/')}/{host_file}"
        try:
          text = ckptbench.read_location(reference)
        except ckptbench.CkptbenchError as e:
          raise ckptbench.CkptbenchError(f"no reference digests for process {jax.process_index()}: {e}") from None
        compare_digests(json.loads(text), digests, reference)
      metrics.record("digest", "9_other/arrays", len(digests), "count")
    return ckptbench.TestResult(metrics=metrics, inventory=ckptbench.scan_inventory(path).to_dict())
