"""Orbax's `core.pytree_utils` on ckptbench: compare, digest and log pytrees.

`assert_pytree_equal` is ckptbench's `verify_pytree` (byte for byte, shard by
shard) behind Orbax's structure and type checks; `digest_pytree` hashes
ckptbench's `pytree_checksums` of each leaf (dtype, shape, this process's shards).
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any, Callable, Sequence

import jax
import numpy as np

import ckptbench
from ckptbench.compat.orbax.core import backends

_log = logging.getLogger(__name__)


def _leaf_key(key_path: Any) -> str:
  return jax.tree_util.keystr(key_path) or "<root>"


def assert_pytree_equal(pytree_expected: Any, pytree_actual: Any) -> None:
  """Raises AssertionError (Orbax's messages, naming the leaf) unless both pytrees have one structure,
  leaf types, dtypes, shapes and bytes."""
  expected, expected_def = jax.tree_util.tree_flatten_with_path(pytree_expected)
  actual, actual_def = jax.tree_util.tree_flatten_with_path(pytree_actual)
  if expected_def != actual_def:
    raise AssertionError(f"Pytree structure mismatch: expected {expected_def}, actual {actual_def}")
  for (key_path, want), (_, got) in zip(expected, actual):
    where = _leaf_key(key_path)
    if not isinstance(got, type(want)):
      raise AssertionError(f"Type mismatch at {where}: expected {type(want)}, actual {type(got)}")
    for attr in ("dtype", "shape"):
      if hasattr(want, attr) and hasattr(got, attr) and getattr(want, attr) != getattr(got, attr):
        raise AssertionError(f"{attr.title()} mismatch at {where}: expected {getattr(want, attr)}, actual {getattr(got, attr)}")
    try:
      ckptbench.verify_pytree(want, got)
    except ckptbench.DataMismatchError as e:
      if hasattr(want, "shape"):
        raise AssertionError(f"Error at {where}: {e}") from None
      raise AssertionError(f"Value mismatch at {where}: expected {want!r}, actual {got!r}") from None


def log_pytree(msg: str, pytree: Any) -> None:
  """Logs every leaf's path, shape, dtype and sharding (not its values)."""
  for key_path, leaf in jax.tree_util.tree_flatten_with_path(pytree)[0]:
    _log.info(
        "%s %s: shape=%s dtype=%s sharding=%s", msg, _leaf_key(key_path),
        getattr(leaf, "shape", None), getattr(leaf, "dtype", None), getattr(leaf, "sharding", None),
    )  # fmt: skip


def digest_pytree(pytree: Any) -> dict[str, str]:
  """Per-leaf SHA-256 of (dtype, shape, the bytes of this process's shards), keyed by leaf path: load
  benchmarks capture these once and check later loads with `assert_digests_match`."""
  leaves = jax.tree_util.tree_flatten_with_path(pytree)[0]
  out = {}
  for key_path, leaf in leaves:
    checksum = ckptbench.pytree_checksums(leaf)
    text = json.dumps(checksum, sort_keys=True, default=repr)
    out[_leaf_key(key_path)] = hashlib.sha256(text.encode()).hexdigest()
  return out


def assert_digests_match(expected_digests: dict[str, str], pytree: Any) -> None:
  """Raises AssertionError naming the first leaf missing, unexpected or differing from `expected_digests`."""
  actual = digest_pytree(pytree)
  for key in sorted(set(expected_digests) ^ set(actual)):
    where = "missing in pytree" if key in expected_digests else "unexpected"
    raise AssertionError(f"Digest key mismatch at {key}: {where}")
  for key, want in expected_digests.items():
    if actual[key] != want:
      raise AssertionError(f"Digest mismatch at {key}: expected {want}, got {actual[key]}")


def assert_functional_equivalence(
    model_apply_fn: Callable[[Any, Any], Any],
    reference_inputs: Sequence[Any],
    expected_params: Any,
    actual_params: Any,
    tolerance: float = 1e-6,
) -> None:
  """Raises AssertionError naming the first input where `model_apply_fn(params, x)` differs for the two
  parameter sets (in float64: a shape mismatch, a NaN or a difference above `tolerance`); ValueError
  without inputs, RuntimeError on SimDevice, whose outputs are fabricated, not computed."""
  if backends.is_simdevice():
    raise RuntimeError(
        "assert_functional_equivalence is meaningless on SimDevice: model outputs are fabricated, not computed,"
        " so any two parameter sets compare equal."
    )
  if not reference_inputs:
    raise ValueError("reference_inputs must be a non-empty sequence")
  for i, x in enumerate(reference_inputs):
    expected = np.asarray(model_apply_fn(expected_params, x), dtype=np.float64)
    actual = np.asarray(model_apply_fn(actual_params, x), dtype=np.float64)
    if expected.shape != actual.shape:
      raise AssertionError(f"Output shape mismatch on input {i}: {expected.shape} vs {actual.shape}")
    diff = float(np.max(np.abs(expected - actual))) if expected.size else 0.0
    if not diff <= tolerance:  # a NaN fails too
      raise AssertionError(f"Functional divergence on input {i}: max_abs_diff={diff} > tolerance={tolerance}")
