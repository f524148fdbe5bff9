"""Orbax's `pytree_utils.assert_functional_equivalence`: two parameter sets, the same model outputs."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ckptbench.compat.orbax.core import backends


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
