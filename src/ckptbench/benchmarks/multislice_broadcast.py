"""`multislice_broadcast`: copy one replica's arrays to every other replica, with Orbax's broadcast.

Orbax's `multislice.broadcast_one_replica_to_all` (what its single-replica and
emergency restores use after reading): the processes of replica 0 along mesh
axis `replica_axis_index` hold the data, the others contribute zeros, and a
sum over the replica axis leaves every replica with replica 0's arrays, in
rounds of at most `memory_limit_bytes`. No checkpoint is read or written.

Measured: `broadcast_array` (the broadcast of the whole tree) and
`process_spans_multiple_replicas` (Orbax's check of the layout). Recorded:
`broadcast_array_9_other/broadcasts` (rounds), `.../replicas`,
`.../is_source`. Verified: every replica's copy equals the suite's data; as in
`restore_and_broadcast`, a -0.0 that comes back +0.0 (the sum) is accepted and
counted as `broadcast_array_9_other/signed_zero_flips`, any other difference
fails. The record's notes say how replicas were emulated.

The Orbax in-tree framework's `multislice_broadcast_benchmark` resolves here,
with its option name (`replica_axis_index`; its fixed 1 GiB limit is our
`memory_limit_bytes` default).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

import ckptbench
from ckptbench.benchmarks import _multislice
from ckptbench.benchmarks.restore_and_broadcast import signed_zero_flips

_NAME = "multislice_broadcast"


@dataclasses.dataclass(frozen=True, kw_only=True)
class MultisliceBroadcastOptions(ckptbench.BenchmarkOptions):
  """Options of `multislice_broadcast`.

  Attributes:
    replica_axis_index: the index in mesh_axes of the replica axis.
    memory_limit_bytes: bytes broadcast per round.
    verify: compare every replica's copy with the data.
  """

  replica_axis_index: int | Sequence[int] = 0
  memory_limit_bytes: int | Sequence[int] = 1 << 30
  verify: bool = True

  def invalid_reason(self) -> str | None:
    if self.memory_limit_bytes < 1:
      return "memory_limit_bytes must be positive"
    return None


def _source_copy(array: jax.Array, replica_mesh: jax.sharding.Mesh, is_source: bool) -> jax.Array:
  """`array` as it lies on this process's replica, or zeros of that layout outside replica 0."""
  sharding = jax.sharding.NamedSharding(replica_mesh, array.sharding.spec)
  if not is_source:
    shape = sharding.shard_shape(array.shape)
    return jax.make_array_from_callback(array.shape, sharding, lambda _: np.zeros(shape, array.dtype))
  mine = sharding.addressable_devices
  # Copies: the broadcast deletes its inputs, and `array` is checked against afterwards.
  shards = [s.data.copy() for s in array.addressable_shards if s.device in mine]
  return jax.make_array_from_single_device_arrays(array.shape, sharding, shards)


@ckptbench.benchmark_options(MultisliceBroadcastOptions)
class MultisliceBroadcastBenchmark(ckptbench.BenchmarksGenerator):
  """Broadcasts replica 0's arrays to all replicas; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="multislice_broadcast",
      measures="Orbax's `broadcast_one_replica_to_all`: one replica's arrays copied to every other replica, in rounds bounded by a memory limit (no checkpoint)",
      example="multislice_broadcast.yaml",
      orbax_alias="multislice_broadcast_benchmark.MultisliceBroadcastBenchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    from orbax.checkpoint._src.multihost import multislice

    options: MultisliceBroadcastOptions = context.options
    if context.pytree is None:
      raise ckptbench.CkptbenchError(f"{_NAME} needs checkpoint data (checkpoint_config spec or preset)")
    mesh, index = context.mesh, options.replica_axis_index
    axis = _multislice.replica_axis(mesh, index, _NAME)
    _multislice.require_replicated(context.pytree, axis, _NAME)
    _multislice.require_arrays(context.pytree, _NAME)
    metrics = ckptbench.Metrics()
    with metrics.measure("process_spans_multiple_replicas", ["time"]):
      multislice.process_spans_multiple_replicas(mesh, replica_axis_index=index)
    is_source = multislice.in_replica(jax.process_index(), mesh, replica_id=0, replica_axis_index=index)
    replica_mesh = _multislice.local_replica_mesh(mesh, index)
    leaves, treedef = jax.tree.flatten(context.pytree)
    inputs = tuple(_source_copy(leaf, replica_mesh, is_source) for leaf in leaves)
    with metrics.measure("broadcast_array"), context.trace("broadcast_array"):
      outputs, rounds = multislice.broadcast_one_replica_to_all(
          inputs, mesh, replica_axis_index=index, is_source=is_source, memory_limit_bytes=options.memory_limit_bytes
      )
    for key, value in (("broadcasts", rounds), ("replicas", mesh.shape[axis]), ("is_source", int(is_source))):
      metrics.record("broadcast_array", f"9_other/{key}", value, "count")
    if options.verify:
      restored = jax.tree.unflatten(treedef, list(outputs))
      with metrics.measure("verify", ["time"]):
        flips = _check(context.pytree, restored)
      metrics.record("broadcast_array", "9_other/signed_zero_flips", flips, "count")
    return ckptbench.TestResult(metrics=metrics, notes=_multislice.emulation_notes(mesh, index))


def _check(expected: Any, got: Any) -> int:
  """0 when equal; the count of -0.0 turned +0.0 when that is the only difference; raises otherwise."""
  try:
    ckptbench.verify_pytree(expected, got)
    return 0
  except ckptbench.DataMismatchError:
    flips = signed_zero_flips(expected, got)
    if flips is None:
      raise
    return flips
