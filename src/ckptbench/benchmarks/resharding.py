"""`resharding`: load a checkpoint into a sharding different from the one it was saved with.

Two modes:
- self-contained: the suite's checkpoint data (spec or preset) is saved with
  its own sharding on the suite's mesh, then loaded into a target sharding
  (`target_sharding`) on a target mesh (`target_mesh`).
- from a reference: `reference_checkpoint_path` is loaded onto the target mesh
  with the shardings of `reference_sharding_path`.

Either way the loaded arrays must have the target shardings and the saved
bytes (checked shard by shard; in the reference mode against a second,
unmeasured load onto one device).
"""

from __future__ import annotations

import dataclasses
import math

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

import ckptbench
from ckptbench.benchmarks._reference import (
    ReferenceOptions,
    load_reference_unsharded,
    reference_abstract,
    require_data,
)
from ckptbench.benchmarks.save_restore import collector_keys, orbax_context

TARGET_SHARDINGS = ("source", "swap", "replicated")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReshardingOptions(ReferenceOptions):
  """Options of `resharding` (plus those of save_restore and the reference checkpoint).

  Attributes:
    target_mesh: the mesh to load into, "axis=size,axis=size" over the suite
      mesh's devices in order (e.g. "fsdp=2,tensor=4"); None keeps the suite's mesh.
    target_sharding: self-contained mode: how each array is laid out on the
      target mesh: "source" (its saved partition spec; axes the target mesh
      lacks, or that do not divide the dimension, are dropped), "swap" (the
      spec's dimensions reversed) or "replicated".
  """

  target_mesh: str | None | list[str | None] = None
  target_sharding: str | list[str] = "source"

  def invalid_reason(self) -> str | None:
    if self.target_sharding not in TARGET_SHARDINGS:
      return f"target_sharding must be one of {', '.join(TARGET_SHARDINGS)}"
    return super().invalid_reason()


def parse_mesh(text: str, devices: list) -> Mesh:
  """A mesh from "axis=size,axis=size" over the first devices of `devices`.

  Raises:
    CkptbenchError: for a malformed text or more devices than there are.
  """
  sizes: dict[str, int] = {}
  for part in text.split(","):
    name, _, size = part.partition("=")
    if not name.strip() or not size.strip().isdigit() or int(size) < 1:
      raise ckptbench.CkptbenchError(
          f"target_mesh {text!r}: write it as axis=size,axis=size (e.g. fsdp=2,tensor=4)"
      )
    sizes[name.strip()] = int(size)
  count = math.prod(sizes.values())
  if count > len(devices):
    raise ckptbench.CkptbenchError(f"target_mesh {text!r} needs {count} devices; there are {len(devices)}")
  return Mesh(np.array(devices[:count]).reshape(tuple(sizes.values())), tuple(sizes))


def target_spec(leaf: jax.Array, mesh: Mesh, how: str) -> PartitionSpec:
  """The partition spec of `leaf` on `mesh` under the `target_sharding` rule `how`."""
  if how == "replicated" or not isinstance(leaf.sharding, NamedSharding):
    return PartitionSpec()
  entries = list(leaf.sharding.spec) + [None] * (leaf.ndim - len(leaf.sharding.spec))
  if how == "swap":
    entries.reverse()
  spec = []
  for dim, entry in enumerate(entries):
    axes = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
    axes = tuple(a for a in axes if a in mesh.shape)
    degree = math.prod(mesh.shape[a] for a in axes)
    spec.append(axes if axes and leaf.shape[dim] % degree == 0 else None)
  return PartitionSpec(*spec)


@ckptbench.benchmark_options(ReshardingOptions)
class ReshardingBenchmark(ckptbench.BenchmarksGenerator):
  """Measures `load` into a target sharding; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="resharding",
      measures="loading into a different sharding/mesh (self-contained, or `reference_checkpoint_path` + `reference_sharding_path`)",
      example="resharding.yaml",
      saves_with=("orbax",),
      cold_load="load",
      orbax_alias="v1.resharding_benchmark.ReshardingBenchmark",
  )

  orbax_requires = ("v1_save_load",)  # v1.save/v1.load (0.12+)

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    from orbax.checkpoint import v1 as ocp

    options = context.options
    require_data(context.pytree, options, "resharding")
    devices = list(context.mesh.devices.flat) if context.mesh is not None else jax.devices()
    mesh = parse_mesh(options.target_mesh, devices) if options.target_mesh else context.mesh
    if mesh is None:
      raise ckptbench.CkptbenchError("resharding needs a mesh_config or the option target_mesh")
    metrics = ckptbench.Metrics()
    keys = collector_keys(options)
    if options.reference_checkpoint_path is not None:
      path = options.reference_checkpoint_path
      target = reference_abstract(options, mesh)
    else:
      path = context.path / "checkpoint"
      with orbax_context(options), metrics.measure("save", keys), context.trace("save"):
        ocp.save(path, context.pytree)
      target = jax.tree.map(
          lambda x: jax.ShapeDtypeStruct(
              x.shape, x.dtype, sharding=NamedSharding(mesh, target_spec(x, mesh, options.target_sharding))
          )
          if isinstance(x, jax.Array)
          else x,
          context.pytree,
      )
      moved = sum(
          not t.sharding.is_equivalent_to(x.sharding, x.ndim)
          for t, x in zip(jax.tree.leaves(target), jax.tree.leaves(context.pytree))
          if isinstance(x, jax.Array)
      )
      metrics.record("load", "9_other/resharded_arrays", moved, "count")
    ckptbench.evict_for_load(path, metrics, "load", options.cold_cache)
    with orbax_context(options), metrics.measure("load", keys), context.trace("load"):
      restored = ocp.load(path, target)
    ckptbench.check_loaded_shardings(restored, target, "resharding's load")
    if options.verify:
      expected = context.pytree
      if options.reference_checkpoint_path is not None:
        expected = load_reference_unsharded(options)
      with metrics.measure("verify", ["time"]):
        ckptbench.verify_pytree(expected, restored)
    return ckptbench.TestResult(metrics=metrics)
