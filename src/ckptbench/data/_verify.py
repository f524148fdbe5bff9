"""Comparing restored data with saved data, shard by shard where the shards live."""

from __future__ import annotations

import hashlib
from typing import Any

import jax
import numpy as np

from ckptbench.data._existing import leaf_name
from ckptbench.errors import CkptbenchError


class DataMismatchError(CkptbenchError):
  """Restored data differs from what was saved; the message names the arrays."""

  exit_code = 1


def _digest(data: np.ndarray) -> str:
  return hashlib.blake2b(np.ascontiguousarray(data).tobytes(), digest_size=16).hexdigest()


def pytree_checksums(pytree: Any) -> dict[str, Any]:
  """Per-array checksums: for jax arrays, one digest per addressable shard.

  Digests are of the raw bytes, so NaN payloads (random_bits fills) compare
  exactly. Each process hashes only the shards it holds.
  """
  out: dict[str, Any] = {}
  for key_path, leaf in jax.tree_util.tree_leaves_with_path(pytree):
    name = leaf_name(key_path)
    if isinstance(leaf, jax.Array):
      out[name] = {
          (str(s.device.id), str(s.index)): _digest(np.asarray(s.data)) for s in leaf.addressable_shards
      }
      out[name]["dtype"], out[name]["shape"] = str(leaf.dtype), tuple(leaf.shape)
    elif isinstance(leaf, np.ndarray):
      out[name] = {"full": _digest(leaf), "dtype": str(leaf.dtype), "shape": leaf.shape}
    else:
      out[name] = leaf
  return out


def _by_position(shards: dict) -> dict:
  """Checksums keyed by shard index only (a restore may place shards on other devices)."""
  return {(k[1] if isinstance(k, tuple) else k): v for k, v in shards.items()}


def verify_pytree(expected: Any, actual: Any) -> int:
  """Raises DataMismatchError naming every array whose restored bytes differ.

  Compares per-shard checksums when both sides share a sharding layout, and
  the full arrays otherwise. Returns the number of arrays checked.
  """
  want, got = pytree_checksums(expected), pytree_checksums(actual)
  missing = sorted(set(want) - set(got))
  extra = sorted(set(got) - set(want))
  bad = []
  for name in sorted(set(want) & set(got)):
    w, g = want[name], got[name]
    if isinstance(w, dict) and isinstance(g, dict):
      if (w["dtype"], w["shape"]) != (g["dtype"], g["shape"]):
        bad.append(f"{name} (dtype/shape {w['dtype']}{list(w['shape'])} != {g['dtype']}{list(g['shape'])})")
      elif _by_position(w) != _by_position(g) and not _same_content(expected, actual, name):
        bad.append(name)
    elif w != g:
      bad.append(f"{name} ({w!r} != {g!r})")
  problems = []
  if bad:
    problems.append(f"restored data differs from saved data in {len(bad)} array(s): {', '.join(bad[:10])}")
  if missing:
    problems.append(f"missing after restore: {', '.join(missing[:10])}")
  if extra:
    problems.append(f"unexpected after restore: {', '.join(extra[:10])}")
  if problems:
    raise DataMismatchError("; ".join(problems))
  return len(want)


def _same_content(expected: Any, actual: Any, name: str) -> bool:
  """Byte comparison of one array whose two sides are sharded differently."""
  leaves_e = {leaf_name(p): l for p, l in jax.tree_util.tree_leaves_with_path(expected)}
  leaves_a = {leaf_name(p): l for p, l in jax.tree_util.tree_leaves_with_path(actual)}
  e, a = leaves_e[name], leaves_a[name]
  if isinstance(e, jax.Array) and isinstance(a, jax.Array) and e.sharding != a.sharding:
    a = jax.device_put(a, e.sharding)
    return all(
        _digest(np.asarray(x.data)) == _digest(np.asarray(y.data))
        for x, y in zip(e.addressable_shards, a.addressable_shards)
    )
  return False
