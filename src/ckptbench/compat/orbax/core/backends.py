"""Orbax's `core.backends`: which JAX backend the benchmarks run on."""

from __future__ import annotations

import jax


def is_simdevice() -> bool:
  """Whether JAX runs on SimDevice (simulated TPUs on CPU, whose device names say so)."""
  return str(jax.devices()[0]).startswith("SimDevice")
