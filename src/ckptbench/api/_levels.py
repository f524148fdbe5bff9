"""How every table names the levels of a factor (a checkpoint config, a mesh, a swept mapping): by the `name:`
the suite gave each, else by what differs between them, never by a level's whole text.

Benchmark names, the verdict tables, the effects tables and `plan` all call `level_labels`, so a level
reads the same everywhere: two checkpoint configs that differ in their spec are `spec: layers
[16,1024,1024]` and `spec: 16 arrays`, whatever else they hold.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

_SHOWN_DIFFERENCES = 2  # the differences a label names; more are counted
_LISTED_LEAVES = 2  # a spec of more arrays than this is named by their count


def level_labels(levels: Sequence[Any]) -> list[str]:
  """A short label for each level, alike only where the levels are alike.

  Args:
    levels: the levels, in their order: mappings (a config as its suite wrote it) or plain values.

  Returns:
    One label per level: the `name:` the suite gave it, else a mesh's axes (`fsdp4x2`) when they tell the
    meshes apart, else what differs between the levels (`spec: 16 arrays`); a label still shared by
    different levels gets `#<n>`, its place among them.

  Example:
    >>> level_labels([{"fill": "normal", "spec": {"layers": {"dtype": "float32", "shape": [16, 1024, 1024]}}},
    ...               {"fill": "normal", "spec": {f"layer_{i:02}": {"dtype": "float32", "shape": [1024, 1024]}
    ...                                           for i in range(16)}}])
    ['spec: layers float32[16,1024,1024]', 'spec: 16 arrays']
  """
  texts = [_canonical(level) for level in levels]
  distinct = list(dict.fromkeys(texts))
  firsts = [levels[texts.index(text)] for text in distinct]
  unnamed = [_without_name(level) for level in firsts]
  meshes = [mesh_name(level) for level in unnamed if _is_mesh(level)]
  if len(distinct) < 2:
    described = [mesh_name(level) if _is_mesh(level) else _brief(level) for level in unnamed]
  elif len(meshes) == len(firsts) and len(set(meshes)) == len(meshes):
    described = meshes
  else:
    described = _differences_named(unnamed)
  labels = [_own_name(level) or text for level, text in zip(firsts, described)]
  by_text = dict(zip(distinct, _told_apart(labels)))
  return [by_text[text] for text in texts]


def variant_labels(variants: Sequence[tuple[Mapping[str, Any], Any, Any]]) -> list[str]:
  """Each benchmark of a sweep by what sets it apart: its swept options, then its mesh and its checkpoint
  config where those vary, each level named by `level_labels`.

  Args:
    variants: (swept option values, mesh, checkpoint config) of each benchmark, as its records hold them.

  Example:
    >>> variant_labels([({"use_ocdbt": True}, None, {"preset": "llama3_8b", "scale": 0.01}),
    ...                 ({"use_ocdbt": True}, None, {"preset": "llama3_8b", "scale": 0.1})])
    ['use_ocdbt=True, scale: 0.01', 'use_ocdbt=True, scale: 0.1']
  """
  options = list(dict.fromkeys(name for varying, _, _ in variants for name in varying))
  named = {name: level_labels([varying.get(name) for varying, _, _ in variants]) for name in options}
  meshes = level_labels([mesh for _, mesh, _ in variants])
  checkpoints = level_labels([checkpoint for _, _, checkpoint in variants])
  labels = []
  for i, (varying, _, _) in enumerate(variants):
    parts = [f"{name}={named[name][i]}" for name in varying]
    parts += [f"mesh={meshes[i]}"] if len(set(meshes)) > 1 else []
    parts += [checkpoints[i]] if len(set(checkpoints)) > 1 else []
    labels.append(", ".join(parts))
  return labels


def is_reference(varying: Mapping[str, Any], reference: Mapping[str, Any]) -> bool:
  """Whether a benchmark's swept values are those the suite's `reference:` picks (`true` is True, `1` is 1).

  Example:
    >>> is_reference({"use_ocdbt": False, "save_concurrent_gb": 1.0}, {"use_ocdbt": "false"})
    True
  """
  return all(
      k in varying and (varying[k] == v or str(varying[k]).lower() == str(v).lower()) for k, v in reference.items()
  )


def mesh_name(mesh: Mapping[str, Any]) -> str:
  """A mesh by its axes and their global sizes (ICI x DCN degree): `fsdp4x2` is fsdp 4 wide, tensor 2.

  Example:
    >>> mesh_name({"mesh_axes": ["fsdp", "tensor"], "ici_parallelism": {"fsdp": 4, "tensor": 2}})
    'fsdp4xtensor2'
  """
  ici, dcn = mesh.get("ici_parallelism") or {}, mesh.get("dcn_parallelism") or {}
  return "x".join(f"{axis}{ici.get(axis, 1) * dcn.get(axis, 1)}" for axis in mesh["mesh_axes"])


def _is_mesh(level: Any) -> bool:
  return isinstance(level, Mapping) and "mesh_axes" in level


def _own_name(level: Any) -> str | None:
  name = level.get("name") if isinstance(level, Mapping) else None
  return str(name) if name else None


def _without_name(level: Any) -> Any:
  return {k: v for k, v in level.items() if k != "name"} if isinstance(level, Mapping) else level


def _canonical(value: Any) -> str:
  return json.dumps(value, sort_keys=True, default=str)


def _told_apart(labels: list[str]) -> list[str]:
  """`labels` with `#n` after each one that two different levels share."""
  counts = {label: labels.count(label) for label in labels}
  seen: dict[str, int] = {}
  out = []
  for label in labels:
    if counts[label] > 1:
      seen[label] = seen.get(label, 0) + 1
      label = f"{label} #{seen[label]}"
    out.append(label)
  return out


def _differences_named(levels: Sequence[Any]) -> list[str]:
  """Each level by the paths where the levels differ (`spec: 16 arrays; fill: zeros`)."""
  if not all(isinstance(level, Mapping) for level in levels):
    return [_brief(level) for level in levels]
  paths = _differing_paths(levels, ())
  labels = []
  for level in levels:
    parts = [f"{'.'.join(path)}: {_brief(_at(level, path))}" for path in paths[:_SHOWN_DIFFERENCES]]
    if len(paths) > _SHOWN_DIFFERENCES:
      parts.append(f"+{len(paths) - _SHOWN_DIFFERENCES} more differences")
    labels.append("; ".join(parts))
  return labels


_MISSING = object()


def _at(level: Any, path: tuple[str, ...]) -> Any:
  for key in path:
    level = level.get(key, _MISSING) if isinstance(level, Mapping) else _MISSING
  return level


def _differing_paths(levels: Sequence[Any], path: tuple[str, ...]) -> list[tuple[str, ...]]:
  """The paths below `path` where the levels differ, going into mappings that hold the same keys."""
  values = [_at(level, path) for level in levels]
  if len({_canonical(v) if v is not _MISSING else "\0" for v in values}) < 2:
    return []
  keys = [list(v) if isinstance(v, Mapping) else None for v in values]
  if path and (None in keys or any(set(k) != set(keys[0]) for k in keys) or _is_array(values[0])):
    return [path]
  if not path or keys[0] is not None:
    found = [p for key in dict.fromkeys(k for ks in keys if ks for k in ks) for p in _differing_paths(levels, (*path, key))]
    return found or [path]
  return [path]


def _is_array(value: Any) -> bool:
  """An array of a spec: `{dtype: float32, shape: [..], ...}`."""
  return isinstance(value, Mapping) and "shape" in value


def _leaves(value: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
  if isinstance(value, Mapping) and not _is_array(value):
    return [leaf for key, item in value.items() for leaf in _leaves(item, (*path, str(key)))]
  return [(path, value)]


def _brief(value: Any) -> str:
  """A value in a few words: `float32[16,1024]`, `16 arrays`, `True`, `-` for none."""
  if value is _MISSING or value is None:
    return "-"
  if _is_array(value):
    shape = ",".join(map(str, value.get("shape") or []))
    return f"{value.get('dtype', '')}[{shape}]"
  if isinstance(value, Mapping):
    leaves = _leaves(value)
    if len(leaves) > _LISTED_LEAVES:
      kind = "arrays" if all(_is_array(leaf) for _, leaf in leaves) else "entries"
      return f"{len(leaves)} {kind}"
    return ", ".join(f"{'.'.join(path)} {_brief(leaf)}" for path, leaf in leaves)
  if isinstance(value, (list, tuple)):
    return "[" + ",".join(_brief(item) for item in value) + "]"
  return value_text(value)


def value_text(value: Any) -> str:
  """An option's value as a suite writes it: `1` for the 1.0 a float option holds, `True`, `0.5`.

  Example:
    >>> [value_text(v) for v in (1.0, 0.5, True, "zarr3")]
    ['1', '0.5', 'True', 'zarr3']
  """
  if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
    return str(int(value))
  return str(value)


_LISTED_ARRAYS = 3  # a spec of more arrays than this is said by count per dtype and shape


def spec_text(spec: Mapping[str, Any]) -> str:
  """A spec's arrays by name, dtype and shape, or by count per dtype and shape when there are many.

  Example:
    >>> spec_text({"params": {"dtype": "bfloat16", "shape": [256, 64]}, "step": "int"})
    'params bfloat16[256,64], step int'
    >>> spec_text({f"layer_{i}": {"dtype": "float32", "shape": [1024, 1024]} for i in range(16)})
    '16 x float32[1024,1024]'
  """
  leaves = _leaves(spec)
  if len(leaves) <= _LISTED_ARRAYS:
    return ", ".join(f"{'.'.join(path)} {_brief(leaf)}" for path, leaf in leaves)
  counts: dict[str, int] = {}
  for _, leaf in leaves:
    counts[_brief(leaf)] = counts.get(_brief(leaf), 0) + 1
  return ", ".join(f"{n} x {text}" for text, n in counts.items())
