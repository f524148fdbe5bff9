"""Comparing restored data with saved data, shard by shard where the shards live."""

from __future__ import annotations

import hashlib
import os
from typing import Any

import jax
import numpy as np

from ckptbench.data._leaf_names import leaf_name
from ckptbench.data._read_errors import DataMismatchError


def _raw(data: Any) -> np.ndarray:
  """The bytes of an array as uint8, so NaN payloads (random_bits fills) compare exactly."""
  array = np.ascontiguousarray(np.asarray(data))
  return array.reshape(-1).view(np.uint8)


def pytree_checksums(pytree: Any) -> dict[str, Any]:
  """Per-array checksums; for jax arrays, one digest per addressable shard index.

  Each process hashes only the shards it holds, so two processes (or a process
  before and after a restart) can compare checkpoints without moving data.
  """
  out: dict[str, Any] = {}
  for key_path, leaf in jax.tree_util.tree_leaves_with_path(pytree):
    name = leaf_name(key_path)
    if isinstance(leaf, (jax.Array, np.ndarray)):
      shards = leaf.addressable_shards if isinstance(leaf, jax.Array) else []
      digests = {str(s.index): _digest(s.data) for s in shards} or {"full": _digest(leaf)}
      out[name] = {"dtype": str(leaf.dtype), "shape": list(leaf.shape), "shards": digests}
    else:
      out[name] = leaf
  return out


def _digest(data: Any) -> str:
  return hashlib.blake2b(_raw(data), digest_size=16).hexdigest()


def _local_shards(leaf: jax.Array) -> dict[str, np.ndarray]:
  return {str(s.index): s.data for s in leaf.addressable_shards}


def shard_index_of(leaf: jax.Array, key: str) -> tuple[slice, ...]:
  return next(s.index for s in leaf.addressable_shards if str(s.index) == key)


def _format_index(index: tuple[slice, ...], shape: tuple[int, ...]) -> str:
  """`[0:8, 0:32]` for a shard's slices (whole dimensions written out)."""
  parts = []
  for s, n in zip(index, shape):
    start, stop, _ = s.indices(n)
    parts.append(f"{start}:{stop}")
  return f"[{', '.join(parts)}]"


def _array_differs(expected: Any, actual: Any) -> str | None:
  if (str(expected.dtype), tuple(expected.shape)) != (str(actual.dtype), tuple(actual.shape)):
    return f"dtype/shape {expected.dtype}{list(expected.shape)} != {actual.dtype}{list(actual.shape)}"
  if isinstance(expected, jax.Array) and isinstance(actual, jax.Array):
    if expected.sharding != actual.sharding:
      actual = jax.device_put(actual, expected.sharding)
    want, got = _local_shards(expected), _local_shards(actual)
    for index, shard in want.items():
      if not np.array_equal(_raw(shard), _raw(got[index])):
        return f"shard {_format_index(shard_index_of(expected, index), expected.shape)}"
    return None
  return None if np.array_equal(_raw(expected), _raw(actual)) else "content"


def verify_pytree(expected: Any, actual: Any) -> int:
  """Raises DataMismatchError naming every array whose restored bytes differ.

  Each process compares the shards it holds, byte for byte. Returns the number
  of leaves checked.
  """
  want = dict((leaf_name(p), v) for p, v in jax.tree_util.tree_leaves_with_path(expected))
  got = dict((leaf_name(p), v) for p, v in jax.tree_util.tree_leaves_with_path(actual))
  bad = []
  for name in sorted(set(want) & set(got)):
    w, g = want[name], got[name]
    if hasattr(w, "shape") and hasattr(g, "shape"):
      problem = _array_differs(w, g)
    else:
      problem = None if w == g else f"{w!r} != {g!r}"
    if problem:
      bad.append(f"{name} ({problem})")
  problems = []
  if bad:
    problems.append(f"restored data differs from saved data in {len(bad)} array(s): {', '.join(bad[:10])}")
  if missing := sorted(set(want) - set(got)):
    problems.append(f"missing after restore: {', '.join(missing[:10])}")
  if extra := sorted(set(got) - set(want)):
    problems.append(f"unexpected after restore: {', '.join(extra[:10])}")
  if problems:
    raise DataMismatchError("; ".join(problems))
  return len(want)
