"""compat.orbax's assert_functional_equivalence: two parameter sets checked by the outputs they give."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from ckptbench.compat.orbax.core import pytree_utils


def _linear(params, x):
  return params["W"] @ x


def test_equal_outputs_pass_within_the_tolerance_and_divergence_names_the_input():
  w = {"W": jnp.eye(4, dtype=jnp.float32)}
  inputs = [np.zeros(4, np.float32), np.arange(4, dtype=np.float32)]
  pytree_utils.assert_functional_equivalence(_linear, inputs, w, {"W": w["W"] + 1e-6}, tolerance=1e-3)
  with pytest.raises(AssertionError, match=r"Functional divergence on input 1: max_abs_diff=3.0 > tolerance=1e-06"):
    pytree_utils.assert_functional_equivalence(_linear, inputs, w, {"W": w["W"] * 2})
  with pytest.raises(AssertionError, match=r"Functional divergence on input 0: max_abs_diff=nan"):
    pytree_utils.assert_functional_equivalence(_linear, inputs, w, {"W": w["W"] * np.nan})


def test_a_shape_change_or_no_input_fails():
  w = {"W": np.eye(4, dtype=np.float32)}
  with pytest.raises(AssertionError, match=r"Output shape mismatch on input 0: \(4,\) vs \(5,\)"):
    pytree_utils.assert_functional_equivalence(_linear, [np.zeros(4, np.float32)], w, {"W": np.eye(5, 4, dtype=np.float32)})
  with pytest.raises(ValueError, match="non-empty"):
    pytree_utils.assert_functional_equivalence(_linear, [], w, w)
