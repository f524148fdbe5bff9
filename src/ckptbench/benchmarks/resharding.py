"""`resharding`: load a checkpoint into a sharding different from the one it was saved with.

Two modes:
- self-contained: the suite's checkpoint data (spec or preset) is saved with
  its own sharding on the suite's mesh, then loaded into a target sharding
  (`target_sharding`) on a target mesh (`target_mesh`), and compared with what
  was saved, shard by shard.
- from a reference: `reference_checkpoint_path` is loaded with the shardings
  of `reference_sharding_path` (see `ckptbench.benchmarks._reference`), and
  compared with a second, unmeasured load onto one device.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ckptbench import (
    BenchmarksGenerator,
    CkptbenchError,
    Metrics,
    TestContext,
    TestResult,
    benchmark_options,
)
from ckptbench.benchmarks._orbax import OrbaxOptions
from ckptbench.benchmarks._reference import abstract_from_sharding_file, load_on_one_device
from ckptbench.benchmarks._trees import abstract_of, assert_same_data

TARGET_SHARDINGS = ("source", "swap", "replicated")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReshardingOptions(OrbaxOptions):
  """Options of `resharding` (plus the Orbax storage options).

  Attributes:
    reference_checkpoint_path: an existing Orbax checkpoint to load; with
      `reference_sharding_path`, selects the from-reference mode.
    reference_sharding_path: the per-tensor sharding JSON to load it with.
    target_mesh: the mesh to load into, as "axis=size,axis=size" over the
      suite mesh's devices in order (e.g. "fsdp=2,tensor=4"); None keeps the
      suite's mesh.
    target_sharding: how each array is sharded on the target mesh: "source"
      (the saved partition spec, axes missing from the target mesh dropped),
      "swap" (the spec's dimensions reversed) or "replicated".
  """

  reference_checkpoint_path: str | None = None
  reference_sharding_path: str | None = None
  target_mesh: str | None | list[str | None] = None
  target_sharding: str | list[str] = "source"

  def invalid_reason(self) -> str | None:
    if (self.reference_checkpoint_path is None) != (self.reference_sharding_path is None):
      return "reference_checkpoint_path and reference_sharding_path go together"
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
      raise CkptbenchError(f"target_mesh {text!r}: write it as axis=size,axis=size (e.g. fsdp=2,tensor=4)")
    sizes[name.strip()] = int(size)
  count = math.prod(sizes.values())
  if count > len(devices):
    raise CkptbenchError(f"target_mesh {text!r} needs {count} devices; there are {len(devices)}")
  return Mesh(np.array(devices[:count]).reshape(tuple(sizes.values())), tuple(sizes))


def _target_spec(leaf: jax.Array, mesh: Mesh, how: str) -> PartitionSpec:
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


@benchmark_options(ReshardingOptions)
class ReshardingBenchmark(BenchmarksGenerator):
  """Measures `load` into a target sharding; see the module docstring."""

  def test_fn(self, context: TestContext) -> TestResult:
    from orbax.checkpoint import v1 as ocp

    options = context.options
    metrics = Metrics()
    devices = list(context.mesh.devices.flat) if context.mesh is not None else jax.devices()
    if options.reference_checkpoint_path is not None:
      path = options.reference_checkpoint_path
      target = abstract_from_sharding_file(options.reference_sharding_path, path, devices)
      with options.orbax_context(), metrics.measure("load"), context.trace("load"):
        restored = ocp.load(path, target)
      with options.orbax_context():
        expected = load_on_one_device(path, target, devices[0])
    else:
      if context.pytree is None:
        raise CkptbenchError(
            "resharding needs checkpoint data (checkpoint_config spec or preset) or"
            " reference_checkpoint_path + reference_sharding_path"
        )
      expected = context.pytree
      mesh = parse_mesh(options.target_mesh, devices) if options.target_mesh else context.mesh
      if mesh is None:
        raise CkptbenchError("resharding without a reference needs a mesh_config or target_mesh")
      path = context.path / "checkpoint"
      with options.orbax_context(), metrics.measure("save"), context.trace("save"):
        ocp.save(path, expected)
      target = abstract_of(
          expected, lambda x: NamedSharding(mesh, _target_spec(x, mesh, options.target_sharding))
      )
      moved = sum(
          not s.sharding.is_equivalent_to(x.sharding, x.ndim)
          for s, x in zip(jax.tree.leaves(target), jax.tree.leaves(expected))
          if isinstance(x, jax.Array)
      )
      metrics.record("load", "9_other/resharded_arrays", moved, "count")
      with options.orbax_context(), metrics.measure("load"), context.trace("load"):
        restored = ocp.load(path, target)
    verified = assert_same_data(expected, restored, what="resharding load", target=target)
    metrics.record("load", "9_other/bytes_verified", verified, "bytes")
    return TestResult(metrics=metrics)
