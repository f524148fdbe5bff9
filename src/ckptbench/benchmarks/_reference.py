"""What the Orbax-style built-ins share: reference checkpoints and (replica, model) meshes.

A reference checkpoint is an existing Orbax checkpoint plus a sharding file
(the format of `checkpoint_config.sharding_config_path`, see docs/builtins.md)
that says how to lay its arrays out on the run's mesh.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax

import ckptbench
from ckptbench import CkptbenchError
from ckptbench.benchmarks.save_restore import SaveRestoreOptions


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReferenceOptions(SaveRestoreOptions):
  """The save/restore options plus an optional reference checkpoint.

  Attributes:
    reference_checkpoint_path: an existing Orbax checkpoint to use instead of
      the suite's checkpoint data; needs `reference_sharding_path`.
    reference_sharding_path: the sharding file to lay it out with.
  """

  reference_checkpoint_path: str | None = None
  reference_sharding_path: str | None = None

  def invalid_reason(self) -> str | None:
    if (self.reference_checkpoint_path is None) != (self.reference_sharding_path is None):
      return "reference_checkpoint_path and reference_sharding_path go together"
    return super().invalid_reason()


def reference_abstract(options: ReferenceOptions, mesh: jax.sharding.Mesh, *, per_replica: bool = False) -> Any:
  """The abstract tree that loads the reference checkpoint onto `mesh` with its sharding file.

  `per_replica`: the file lays out one replica (Orbax's restore-and-broadcast
  and replica-parallel evaluations), repeated over the mesh's `replica` axis.
  """
  shardings = ckptbench.read_sharding_config(options.reference_sharding_path)
  return ckptbench.abstract_from_checkpoint(
      options.reference_checkpoint_path, mesh, shardings, per_replica=per_replica
  )


def load_reference_unsharded(options: ReferenceOptions) -> Any:
  """The reference checkpoint loaded whole onto one device: what a sharded load is checked against.

  Loaded with Orbax's default options (load-and-broadcast needs named shardings).
  """
  from orbax.checkpoint import v1 as ocp

  path = options.reference_checkpoint_path
  return ocp.load(path, ckptbench.abstract_from_checkpoint(path, None, None))


def require_data(context_pytree: Any, options: ReferenceOptions, benchmark: str) -> None:
  """Raises unless the run has checkpoint data or a reference checkpoint."""
  if context_pytree is None and options.reference_checkpoint_path is None:
    raise CkptbenchError(
        f"{benchmark} needs checkpoint data (checkpoint_config spec, preset or path) or"
        " the options reference_checkpoint_path + reference_sharding_path"
    )


def require_replica_mesh(mesh: jax.sharding.Mesh | None, benchmark: str) -> int:
  """Returns the number of replicas of a 2-D (replica, model) mesh.

  Raises:
    CkptbenchError: for any other mesh.
  """
  if mesh is None or tuple(mesh.axis_names) != ("replica", "model"):
    got = None if mesh is None else list(mesh.axis_names)
    raise CkptbenchError(f"{benchmark} needs a mesh_config with mesh_axes [replica, model]; got {got}")
  return int(mesh.shape["replica"])
