"""Model-size presets: the real per-layer tensor shapes of published models.

Dense decoders (Llama 3.1, Mistral 7B, MLPerf Storage's 1T model),
mixtures of experts (Mixtral 8x7B) and DeepSeek-V3 (latent attention, one
shared and 256 routed experts per MoE layer, three leading dense layers).

`preset_spec` returns a checkpoint spec in the form a suite's
`checkpoint_config.spec` takes (nested names down to leaves
`{dtype, shape, sharding}`), so a preset goes through the same synthetic-data
path as a hand-written spec. `scale` shrinks the model so that it fits a small
machine while keeping its structure: the same tensor names, the same number of
attention heads, key/value heads and experts, and dimensions rounded to
multiples that typical mesh degrees divide. Tensors shard over `fsdp`,
`tensor` and (expert weights) `expert`; on a mesh that lacks one of these axes
the dimensions sharded over it are replicated.
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
  """The dimensions that determine every tensor of a decoder.

  Attention is grouped-query (`num_heads` query heads of `head_dim`,
  `num_kv_heads` key/value heads) unless `kv_lora_rank` is set: then it is
  DeepSeek's multi-head latent attention, with `head_dim` the part of each
  query/key head without rotary embedding, `rope_head_dim` the rotary part and
  `v_head_dim` the value head size. With `num_experts`, every layer after the
  first `num_dense_layers` replaces its MLP by a router, `num_experts` routed
  experts and `num_shared_experts` always-active ones, each an MLP of width
  `expert_intermediate`.
  """

  num_layers: int
  hidden: int
  intermediate: int
  vocab: int
  num_heads: int
  num_kv_heads: int
  head_dim: int
  num_experts: int = 0
  num_shared_experts: int = 0
  expert_intermediate: int = 0
  num_dense_layers: int = 0
  q_lora_rank: int = 0
  kv_lora_rank: int = 0
  rope_head_dim: int = 0
  v_head_dim: int = 0


# Published configurations (Hugging Face config.json of each model; MLPerf
# Storage's DLIO workload llama3_1t.yaml). MLPerf's 1T model has hidden size
# 25872, which its 192 heads do not divide: its attention here uses 128-wide
# heads (q 24576, kv 4096 wide), 0.8% fewer parameters than hidden-wide q/o.
_MODELS: dict[str, ModelShape] = {
    "llama-3.1-8b": ModelShape(32, 4096, 14336, 128256, 32, 8, 128),
    "llama-3.1-70b": ModelShape(80, 8192, 28672, 128256, 64, 8, 128),
    "llama-3.1-405b": ModelShape(126, 16384, 53248, 128256, 128, 8, 128),
    "mistral-7b": ModelShape(32, 4096, 14336, 32000, 32, 8, 128),
    "mixtral-8x7b": ModelShape(32, 4096, 14336, 32000, 32, 8, 128, num_experts=8, expert_intermediate=14336),
    "deepseek-v3": ModelShape(
        61, 7168, 18432, 129280, 128, 128, 128, num_experts=256, num_shared_experts=1,
        expert_intermediate=2048, num_dense_layers=3, q_lora_rank=1536, kv_lora_rank=512,
        rope_head_dim=64, v_head_dim=128,
    ),
    "mlperf-storage-1t": ModelShape(128, 25872, 98304, 128256, 192, 32, 128),
}  # fmt: skip

PRESETS: tuple[str, ...] = tuple(_MODELS)


def _round_up(value: float, multiple: int) -> int:
  return max(multiple, int(math.ceil(value / multiple)) * multiple)


def preset_shape(name: str, scale: float = 1.0) -> ModelShape:
  """The model dimensions of preset `name` shrunk by `scale`.

  `scale` is the approximate fraction of the parameter count to keep: layers,
  head size, MLP and expert widths, latent ranks and vocabulary each shrink by
  `scale ** (1/3)`. Head and expert counts stay as published; sizes are
  rounded up to multiples of 8 (head sizes), 64 (widths) and 128 (vocabulary).

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
  head_dim = _round_up(full.head_dim * factor, _HEAD_DIM_MULTIPLE)
  # Where the hidden size is the heads' total width (Llama, Mistral), it stays so.
  tied = full.hidden == full.num_heads * full.head_dim
  width = lambda n: _round_up(n * factor, _DIM_MULTIPLE) if n else 0  # noqa: E731
  num_layers = max(1, round(full.num_layers * factor))
  return dataclasses.replace(
      full,
      num_layers=num_layers,
      hidden=full.num_heads * head_dim if tied else width(full.hidden),
      intermediate=width(full.intermediate),
      vocab=_round_up(full.vocab * factor, _VOCAB_MULTIPLE),
      head_dim=head_dim,
      expert_intermediate=width(full.expert_intermediate),
      # Keep at least one MoE layer when the model has two layers or more.
      num_dense_layers=min(full.num_dense_layers, max(0, num_layers - 1)),
      q_lora_rank=width(full.q_lora_rank),
      kv_lora_rank=width(full.kv_lora_rank),
      rope_head_dim=_round_up(full.rope_head_dim * factor, _HEAD_DIM_MULTIPLE) if full.rope_head_dim else 0,
      v_head_dim=_round_up(full.v_head_dim * factor, _HEAD_DIM_MULTIPLE) if full.v_head_dim else 0,
  )


def _leaf(shape: list[int], sharding: list[str | None], dtype: str) -> dict[str, Any]:
  return {"dtype": dtype, "shape": shape, "sharding": sharding}


# Megatron-style: column-parallel inputs split their output dimension over
# `tensor`, row-parallel outputs split their input dimension; the other
# dimension goes to `fsdp`. Norm scales are small and replicated.
_COLUMN = ["fsdp", "tensor"]
_ROW = ["tensor", "fsdp"]


def _attention(m: ModelShape, dtype: str) -> dict[str, Any]:
  if not m.kv_lora_rank:
    q_dim, kv_dim = m.num_heads * m.head_dim, m.num_kv_heads * m.head_dim
    return {
        "wq": _leaf([m.hidden, q_dim], _COLUMN, dtype),
        "wk": _leaf([m.hidden, kv_dim], _COLUMN, dtype),
        "wv": _leaf([m.hidden, kv_dim], _COLUMN, dtype),
        "wo": _leaf([q_dim, m.hidden], _ROW, dtype),
    }
  # Latent attention: queries and keys/values go through low-rank projections.
  qk = m.head_dim + m.rope_head_dim
  return {
      "wq_a": _leaf([m.hidden, m.q_lora_rank], _COLUMN, dtype),
      "q_norm": _leaf([m.q_lora_rank], [None], dtype),
      "wq_b": _leaf([m.q_lora_rank, m.num_heads * qk], _COLUMN, dtype),
      "wkv_a": _leaf([m.hidden, m.kv_lora_rank + m.rope_head_dim], ["fsdp", None], dtype),
      "kv_norm": _leaf([m.kv_lora_rank], [None], dtype),
      "wkv_b": _leaf([m.kv_lora_rank, m.num_heads * (m.head_dim + m.v_head_dim)], _COLUMN, dtype),
      "wo": _leaf([m.num_heads * m.v_head_dim, m.hidden], _ROW, dtype),
  }


def _mlp(hidden: int, width: int, dtype: str) -> dict[str, Any]:
  return {
      "gate": _leaf([hidden, width], _COLUMN, dtype),
      "up": _leaf([hidden, width], _COLUMN, dtype),
      "down": _leaf([width, hidden], _ROW, dtype),
  }


def _moe(m: ModelShape, dtype: str) -> dict[str, Any]:
  # Routed experts are stacked along a leading expert dimension (expert parallelism).
  e, w = m.num_experts, m.expert_intermediate
  moe = {
      "router": _leaf([m.hidden, e], ["fsdp", None], dtype),
      "experts": {
          "gate": _leaf([e, m.hidden, w], ["expert", "fsdp", "tensor"], dtype),
          "up": _leaf([e, m.hidden, w], ["expert", "fsdp", "tensor"], dtype),
          "down": _leaf([e, w, m.hidden], ["expert", "tensor", "fsdp"], dtype),
      },
  }
  if m.num_shared_experts:
    moe["shared_experts"] = _mlp(m.hidden, w * m.num_shared_experts, dtype)
  return moe


def _params(m: ModelShape, dtype: str) -> dict[str, Any]:
  layers = {}
  for i in range(m.num_layers):
    dense = not m.num_experts or i < m.num_dense_layers
    layers[f"layer_{i}"] = {
        "attention": _attention(m, dtype),
        "attention_norm": _leaf([m.hidden], [None], dtype),
        "mlp" if dense else "moe": _mlp(m.hidden, m.intermediate, dtype) if dense else _moe(m, dtype),
        "mlp_norm": _leaf([m.hidden], [None], dtype),
    }
  return {
      "embedding": _leaf([m.vocab, m.hidden], ["tensor", "fsdp"], dtype),
      "layers": layers,
      "final_norm": _leaf([m.hidden], [None], dtype),
      "output": _leaf([m.hidden, m.vocab], _COLUMN, dtype),
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
    name: one of `PRESETS` ("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b",
      "mistral-7b", "mixtral-8x7b", "deepseek-v3", "mlperf-storage-1t").
    scale: approximate fraction of the parameter count to keep, in (0, 1].
    include_optimizer_state: add Adam's first and second moments (`mu`, `nu`,
      float32, sharded like the parameters) under `opt_state`.
    dtype: the parameters' dtype.

  Returns:
    `{"params": {...}}` (plus `"opt_state": {"mu": ..., "nu": ...}`), whose
    leaves are `{"dtype": str, "shape": [int, ...], "sharding": [axis|None, ...]}`
    with axes named `fsdp`, `tensor` and `expert`.

  Raises:
    CkptbenchError: for an unknown name, scale or dtype.

  Example:
    >>> spec = ckptbench.preset_spec("llama-3.1-8b", 0.001)
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
    >>> ckptbench.preset_summary("llama-3.1-8b")["param_count"]
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
