"""Orbax's shipped suite files scaled to this machine, with small local fixtures of the same layout.

Scaling changes only what cannot run here: every mesh shrinks to at most 8
devices (halving its largest degree, ici first on a tie; duplicates dropped),
array shapes in a spec shrink to at most 64K elements, repeats (2, also when
unset) and savings (2) are capped (time), and every gs://orbax-benchmarks/..., /mnt/gcs_bucket/... or
/tfhub/... path becomes a path under FIXTURES holding a small fixture of the
same layout: an Orbax checkpoint (a v0 step directory's `items` for a
checkpoint_config path, as Orbax's framework loads those; a v1 checkpoint for the
benchmarks' reference and load paths),
a directory of Hugging Face-style safetensors files, or a sharding file in
Orbax's format (flat dotted names, the recorded mesh, the spec). A sharding
file for a (replica, model) suite describes one replica, as Orbax's are.
Nothing of Orbax's is copied: the suite files are read from the installed wheel.
"""

from __future__ import annotations

import json
import math
import pathlib
import re
from typing import Any

import numpy as np
import orbax.checkpoint
import yaml

MAX_DEVICES = 8
MAX_ELEMENTS = 1 << 16
MAX_REPEATS = 2
MAX_SAVINGS = 2
SUITE_DIRS = ("configs", "orbax_load/configs", "safetensors/configs")
_REMOTE = (("gs://orbax-benchmarks/", ""), ("/mnt/gcs_bucket/", "mnt_gcs_bucket/"), ("/tfhub/", "tfhub/"))
_SHARDING_KEYS = ("sharding_config_path", "reference_sharding_path")
_CHECKPOINT_KEYS = ("path", "reference_checkpoint_path", "checkpoint_path")

# A tiny Llama-like model: names as the Hub writes them (safetensors) and as a
# JAX training state nests them (Orbax checkpoints).
_TENSORS = {
    "model.embed_tokens.weight": (256, 64),
    "model.layers.0.self_attn.q_proj.weight": (64, 64),
    "model.layers.0.mlp.up_proj.weight": (128, 64),
    "model.layers.0.mlp.down_proj.weight": (64, 128),
    "model.layers.1.self_attn.q_proj.weight": (64, 64),
    "model.layers.1.mlp.up_proj.weight": (128, 64),
    "model.norm.weight": (64,),
    "lm_head.weight": (256, 64),
}


def wheel_root() -> pathlib.Path:
  return pathlib.Path(orbax.checkpoint.__file__).parent / "_src" / "testing" / "benchmarks"


def suite_files() -> list[pathlib.Path]:
  root = wheel_root()
  return sorted(p for d in SUITE_DIRS for p in (root / d).rglob("*.yaml"))


def relative_name(path: pathlib.Path) -> str:
  return path.relative_to(wheel_root()).as_posix()


def scale_mesh(mesh: dict[str, Any]) -> dict[str, Any]:
  """The mesh with its largest degree halved until it has at most MAX_DEVICES devices."""
  ici = dict(mesh.get("ici_parallelism") or {})
  dcn = dict(mesh.get("dcn_parallelism") or {})
  while math.prod(ici.values()) * math.prod(dcn.values()) > MAX_DEVICES:
    largest = max([("ici", k, v) for k, v in ici.items()] + [("dcn", k, v) for k, v in dcn.items()],
                  key=lambda t: (t[2], t[0] == "ici"))  # fmt: skip
    table = ici if largest[0] == "ici" else dcn
    table[largest[1]] = max(1, largest[2] // 2)
  out = dict(mesh)
  if "ici_parallelism" in mesh:
    out["ici_parallelism"] = ici
  if "dcn_parallelism" in mesh:
    out["dcn_parallelism"] = dcn
  return out


def _scale_shape(shape: list[int]) -> list[int]:
  shape = list(shape)
  while math.prod(shape) > MAX_ELEMENTS:
    i = shape.index(max(shape))
    shape[i] //= 2
  return shape


def _local(value: str, fixtures: pathlib.Path) -> str:
  for prefix, local in _REMOTE:
    if value.startswith(prefix):
      return str(fixtures / (local + value[len(prefix):]))
  return value


def _mesh_size(suite: dict[str, Any]) -> tuple[list[str], int, int]:
  """(axes, devices, devices per replica) of the suite's first mesh."""
  meshes = suite.get("mesh_configs") or ([suite["mesh_config"]] if suite.get("mesh_config") else [])
  if not meshes:
    return [], MAX_DEVICES, MAX_DEVICES
  mesh = meshes[0]
  ici, dcn = mesh.get("ici_parallelism") or {}, mesh.get("dcn_parallelism") or {}
  devices = math.prod(ici.values()) * math.prod(dcn.values())
  return list(mesh["mesh_axes"]), devices, math.prod(ici.values())


class Scaled:
  """One suite file scaled: the YAML text to run, and the fixtures it needs (written by `write_fixtures`)."""

  def __init__(self, path: pathlib.Path, fixtures: pathlib.Path):
    self.source = path
    self.fixtures = pathlib.Path(fixtures)
    self.checkpoints: list[tuple[pathlib.Path, bool]] = []  # (path, a v0 PyTree directory)
    self.safetensors: list[pathlib.Path] = []
    self.sharding_files: list[tuple[pathlib.Path, bool]] = []  # (path, safetensors names)
    self.suite = self._scaled(yaml.safe_load(path.read_text()))

  def text(self) -> str:
    return yaml.safe_dump(self.suite, sort_keys=False)

  def _scaled(self, suite: dict[str, Any]) -> dict[str, Any]:
    suite = dict(suite)
    # Unset, Orbax's runner repeats once and ckptbench's `auto` repeats until its
    # comparisons are decided (up to its time budget): written out, as capped.
    if suite.get("num_repeats", MAX_REPEATS + 1) > MAX_REPEATS:
      suite["num_repeats"] = MAX_REPEATS
    if suite.get("mesh_config"):
      suite["mesh_config"] = scale_mesh(suite["mesh_config"])
    if suite.get("mesh_configs"):
      scaled = []
      for mesh in suite["mesh_configs"]:
        mesh = scale_mesh(mesh)
        if mesh not in scaled:
          scaled.append(mesh)
      suite["mesh_configs"] = scaled
    for key in ("checkpoint_config", "checkpoint_configs"):
      if suite.get(key):
        entries = suite[key] if isinstance(suite[key], list) else [suite[key]]
        entries = [self._checkpoint(dict(c), suite) for c in entries]
        suite[key] = entries if key == "checkpoint_configs" else entries[0]
    suite["benchmarks"] = [
        {**b, "options": self._options(dict(b.get("options") or {}), suite)} for b in suite["benchmarks"]
    ]
    return suite

  def _checkpoint(self, config: dict[str, Any], suite: dict[str, Any]) -> dict[str, Any]:
    if isinstance(config.get("spec"), dict):
      config["spec"] = {
          name: {**leaf, "shape": _scale_shape(leaf["shape"])} if isinstance(leaf, dict) and "shape" in leaf else leaf
          for name, leaf in config["spec"].items()
      }
    return self._paths(config, suite)

  def _options(self, options: dict[str, Any], suite: dict[str, Any]) -> dict[str, Any]:
    if isinstance(options.get("num_savings"), int) and options["num_savings"] > MAX_SAVINGS:
      options["num_savings"] = MAX_SAVINGS
    return self._paths(options, suite)

  def _paths(self, table: dict[str, Any], suite: dict[str, Any]) -> dict[str, Any]:
    for key, value in list(table.items()):
      if not isinstance(value, str) or _local(value, self.fixtures) == value:
        continue
      local = pathlib.Path(_local(value, self.fixtures))
      table[key] = str(local) + ("/" if value.endswith("/") else "")
      safetensors = "st_fixtures/" in value or "gcs_bucket" in value
      if key in _SHARDING_KEYS:
        self.sharding_files.append((local, safetensors))
      elif key in _CHECKPOINT_KEYS and safetensors:
        self.safetensors.append(local)
      elif key in _CHECKPOINT_KEYS:
        self.checkpoints.append((local, key == "path"))
    return table

  def write_fixtures(self) -> None:
    """Writes every fixture the scaled suite names (skipping those already there)."""
    for path, pytree_dir in self.checkpoints:
      _write_checkpoint(path, pytree_dir)
    for path in self.safetensors:
      _write_safetensors(path)
    axes, devices, per_replica = _mesh_size(self.suite)
    for path, safetensors in self.sharding_files:
      _write_sharding_file(path, safetensors, axes, devices, per_replica)


def _tree() -> dict[str, Any]:
  """The tiny model as a nested training state (Orbax checkpoints)."""
  rng = np.random.default_rng(0)
  tree: dict[str, Any] = {}
  for name, shape in _TENSORS.items():
    node = tree
    *parents, leaf = name.split(".")
    for part in parents:
      node = node.setdefault(part, {})
    node[leaf] = rng.standard_normal(shape).astype(np.float32)
  return {"params": tree}


def _write_checkpoint(path: pathlib.Path, pytree_dir: bool) -> None:
  """An Orbax checkpoint at `path`.

  `pytree_dir` (what `checkpoint_config.path` names; Orbax's framework loads it
  with the v0 PyTree handler): the `items` of a v0 CheckpointManager step, as
  the bucket's `.../llama-3.1-8B-checkpoints/0/items` are; a path naming the
  step itself (`.../0`) gets the step. Otherwise (`reference_checkpoint_path`,
  `checkpoint_path`: read with v1 `load`) a v1 checkpoint.
  """
  import orbax.checkpoint as ocp0  # noqa: PLC0415
  from orbax.checkpoint import v1 as ocp  # noqa: PLC0415

  if path.exists():
    return
  step = path if re.fullmatch(r"\d+", path.name) else path.parent
  path.parent.mkdir(parents=True, exist_ok=True)
  if not pytree_dir:
    ocp.save(path, _tree())
  elif re.fullmatch(r"\d+", step.name) and step.parent.name.endswith("-checkpoints"):
    if step.exists():
      step.rmdir()  # made empty above: the manager writes the step itself
    with ocp0.CheckpointManager(step.parent) as manager:
      manager.save(int(step.name), args=ocp0.args.Composite(items=ocp0.args.PyTreeSave(_tree())))
      manager.wait_until_finished()
  else:
    with ocp0.PyTreeCheckpointer() as checkpointer:
      checkpointer.save(path, _tree())


def _write_safetensors(directory: pathlib.Path) -> None:
  from safetensors.numpy import save_file  # noqa: PLC0415

  if directory.exists():
    return
  directory.mkdir(parents=True)
  rng = np.random.default_rng(0)
  names = list(_TENSORS)
  files = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
           "model-00002-of-00002.safetensors": names[len(names) // 2:]}  # fmt: skip
  weight_map = {}
  for file, members in files.items():
    save_file({n: rng.standard_normal(_TENSORS[n]).astype(np.float32) for n in members}, str(directory / file))
    weight_map.update({n: file for n in members})
  (directory / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))


def _write_sharding_file(path: pathlib.Path, safetensors: bool, axes: list[str], devices: int, per_replica: int) -> None:
  """Orbax's format. Replica suites: one replica's mesh (data, fsdp, tensor); safetensors: the axis its name says."""
  if path.exists():
    return
  if axes == ["replica", "model"]:
    mesh_axes, shape = ["data", "fsdp", "tensor"], [1, per_replica, 1]
  elif safetensors:
    axis = "tp" if re.search(r"_tp\d+\.json$", path.name) else "fsdp"
    mesh_axes, shape = [axis], [devices]
  else:
    mesh_axes, shape = ["data", "fsdp", "tensor"], [1, devices, 1]
  sharded_axis = mesh_axes[int(np.argmax(shape))]
  out = {}
  for name, dims in _TENSORS.items():
    key = name if safetensors else "params." + name
    spec: list[Any] = [None] * len(dims)
    dim = len(dims) - 1 if sharded_axis == "tp" else 0  # tensor-parallel: the inner dimension, strided reads
    if dims[dim] % max(shape) == 0:
      spec[dim] = sharded_axis
    out[key] = {"shape": list(dims), "dtype": "float32",
                "sharding": {"mesh": {"shape": shape, "axes": mesh_axes}, "spec": spec}}  # fmt: skip
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(json.dumps(out, indent=1))


def devices_for(scaled: Scaled) -> int:
  """The device count to run the scaled suite with: its largest mesh (MAX_DEVICES without one)."""
  meshes = scaled.suite.get("mesh_configs") or ([scaled.suite["mesh_config"]] if scaled.suite.get("mesh_config") else [])
  sizes = [
      math.prod((m.get("ici_parallelism") or {}).values()) * math.prod((m.get("dcn_parallelism") or {}).values())
      for m in meshes
  ]
  return max(sizes, default=MAX_DEVICES)
