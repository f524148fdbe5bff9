"""Sharding files: the layout a load asks for, matched to the checkpoint's arrays and checked after the load.

Two formats, told apart entry by entry:
- ckptbench's: `{"params/embed": ["fsdp", null]}`, an array's key path joined
  with "/" (or "." for safetensors tensor names) mapped to a partition spec;
- Orbax's (its in-tree benchmarks' `abstract_state.json`): the flat name (keys
  joined with ".", or a safetensors tensor's own dotted name) mapped to
  `{"shape", "dtype", "sharding": {"mesh": {"shape", "axes"}, "spec"}}`. The
  recorded mesh is kept: a spec naming axes the run's mesh lacks is laid out on
  the recorded mesh over the run's devices (as Orbax's loader does), and a file
  for a single replica is laid out on each replica's own devices with `replica`
  put in front (`per_replica`, Orbax's restore-and-broadcast and replica-parallel
  evaluations).

A name is never rewritten: an entry matches the array whose key path joined
with "/" or with "." equals it. An entry that matches no array, or whose spec
cannot be laid out, is an error naming it; so is a load whose arrays do not
carry the sharding asked for (`check_loaded_shardings`).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import json
import math
from typing import Any

import jax

from ckptbench.data._leaf_names import leaf_name
from ckptbench.errors import CkptbenchError
from ckptbench.storage import read_location

_SHOWN = 5


@dataclasses.dataclass(frozen=True)
class RecordedMesh:
  """The mesh an Orbax-format entry was written for."""

  shape: tuple[int, ...]
  axes: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class ShardingFile(collections.abc.Mapping):
  """A sharding file read: partition spec per array name (a Mapping), and each entry's recorded mesh."""

  source: str
  specs: dict[str, jax.sharding.PartitionSpec]
  meshes: dict[str, RecordedMesh] = dataclasses.field(default_factory=dict)

  def __getitem__(self, name: str) -> jax.sharding.PartitionSpec:
    return self.specs[name]

  def __iter__(self):
    return iter(self.specs)

  def __len__(self) -> int:
    return len(self.specs)


def read_sharding_config(path: Any) -> ShardingFile:
  """Reads a sharding file (either format) at a path or store URL.

  Raises:
    CkptbenchError: naming the file (and the entry) when it cannot be read or an entry is malformed.
  """
  try:
    raw = json.loads(read_location(path))
  except CkptbenchError as e:
    raise CkptbenchError(f"cannot read the sharding config: {e}") from None
  except (json.JSONDecodeError, UnicodeDecodeError) as e:
    raise CkptbenchError(f"{path}: the sharding config is not JSON: {e}") from None
  if not isinstance(raw, dict):
    raise CkptbenchError(f"{path}: the sharding config must map array names to partition specs")
  specs, meshes = {}, {}
  for name, entry in raw.items():
    spec = entry
    if isinstance(entry, dict) and isinstance(entry.get("sharding"), dict):  # Orbax's format
      spec = entry["sharding"].get("spec")
      mesh = entry["sharding"].get("mesh")
      if mesh is not None:
        meshes[name] = _recorded_mesh(path, name, mesh)
    if not isinstance(spec, list):
      raise CkptbenchError(f"{path}: key '{name}': a partition spec is a list, got {spec!r}")
    specs[name] = jax.sharding.PartitionSpec(*[tuple(e) if isinstance(e, list) else e for e in spec])
  return ShardingFile(str(path), specs, meshes)


def _recorded_mesh(path: Any, name: str, mesh: Any) -> RecordedMesh:
  shape, axes = (mesh.get("shape"), mesh.get("axes")) if isinstance(mesh, dict) else (None, None)
  if not (isinstance(shape, list) and isinstance(axes, list) and len(shape) == len(axes)):
    raise CkptbenchError(f"{path}: key '{name}': sharding.mesh needs 'shape' and 'axes' lists of one length")
  return RecordedMesh(tuple(int(s) for s in shape), tuple(str(a) for a in axes))


def spec_axes(spec: jax.sharding.PartitionSpec) -> set[str]:
  """The mesh axes a partition spec names."""
  return {a for entry in spec for a in ((entry,) if isinstance(entry, str) else entry or ())}


def _names(key_path) -> tuple[str, str]:

  slash = leaf_name(key_path)
  return slash, slash.replace("/", ".")


class ShardingLayout:
  """Lays a checkpoint's arrays out as a sharding file asks; collects every problem."""

  def __init__(self, shardings: collections.abc.Mapping | None, mesh: jax.sharding.Mesh, per_replica: bool):
    self.shardings = shardings or {}
    self.meshes = getattr(shardings, "meshes", {})
    self.source = getattr(shardings, "source", "the sharding file")
    self.mesh = mesh
    self.per_replica = per_replica
    self.matched: set[str] = set()
    self.problems: list[str] = []

  def sharding(self, key_path) -> jax.sharding.Sharding:
    """The sharding of one array (replicated when the file does not name it)."""
    name = next((n for n in _names(key_path) if n in self.shardings), None)
    if name is None:
      return jax.sharding.NamedSharding(self.mesh, jax.sharding.PartitionSpec())
    self.matched.add(name)
    spec, recorded = self.shardings[name], self.meshes.get(name)
    if self.per_replica and recorded is not None:
      return self._on_replicas(name, spec, recorded)
    missing = spec_axes(spec) - set(self.mesh.axis_names)
    if not missing:
      return jax.sharding.NamedSharding(self.mesh, spec)
    if recorded is not None and math.prod(recorded.shape) == self.mesh.devices.size:
      return jax.sharding.NamedSharding(jax.sharding.Mesh(self.mesh.devices.reshape(recorded.shape), recorded.axes), spec)
    self.problems.append(f"{name} names axes {sorted(missing)} that mesh {list(self.mesh.axis_names)} lacks")
    return jax.sharding.NamedSharding(self.mesh, jax.sharding.PartitionSpec())

  def _on_replicas(self, name: str, spec, recorded: RecordedMesh) -> jax.sharding.Sharding:
    """Orbax's multi-replica layout: the recorded mesh on each replica's devices, `replica` in front."""
    devices = self.mesh.devices
    per_replica = devices.size // devices.shape[0]
    if math.prod(recorded.shape) != per_replica:
      self.problems.append(
          f"{name} records a mesh of {math.prod(recorded.shape)} devices; a replica of mesh"
          f" {dict(self.mesh.shape)} has {per_replica}"
      )
      return jax.sharding.NamedSharding(self.mesh, jax.sharding.PartitionSpec())
    mesh = jax.sharding.Mesh(devices.reshape(-1, *recorded.shape), ("replica", *recorded.axes))
    return jax.sharding.NamedSharding(mesh, spec)

  def raise_problems(self, checkpoint: str) -> None:
    unmatched = sorted(set(self.shardings) - self.matched)
    problems = [f"{n} matches no array of {checkpoint}" for n in unmatched] + self.problems
    if problems:
      raise CkptbenchError(f"sharding file {self.source}: {_joined(problems)}")


def _joined(problems: list[str]) -> str:
  more = len(problems) - _SHOWN
  return "; ".join(problems[:_SHOWN]) + (f"; and {more} more" if more > 0 else "")


def check_loaded_shardings(loaded: Any, abstract: Any, what: str = "the load") -> None:
  """Raises unless every array `loaded` holds carries the sharding `abstract` asked for.

  Raises:
    CkptbenchError: naming every array laid out otherwise.
  """
  wrong = []
  asked = dict(jax.tree_util.tree_leaves_with_path(abstract))
  for key_path, leaf in jax.tree_util.tree_leaves_with_path(loaded):
    want = getattr(asked.get(key_path), "sharding", None)
    got = getattr(leaf, "sharding", None)
    if want is None or not hasattr(leaf, "ndim"):
      continue
    if got is None or not got.is_equivalent_to(want, leaf.ndim):
      wrong.append(f"{jax.tree_util.keystr(key_path)}: asked {_describe(want)}, got {_describe(got)}")
  if wrong:
    raise CkptbenchError(f"{what} did not return the sharding asked for: {_joined(wrong)}")


def _describe(sharding: Any) -> str:
  if isinstance(sharding, jax.sharding.NamedSharding):
    return f"{tuple(sharding.spec)} on {dict(sharding.mesh.shape)}"
  return repr(sharding)

