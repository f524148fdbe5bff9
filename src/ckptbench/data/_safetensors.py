"""Writing a pytree as a Hugging Face-style sharded safetensors checkpoint.

`model-00001-of-0000N.safetensors` files of at most about `shard_bytes` each
(a tensor larger than that gets a file of its own), plus
`model.safetensors.index.json` mapping every tensor to its file, as the Hub
ships models. Tensors are named by their key paths joined with "." (the Hub's
convention); the sharding file written beside it uses the same names, so a
safetensors load can lay each tensor out as the suite's mesh would.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import jax
import numpy as np

from ckptbench.data._leaf_names import leaf_name
from ckptbench.errors import CkptbenchError


def safetensors_name(key_path) -> str:
  """The tensor name of a pytree leaf: its key path joined with "."."""
  return leaf_name(key_path, ".")


def write_safetensors(pytree: Any, directory: pathlib.Path, shard_bytes: int) -> list[pathlib.Path]:
  """Writes every array of `pytree` into sharded safetensors files under `directory`.

  Raises:
    CkptbenchError: when the `safetensors` package is missing (the `torch` extra).
  """
  try:
    from safetensors.numpy import save_file  # noqa: PLC0415  (optional: the torch extra)
  except ImportError:
    raise CkptbenchError(
        "writing safetensors needs the safetensors package: pip install 'ckptbench[torch]'"
    ) from None
  groups: list[dict[str, np.ndarray]] = [{}]
  size = 0
  for key_path, leaf in jax.tree_util.tree_leaves_with_path(pytree):
    if not hasattr(leaf, "shape"):
      continue
    array = np.asarray(leaf)
    if groups[-1] and size + array.nbytes > shard_bytes:
      groups.append({})
      size = 0
    groups[-1][safetensors_name(key_path)] = array
    size += array.nbytes
  directory.mkdir(parents=True, exist_ok=True)
  files, weight_map, total = [], {}, 0
  for i, group in enumerate(groups):
    path = directory / f"model-{i + 1:05d}-of-{len(groups):05d}.safetensors"
    save_file(group, str(path), metadata={"format": "np"})
    files.append(path)
    for name, array in group.items():
      weight_map[name] = path.name
      total += array.nbytes
  index = {"metadata": {"total_size": total}, "weight_map": weight_map}
  (directory / "model.safetensors.index.json").write_text(json.dumps(index, indent=1, sort_keys=True))
  return files
