"""Parsing `checkpoint_config.spec` into a tree of ArraySpec / ScalarSpec."""

from __future__ import annotations

import difflib
from typing import Any, Callable

import pydantic

from ckptbench.config._dtypes import ITEMSIZES
from ckptbench.config._models import ArraySpec, DimSharding, MeshConfig, ScalarSpec

DTYPES = tuple(ITEMSIZES)

SpecTree = dict[str, "ArraySpec | ScalarSpec | SpecTree"]
# Raises a located ConfigError: (message, key path relative to the spec).
ErrorAt = Callable[[str, tuple], Exception]


def parse_spec(raw: Any, error_at: ErrorAt) -> SpecTree:
  """Validates a raw `spec` mapping; nested mappings make a nested pytree."""
  if not isinstance(raw, dict) or not raw:
    raise error_at("spec must be a non-empty mapping of name -> {dtype, shape, sharding}", ())
  return _parse_node(raw, (), error_at)


def _parse_node(raw: dict, path: tuple, error_at: ErrorAt) -> SpecTree:
  tree: SpecTree = {}
  for name, value in raw.items():
    here = path + (name,)
    if isinstance(value, str):
      if value not in ("int", "str"):
        raise error_at(f"a scalar leaf must be \"int\" or \"str\", got {value!r}", here)
      tree[name] = ScalarSpec(kind=value)
    elif isinstance(value, dict) and ("dtype" in value or "shape" in value):
      tree[name] = _parse_array(value, here, error_at)
    elif isinstance(value, dict) and value:
      tree[name] = _parse_node(value, here, error_at)
    else:
      raise error_at(
          "expected {dtype, shape, sharding}, \"int\", \"str\" or a nested mapping, got"
          f" {value!r}",
          here,
      )
  return tree


def _parse_array(value: dict, path: tuple, error_at: ErrorAt) -> ArraySpec:
  dtype = value.get("dtype")
  if isinstance(dtype, str) and dtype not in DTYPES:
    close = difflib.get_close_matches(dtype, DTYPES, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(DTYPES)}"
    raise error_at(f"unknown dtype {dtype!r}{hint}", path + ("dtype",))
  try:
    return ArraySpec.model_validate(value)
  except pydantic.ValidationError as e:
    err = e.errors()[0]
    loc = tuple(p for p in err["loc"] if p in value or isinstance(p, int))
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
      msg = "unknown key; an array takes dtype, shape and sharding"
    elif loc[:1] == ("shape",):
      loc = ("shape",)
      msg = f"shape must be a list of positive integers, got {value.get('shape')!r}"
    raise error_at(msg, path + loc) from None


def iter_arrays(tree: SpecTree, prefix: tuple = ()):
  """Yields (key path, ArraySpec) for every array leaf."""
  for name, node in tree.items():
    if isinstance(node, ArraySpec):
      yield prefix + (name,), node
    elif isinstance(node, dict):
      yield from iter_arrays(node, prefix + (name,))


def without_absent_axes(tree: SpecTree, mesh: MeshConfig) -> tuple[SpecTree, tuple[str, ...]]:
  """`tree` with the sharding axes `mesh` lacks taken out (those dimensions are replicated).

  Returns the new tree and the axes taken out, sorted.
  """
  present = set(mesh.mesh_axes)
  dropped: set[str] = set()

  def entry(e: DimSharding) -> DimSharding:
    axes = () if e is None else (e,) if isinstance(e, str) else tuple(e)
    dropped.update(a for a in axes if a not in present)
    kept = tuple(a for a in axes if a in present)
    return None if not kept else kept[0] if len(kept) == 1 else kept

  def walk(node: SpecTree) -> SpecTree:
    out: SpecTree = {}
    for name, value in node.items():
      if isinstance(value, ArraySpec):
        out[name] = value.model_copy(update={"sharding": tuple(entry(e) for e in value.sharding)})
      elif isinstance(value, dict):
        out[name] = walk(value)
      else:
        out[name] = value
    return out

  new = walk(tree)
  return new, tuple(sorted(dropped))


def check_spec_against_mesh(tree: SpecTree, mesh: MeshConfig, error_at: ErrorAt) -> None:
  """Every sharding axis exists in the mesh and divides its dimension."""
  sizes = mesh.axis_sizes()
  for path, array in iter_arrays(tree):
    for dim, axes in enumerate(array.dim_axes()):
      for axis in axes:
        if axis not in sizes:
          raise error_at(
              f"sharding axis {axis!r} is not an axis of mesh {mesh.describe()}"
              f" (mesh_axes: {list(mesh.mesh_axes)})",
              path + ("sharding",),
          )
      degree = 1
      for axis in axes:
        degree *= sizes[axis]
      if array.shape[dim] % degree:
        raise error_at(
            f"dimension {dim} of size {array.shape[dim]} is not divisible by the"
            f" {degree} devices of axes {list(axes)} in mesh {mesh.describe()}",
            path + ("shape",),
        )

