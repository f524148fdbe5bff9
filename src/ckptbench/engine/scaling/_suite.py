"""One suite at several host counts: the suite each count runs, and whether its processes fit.

The suite's mesh is one host's. At `n` hosts the scaled axis (default `fsdp`) spans `n` times
as many devices, one set per process. Weak scaling keeps each host's shard: every tensor
dimension sharded over the scaled axis grows `n` times, so each device holds the same shard at
any host count. Strong scaling keeps the data, so each host holds `1/n` of it. A preset becomes
its explicit spec first, so its tensors (names, count, dimensions) stay those of the preset.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import pathlib
from typing import Any, Sequence

import yaml

from ckptbench.config import Suite, dtype_itemsize, preset_spec
from ckptbench.errors import CkptbenchError, ConfigError
from ckptbench.engine.memory._fit import CPU_FACTOR, available_host_memory
from ckptbench.engine._sizes import format_bytes
from ckptbench.storage import is_store_url

MODES = ("weak", "strong")
# What one emulated host's process holds before any checkpoint data: Python, JAX on CPU, Orbax,
# TensorStore and the shaped link's client (host_rss_peak_mib of a 2-process run here: 306-322 MiB).
PROCESS_BYTES = 400 << 20
_PRESET_KEYS = ("preset", "scale", "include_optimizer_state")


@dataclasses.dataclass(frozen=True)
class ScaledSuite:
  """The suite one host count runs."""

  hosts: int
  devices_per_host: int
  raw: dict[str, Any]
  data_bytes: int  # the checkpoint's bytes over all hosts
  host_bytes: int  # the largest share of them one host holds


def _mesh(suite: Suite, axis: str) -> dict[str, Any]:
  raw = suite.raw
  if "mesh_configs" in raw or not isinstance(raw.get("mesh_config"), dict):
    raise ConfigError("scale needs exactly one mesh_config (one host's mesh)", file=suite.file, key="mesh_config")
  mesh = raw["mesh_config"]
  if mesh.get("dcn_parallelism"):
    raise ConfigError("scale adds hosts along one ICI axis; remove dcn_parallelism", file=suite.file,
                      key="mesh_config.dcn_parallelism")  # fmt: skip
  if axis not in mesh.get("mesh_axes", []):
    raise ConfigError(f"the mesh has no axis {axis!r} to add hosts along (--axis); its axes are"
                      f" {mesh.get('mesh_axes')}", file=suite.file, key="mesh_config.mesh_axes")  # fmt: skip
  return mesh


def _spec(suite: Suite) -> dict[str, Any]:
  """The suite's one checkpoint as an explicit spec (a preset resolved)."""
  raw = suite.raw
  ckpt = raw.get("checkpoint_config")
  if "checkpoint_configs" in raw or not isinstance(ckpt, dict):
    raise ConfigError("scale needs exactly one checkpoint_config", file=suite.file, key="checkpoint_config")
  if "preset" in ckpt:
    return preset_spec(ckpt["preset"], ckpt.get("scale", 1.0), ckpt.get("include_optimizer_state", False))
  if "spec" not in ckpt:
    raise ConfigError("scale needs synthetic data (a spec or a preset), not an existing checkpoint",
                      file=suite.file, key="checkpoint_config")  # fmt: skip
  return copy.deepcopy(ckpt["spec"])


def _leaves(tree: dict[str, Any]):
  for value in tree.values():
    if isinstance(value, dict) and "shape" in value:
      yield value
    elif isinstance(value, dict):
      yield from _leaves(value)


def _scale_leaves(spec: dict[str, Any], axes: Sequence[str], axis: str, factor: int) -> None:
  """In place: axes the mesh lacks replicated; dimensions sharded over `axis` times `factor`."""
  for leaf in _leaves(spec):
    sharding = list(leaf.get("sharding") or [None] * len(leaf["shape"]))
    sharding = [s if s in axes else None for s in sharding]
    leaf["sharding"] = sharding
    leaf["shape"] = [d * factor if s == axis else d for d, s in zip(leaf["shape"], sharding)]


def _bytes(spec: dict[str, Any], ici: dict[str, int]) -> tuple[int, int]:
  """(all bytes, the bytes of one device's shards) of a spec on a mesh of degrees `ici`."""
  total = per_device = 0
  for leaf in _leaves(spec):
    size = math.prod(leaf["shape"]) * dtype_itemsize(str(leaf.get("dtype", "float32")))
    split = math.prod(ici.get(s, 1) for s in leaf["sharding"] if s)
    total += size
    per_device += size // split
  return total, per_device


def scaled_suites(suite: Suite, hosts: Sequence[int], mode: str, axis: str, checkpoint_root: str) -> list[ScaledSuite]:
  """The suite each host count runs, its checkpoints below `checkpoint_root/hosts_<n>`.

  Raises:
    ConfigError: a suite scale cannot run (several meshes or checkpoints, no `axis`, existing data).
    CkptbenchError: an unknown mode or a root that is not a store.
  """
  if mode not in MODES:
    raise CkptbenchError(f"Invalid value for mode={mode!r}, possible values are {MODES}")
  if not is_store_url(checkpoint_root):
    raise CkptbenchError(
        f"scale counts requests on an object store: the checkpoint root {checkpoint_root!r} is not gs:// or"
        " s3:// (give --checkpoint_root, checkpoint_root: in the suite, or --emulate gcs)"
    )
  mesh = _mesh(suite, axis)
  base = _spec(suite)
  devices = math.prod(mesh["ici_parallelism"].values())
  out = []
  for n in hosts:
    ici = {**mesh["ici_parallelism"], axis: mesh["ici_parallelism"][axis] * n}
    spec = copy.deepcopy(base)
    _scale_leaves(spec, mesh["mesh_axes"], axis, n if mode == "weak" else 1)
    raw = copy.deepcopy(suite.raw)
    ckpt = {k: v for k, v in raw["checkpoint_config"].items() if k not in _PRESET_KEYS}
    raw["checkpoint_config"] = {**ckpt, "spec": spec}
    raw["mesh_config"] = {**mesh, "ici_parallelism": ici}
    raw["checkpoint_root"] = f"{checkpoint_root.rstrip('/')}/hosts_{n}"
    total, per_device = _bytes(spec, ici)
    out.append(ScaledSuite(n, devices, raw, total, per_device * devices))
  return out


def write_suite(scaled: ScaledSuite, directory: pathlib.Path) -> pathlib.Path:
  """Writes the suite of one host count as YAML; returns its path."""
  directory.mkdir(parents=True, exist_ok=True)
  path = directory / f"hosts_{scaled.hosts}.yaml"
  path.write_text(yaml.safe_dump(scaled.raw, sort_keys=False))
  return path


def memory_refusal(suites: Sequence[ScaledSuite]) -> str | None:
  """Why some host counts cannot start on this machine, or None when all fit.

  Each emulated host is a process here: `PROCESS_BYTES` plus its shards times the factor `run`'s
  memory check uses on CPU, against the memory `run` checks (the machine's or its cgroup's).
  """
  available, source = available_host_memory()
  refused = []
  for s in suites:
    need = s.hosts * (PROCESS_BYTES + s.host_bytes * CPU_FACTOR)
    if need > available:
      refused.append(f"{s.hosts} hosts need about {format_bytes(need)}")
  if not refused:
    return None
  return (
      f"--hosts: {'; '.join(refused)} ({format_bytes(PROCESS_BYTES)} per process plus its shards x {CPU_FACTOR})"
      f" but the limit is {format_bytes(available)} ({source}); drop those host counts or use smaller shapes"
  )
