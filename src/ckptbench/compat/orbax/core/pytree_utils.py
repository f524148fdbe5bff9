"""Orbax's `core.pytree_utils` on ckptbench: compare, digest and log pytrees.

`assert_pytree_equal` is ckptbench's `verify_pytree` (byte-for-byte, shard by
shard on each process) behind Orbax's structure and type checks, raising
`AssertionError` as Orbax's does. `digest_pytree` hashes ckptbench's
`pytree_checksums` of each leaf, so a digest covers dtype, shape and the bytes
of every shard this process holds.
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
  """Raises AssertionError unless both pytrees have one structure, leaf types, dtypes, shapes and bytes.

  The messages are Orbax's: "Type mismatch at", "Dtype mismatch at", "Shape
  mismatch at", "Error at" (array bytes) and "Value mismatch at" (other leaves),
  each naming the leaf.

  Args:
    pytree_expected: the reference pytree.
    pytree_actual: the pytree to check.
  """
  expected, expected_def = jax.tree_util.tree_flatten_with_path(pytree_expected)
  actual, actual_def = jax.tree_util.tree_flatten_with_path(pytree_actual)
  if expected_def != actual_def:
    raise AssertionError(f"Pytree structure mismatch: expected {expected_def}, actual {actual_def}")
  for (key_path, want), (_, got) in zip(expected, actual):
    where = _leaf_key(key_path)
    if not isinstance(got, type(want)):
      raise AssertionError(f"Type mismatch at {where}: expected {type(want)}, actual {type(got)}")
    if hasattr(want, "dtype") and hasattr(got, "dtype") and want.dtype != got.dtype:
      raise AssertionError(f"Dtype mismatch at {where}: expected {want.dtype}, actual {got.dtype}")
    if hasattr(want, "shape") and hasattr(got, "shape") and want.shape != got.shape:
      raise AssertionError(f"Shape mismatch at {where}: expected {want.shape}, actual {got.shape}")
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
  """Per-leaf SHA-256 of (dtype, shape, the bytes of this process's shards), keyed by leaf path.

  Load benchmarks capture these once and check later loads with
  `assert_digests_match`; each process digests what it holds.
  """
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
  """Raises AssertionError unless `model_apply_fn(params, x)` agrees for both parameter sets on every input.

  Outputs are compared in float64; a shape mismatch, a NaN or an absolute
  difference above `tolerance` fails.

  Raises:
    ValueError: `reference_inputs` is empty.
    AssertionError: naming the first input whose outputs differ.
    RuntimeError: on SimDevice, whose outputs are fabricated, not computed.
  """
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
