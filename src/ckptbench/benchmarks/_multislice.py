"""What the multi-replica built-ins share: the replica axis of a mesh, and what is emulated here.

Orbax's multi-slice code treats one index of the mesh (`replica_axis_index`)
as the replica axis: each index along it is one replica (on real hardware one
slice, its devices linked by ICI, the slices by DCN). CPU JAX has no slices:
this module says, for the record, how the replicas were laid out instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

import jax
import numpy as np

import ckptbench
from ckptbench import CkptbenchError


@dataclasses.dataclass(frozen=True, kw_only=True)
class TwoTierOptions(ckptbench.BenchmarkOptions):
  """The options Orbax's two-tier managers (emergency, p2p) share, by the peer's names.

  Attributes:
    persistent_save_interval_steps: persistent saves at steps 0, n, 2n, ...
    persistent_max_to_keep: persistent checkpoints kept.
    local_save_interval_steps: local saves at steps 0, m, 2m, ...
    local_max_to_keep: local checkpoints kept per host.
    replica_axis_index: the index in mesh_axes of the replica axis.
    train_steps: training steps per run.
  """

  persistent_save_interval_steps: int | Sequence[int] = 5
  persistent_max_to_keep: int | Sequence[int] = 5
  local_save_interval_steps: int | Sequence[int] = 2
  local_max_to_keep: int | Sequence[int] = 2
  replica_axis_index: int | Sequence[int] = 0
  train_steps: int | Sequence[int] = 10

  def tiers_invalid_reason(self) -> str | None:
    """What is wrong with the shared options, or None."""
    if min(self.persistent_save_interval_steps, self.local_save_interval_steps, self.train_steps) < 1:
      return "the save intervals and train_steps must be at least 1"
    if min(self.persistent_max_to_keep, self.local_max_to_keep) < 1:
      return "persistent_max_to_keep and local_max_to_keep must be at least 1"
    return None


def replica_axis(mesh: jax.sharding.Mesh | None, replica_axis_index: int, benchmark: str) -> str:
  """The name of the replica axis, after checking it exists and has several replicas.

  Raises:
    CkptbenchError: without a mesh, for an index out of range, or a single replica.
  """
  if mesh is None:
    raise CkptbenchError(f"{benchmark} needs a mesh_config (its replica axis is mesh_axes[replica_axis_index])")
  names = list(mesh.axis_names)
  if not 0 <= replica_axis_index < len(names):
    raise CkptbenchError(f"{benchmark}: replica_axis_index {replica_axis_index} is not an index of mesh_axes {names}")
  axis = names[replica_axis_index]
  if mesh.shape[axis] < 2:
    raise CkptbenchError(
        f"{benchmark}: the replica axis {axis!r} (mesh_axes[{replica_axis_index}]) has"
        f" {mesh.shape[axis]} replica; give it 2 or more (ici_parallelism x dcn_parallelism)"
    )
  return axis


def require_replicated(pytree: Any, axis: str, benchmark: str) -> None:
  """Raises unless no array of `pytree` is sharded over the replica axis (each replica holds it whole)."""
  for path, leaf in jax.tree_util.tree_leaves_with_path(pytree):
    spec = getattr(getattr(leaf, "sharding", None), "spec", None)
    if spec is None:
      continue
    used = {a for entry in spec if entry is not None for a in ((entry,) if isinstance(entry, str) else entry)}
    if axis in used:
      raise CkptbenchError(
          f"{benchmark}: array {jax.tree_util.keystr(path)} is sharded over the replica axis {axis!r};"
          " every replica must hold a whole copy (shard over the other axes only)"
      )


def require_arrays(pytree: Any, benchmark: str) -> None:
  """Raises at the first leaf that is not a jax.Array (Orbax's multi-tier managers restore arrays only)."""
  for path, leaf in jax.tree_util.tree_leaves_with_path(pytree):
    if not isinstance(leaf, jax.Array):
      raise CkptbenchError(
          f"{benchmark}: leaf {jax.tree_util.keystr(path)} has type {type(leaf).__name__}; Orbax's"
          " multi-tier managers restore jax.Arrays only (drop it from checkpoint_config.spec)"
      )


def local_replica_mesh(mesh: jax.sharding.Mesh, replica_axis_index: int) -> jax.sharding.Mesh:
  """The mesh of the replica this process's devices belong to (size 1 along the replica axis)."""
  from orbax.checkpoint._src.multihost import multislice

  devices = multislice.local_replica_devices(mesh, replica_axis_index=replica_axis_index)
  return jax.sharding.Mesh(np.expand_dims(devices, replica_axis_index), mesh.axis_names)


def processes_per_replica(mesh: jax.sharding.Mesh, replica_axis_index: int) -> list[set[int]]:
  """The set of processes holding each replica's devices."""
  grid = np.moveaxis(mesh.devices, replica_axis_index, 0)
  return [{d.process_index for d in devices.flat} for devices in grid]


def emulation_notes(mesh: jax.sharding.Mesh, replica_axis_index: int) -> tuple[str, ...]:
  """What differs from real multi-slice hardware, for the record; empty on accelerators.

  Multi-process CPU devices carry a `slice_index` too (0), so the platform, not
  that attribute, says whether the slices are emulated.
  """
  platform = mesh.devices.flat[0].platform
  if platform != "cpu":
    return ()
  axis = mesh.axis_names[replica_axis_index]
  owners = processes_per_replica(mesh, replica_axis_index)
  shared = any(a & b for i, a in enumerate(owners) for b in owners[i + 1 :])
  if len(set().union(*owners)) == 1:
    layout = (
        f"all {len(owners)} replicas along {axis!r} are devices of one process: the"
        " broadcast between replicas is an in-process copy, no network is crossed"
    )
  elif shared:
    layout = (
        f"replicas along {axis!r} share processes ({[sorted(o) for o in owners]}): part of the"
        " broadcast is an in-process copy, part crosses processes"
    )
  else:
    layout = (
        f"the {len(owners)} replicas along {axis!r} are emulated as separate processes"
        f" ({[sorted(o) for o in owners]}) on one machine: traffic between replicas goes over"
        " jax.distributed CPU collectives on the loopback interface, not DCN"
    )
  return (
      f"emulated slices: CPU devices stand for accelerators; {layout}",
      "devices within a replica share host memory: no ICI links, HBM or accelerator transfers",
  )


@contextlib.contextmanager
def orbax_flags(**values: bool) -> Iterator[None]:
  """Sets Orbax's absl flags (e.g. experimental_orbax_use_distributed_process_id) for the block.

  Orbax's multi-tier code reads such flags, and absl refuses to read any flag
  before the command line is parsed: ckptbench parses none, so the flags are
  marked parsed (every other flag keeps its default). The previous values are
  put back afterwards.
  """
  from absl import flags

  if not flags.FLAGS.is_parsed():
    flags.FLAGS.mark_as_parsed()
  previous = {name: getattr(flags.FLAGS, name) for name in values}
  try:
    for name, value in values.items():
      setattr(flags.FLAGS, name, value)
    yield
  finally:
    for name, value in previous.items():
      setattr(flags.FLAGS, name, value)


def init_process_id_maps() -> None:
  """Builds Orbax's maps between runtime and distributed process ids (collective; once per process).

  Orbax's multi-tier managers need them; a single process has nothing to map.
  """
  import jax
  from orbax.checkpoint._src.multihost import multihost

  if jax.process_count() == 1:
    return
  if not multihost.is_runtime_to_distributed_ids_initialized():
    multihost.initialize_runtime_to_distributed_ids()
  if not multihost.is_distributed_to_device_ids_initialized():
    multihost.initialize_distributed_to_device_ids()


def prepare_tiers(context: Any, replica_axis_index: int, name: str, local_name: str) -> tuple[Any, Any]:
  """The two tiers of a multi-tier manager, ready on every process: (persistent, local).

  Checks the data is replicated over the replica axis, makes the shared
  persistent directory (process 0) and this process's local one (under
  --local_directory when given), waits for every process, and builds Orbax's
  process-id maps.
  """
  from orbax.checkpoint._src.multihost import multihost

  axis = replica_axis(context.mesh, replica_axis_index, name)
  require_replicated(context.pytree, axis, name)
  require_arrays(context.pytree, name)
  process = jax.process_index()
  persistent = context.path / "persistent"
  local = (context.local_path or context.path / "local" / f"process_{process}") / local_name
  if process == 0:
    persistent.mkdir(parents=True, exist_ok=True)
  local.mkdir(parents=True, exist_ok=True)
  multihost.sync_global_processes(f"{name}:directories")
  init_process_id_maps()
  return persistent, local
