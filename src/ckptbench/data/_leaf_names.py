"""How a pytree leaf is named in files: its key path joined into one string."""

from __future__ import annotations

import jax


def leaf_name(key_path, separator: str = "/") -> str:
  """A pytree key path as "a/b/c" (or joined by `separator`: "a.b.c" is how Hub files and Orbax name tensors)."""
  return jax.tree_util.keystr(tuple(key_path), simple=True, separator=separator)
