"""Model-size presets: the real per-layer tensor shapes of Llama 3.1 models.

`preset_spec` returns a checkpoint spec in the form a suite's
`checkpoint_config.spec` takes (nested names down to leaves
`{dtype, shape, sharding}`), so a preset goes through the same synthetic-data
path as a hand-written spec. `scale` shrinks the model so that it fits a small
machine while keeping its structure: the same tensor names, the same number of
attention heads and key/value heads (so the grouped-query ratio holds), and
dimensions rounded to multiples that typical mesh degrees divide.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ckptbench.errors import CkptbenchError

# Every sharded dimension is rounded to a multiple of this, so meshes whose
# `fsdp` and `tensor` degrees divide it (1, 2, 4, ..., 64) can shard each tensor.
_DIM_MULTIPLE = 64
_HEAD_DIM_MULTIPLE = 8
_VOCAB_MULTIPLE = 128

_BYTES_PER_ELEMENT = {"bfloat16": 2, "float16": 2, "float32": 4}
_OPTIMIZER_DTYPE = "float32"


@dataclasses.dataclass(frozen=True)
class ModelShape:
  """The dimensions that determine every tensor of a Llama-style decoder."""

  num_layers: int
  hidden: int
  intermediate: int
  vocab: int
  num_heads: int
  num_kv_heads: int
  head_dim: int


# Published Llama 3.1 configurations (hidden size, MLP size, layers, heads).
_MODELS: dict[str, ModelShape] = {
    "llama-3.1-8b": ModelShape(32, 4096, 14336, 128256, 32, 8, 128),
    "llama-3.1-70b": ModelShape(80, 8192, 28672, 128256, 64, 8, 128),
    "llama-3.1-405b": ModelShape(126, 16384, 53248, 128256, 128, 8, 128),
}

PRESETS: tuple[str, ...] = tuple(_MODELS)


def _round_up(value: float, multiple: int) -> int:
  return max(multiple, int(math.ceil(value / multiple)) * multiple)


def preset_shape(name: str, scale: float = 1.0) -> ModelShape:
  """The model dimensions of preset `name` shrunk by `scale`.

  `scale` is the approximate fraction of the parameter count to keep: layers,
  head size, MLP size and vocabulary each shrink by `scale ** (1/3)`. Head
  counts stay as published; sizes are rounded up to multiples of 8 (head size),
  64 (MLP) and 128 (vocabulary).

  Raises:
    CkptbenchError: for an unknown name or a scale outside (0, 1].
  """
  if name not in _MODELS:
    raise CkptbenchError(
        f"unknown model preset {name!r}; possible values are {', '.join(PRESETS)}"
    )
  if not (isinstance(scale, (int, float)) and 0 < scale <= 1):
    raise CkptbenchError(f"invalid preset scale {scale!r}; it must lie in (0, 1]")
  full = _MODELS[name]
  if scale == 1:
    return full
  factor = scale ** (1 / 3)
  return ModelShape(
      num_layers=max(1, round(full.num_layers * factor)),
      hidden=full.num_heads * _round_up(full.head_dim * factor, _HEAD_DIM_MULTIPLE),
      intermediate=_round_up(full.intermediate * factor, _DIM_MULTIPLE),
      vocab=_round_up(full.vocab * factor, _VOCAB_MULTIPLE),
      num_heads=full.num_heads,
      num_kv_heads=full.num_kv_heads,
      head_dim=_round_up(full.head_dim * factor, _HEAD_DIM_MULTIPLE),
  )


def _leaf(shape: list[int], sharding: list[str | None], dtype: str) -> dict[str, Any]:
  return {"dtype": dtype, "shape": shape, "sharding": sharding}


def _params(m: ModelShape, dtype: str) -> dict[str, Any]:
  q_dim = m.num_heads * m.head_dim
  kv_dim = m.num_kv_heads * m.head_dim
  # Megatron-style: column-parallel inputs split their output dimension over
  # `tensor`, row-parallel outputs split their input dimension; the other
  # dimension goes to `fsdp`. Norm scales are small and replicated.
  column = ["fsdp", "tensor"]
  row = ["tensor", "fsdp"]
  layers = {}
  for i in range(m.num_layers):
    layers[f"layer_{i}"] = {
        "attention": {
            "wq": _leaf([m.hidden, q_dim], column, dtype),
            "wk": _leaf([m.hidden, kv_dim], column, dtype),
            "wv": _leaf([m.hidden, kv_dim], column, dtype),
            "wo": _leaf([q_dim, m.hidden], row, dtype),
        },
        "attention_norm": _leaf([m.hidden], [None], dtype),
        "mlp": {
            "gate": _leaf([m.hidden, m.intermediate], column, dtype),
            "up": _leaf([m.hidden, m.intermediate], column, dtype),
            "down": _leaf([m.intermediate, m.hidden], row, dtype),
        },
        "mlp_norm": _leaf([m.hidden], [None], dtype),
    }
  return {
      "embedding": _leaf([m.vocab, m.hidden], ["tensor", "fsdp"], dtype),
      "layers": layers,
      "final_norm": _leaf([m.hidden], [None], dtype),
      "output": _leaf([m.hidden, m.vocab], column, dtype),
  }


def _with_dtype(tree: dict[str, Any], dtype: str) -> dict[str, Any]:
  if "shape" in tree:
    return {**tree, "dtype": dtype}
  return {k: _with_dtype(v, dtype) for k, v in tree.items()}


def preset_spec(
    name: str,
    scale: float = 1.0,
    include_optimizer_state: bool = False,
    *,
    dtype: str = "bfloat16",
) -> dict[str, Any]:
  """A checkpoint spec with the tensors of model preset `name`.

  Args:
    name: one of `PRESETS` ("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b").
    scale: approximate fraction of the parameter count to keep, in (0, 1].
    include_optimizer_state: add Adam's first and second moments (`mu`, `nu`,
      float32, sharded like the parameters) under `opt_state`.
    dtype: the parameters' dtype.

  Returns:
    `{"params": {...}}` (plus `"opt_state": {"mu": ..., "nu": ...}`), whose
    leaves are `{"dtype": str, "shape": [int, ...], "sharding": [axis|None, ...]}`
    with axes named `fsdp` and `tensor`.

  Raises:
    CkptbenchError: for an unknown name, scale or dtype.

  Example:
    >>> spec = preset_spec("llama-3.1-8b", 0.001)
    >>> spec["params"]["layers"]["layer_0"]["attention"]["wk"]["sharding"]
    ['fsdp', 'tensor']
  """
  if dtype not in _BYTES_PER_ELEMENT:
    raise CkptbenchError(
        f"invalid preset dtype {dtype!r}; possible values are {', '.join(_BYTES_PER_ELEMENT)}"
    )
  params = _params(preset_shape(name, scale), dtype)
  spec: dict[str, Any] = {"params": params}
  if include_optimizer_state:
    spec["opt_state"] = {
        "mu": _with_dtype(params, _OPTIMIZER_DTYPE),
        "nu": _with_dtype(params, _OPTIMIZER_DTYPE),
    }
  return spec


def _leaves(tree: dict[str, Any]):
  if "shape" in tree:
    yield tree
    return
  for value in tree.values():
    yield from _leaves(value)


def preset_summary(
    name: str,
    scale: float = 1.0,
    include_optimizer_state: bool = False,
    *,
    dtype: str = "bfloat16",
) -> dict[str, Any]:
  """Sizes of a preset for `ckptbench plan`: dimensions, parameters, bytes.

  Returns:
    A dict with the preset `name`, `scale`, the `ModelShape` fields, `num_tensors`,
    `param_count`, `param_bytes`, `optimizer_bytes` and `total_bytes`.

  Example:
    >>> preset_summary("llama-3.1-8b")["param_count"]
    8030261248
  """
  spec = preset_spec(name, scale, include_optimizer_state, dtype=dtype)
  params = list(_leaves(spec["params"]))
  param_count = sum(math.prod(leaf["shape"]) for leaf in params)
  optimizer = list(_leaves(spec.get("opt_state", {})))
  optimizer_bytes = sum(
      math.prod(leaf["shape"]) * _BYTES_PER_ELEMENT[leaf["dtype"]] for leaf in optimizer
  )
  param_bytes = param_count * _BYTES_PER_ELEMENT[dtype]
  return {
      "name": name,
      "scale": scale,
      **dataclasses.asdict(preset_shape(name, scale)),
      "num_tensors": len(params) + len(optimizer),
      "param_count": param_count,
      "param_bytes": param_bytes,
      "optimizer_bytes": optimizer_bytes,
      "total_bytes": param_bytes + optimizer_bytes,
  }
