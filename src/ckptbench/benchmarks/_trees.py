"""Pytree helpers of the built-ins: abstract trees and the restored-data check."""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

_MAX_LISTED = 10


class DataMismatchError(AssertionError):
  """Restored data differs from what was saved; the run fails."""


def abstract_of(tree: Any, sharding: Callable[[Any], Any] | None = None) -> Any:
  """`jax.ShapeDtypeStruct`s of `tree`'s jax arrays, with `sharding(leaf)` or the leaf's own sharding.

  Other leaves (Python and numpy scalars, strings) stay as they are.
  """

  def one(leaf):
    if not isinstance(leaf, jax.Array):
      return leaf
    target = sharding(leaf) if sharding is not None else leaf.sharding
    return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=target)

  return jax.tree.map(one, tree)


def tree_nbytes(tree: Any) -> int:
  """Global bytes of the arrays in `tree` (arrays or ShapeDtypeStructs)."""
  return sum(
      int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize
      for x in jax.tree.leaves(tree)
      if hasattr(x, "shape") and hasattr(x, "dtype")
  )


def _bits(x: np.ndarray) -> bytes:
  return np.ascontiguousarray(x).tobytes()


def _leaf_problems(name: str, expected: Any, actual: Any, target: Any) -> list[str]:
  if not hasattr(expected, "shape"):
    return [] if expected == actual else [f"{name}: expected {expected!r}, got {actual!r}"]
  if not hasattr(actual, "shape"):
    return [f"{name}: expected an array, got {type(actual).__name__}"]
  if tuple(actual.shape) != tuple(expected.shape) or actual.dtype != expected.dtype:
    return [
        f"{name}: expected {expected.dtype}{list(expected.shape)},"
        f" got {actual.dtype}{list(actual.shape)}"
    ]
  problems = []
  if target is not None and isinstance(actual, jax.Array):
    if not actual.sharding.is_equivalent_to(target, actual.ndim):
      problems.append(f"{name}: restored with sharding {actual.sharding}, expected {target}")
  full = np.asarray(expected)
  if isinstance(actual, jax.Array):
    for shard in actual.addressable_shards:
      if _bits(np.asarray(shard.data)) != _bits(full[shard.index]):
        problems.append(f"{name}: values differ in the shard on {shard.device} at {shard.index}")
        break
  elif _bits(np.asarray(actual)) != _bits(full):
    problems.append(f"{name}: values differ")
  return problems


def assert_same_data(expected: Any, actual: Any, *, what: str, target: Any = None) -> int:
  """Checks that `actual` holds bit for bit the data of `expected`.

  Args:
    expected: the tree that was saved (or read independently).
    actual: the restored tree; each device shard is compared with its slice.
    what: names the check in the error message, e.g. "load into target sharding".
    target: an optional abstract tree; each restored array must have its sharding.

  Returns:
    The number of bytes verified.

  Raises:
    DataMismatchError: listing every leaf that differs (structure, dtype,
      shape, sharding or values).
  """
  exp_flat = {jax.tree_util.keystr(k): v for k, v in jax.tree_util.tree_leaves_with_path(expected)}
  act_flat = {jax.tree_util.keystr(k): v for k, v in jax.tree_util.tree_leaves_with_path(actual)}
  tgt_flat = {}
  if target is not None:
    tgt_flat = {
        jax.tree_util.keystr(k): getattr(v, "sharding", None)
        for k, v in jax.tree_util.tree_leaves_with_path(target)
    }
  problems = [f"{k}: missing from the restored tree" for k in exp_flat if k not in act_flat]
  problems += [f"{k}: not in the saved tree" for k in act_flat if k not in exp_flat]
  for name, value in exp_flat.items():
    if name in act_flat:
      problems += _leaf_problems(name, value, act_flat[name], tgt_flat.get(name))
  if problems:
    listed = "; ".join(problems[:_MAX_LISTED])
    more = f" (and {len(problems) - _MAX_LISTED} more)" if len(problems) > _MAX_LISTED else ""
    raise DataMismatchError(f"{what}: restored data differs from the saved data: {listed}{more}")
  return tree_nbytes(expected)
