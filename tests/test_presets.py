"""Model-size presets: real Llama 3.1 shapes, scaling that keeps the structure."""

from __future__ import annotations

import pytest

import ckptbench
from ckptbench.config._presets import PRESETS, preset_shape, preset_spec, preset_summary


@pytest.mark.parametrize(
    "name, params",
    [("llama-3.1-8b", 8_030_261_248), ("llama-3.1-70b", 70_553_706_496), ("llama-3.1-405b", 405_853_388_800)],
)
def test_full_size_parameter_counts_match_the_published_models(name, params):
  assert preset_summary(name)["param_count"] == params


def test_layer_shapes_use_grouped_query_attention_and_shardings():
  layer = preset_spec("llama-3.1-8b")["params"]["layers"]["layer_31"]
  assert layer["attention"]["wq"]["shape"] == [4096, 4096]
  assert layer["attention"]["wk"]["shape"] == [4096, 1024]  # 8 KV heads x 128
  assert layer["mlp"]["down"] == {"dtype": "bfloat16", "shape": [14336, 4096], "sharding": ["tensor", "fsdp"]}
  assert layer["attention_norm"]["sharding"] == [None]


@pytest.mark.parametrize("name", PRESETS)
def test_scaled_presets_keep_structure_and_divisibility(name):
  full, small = preset_shape(name), preset_shape(name, 0.001)
  assert (small.num_heads, small.num_kv_heads) == (full.num_heads, full.num_kv_heads)
  assert small.num_layers < full.num_layers and small.hidden < full.hidden
  summary = preset_summary(name, 0.001)
  assert 0.0003 < summary["param_count"] / preset_summary(name)["param_count"] < 0.003
  for dim in (small.hidden, small.intermediate, small.vocab, small.num_kv_heads * small.head_dim):
    assert dim % 64 == 0


def test_optimizer_state_adds_float32_moments():
  summary = preset_summary("llama-3.1-8b", 0.0001, include_optimizer_state=True)
  assert summary["optimizer_bytes"] == 2 * 2 * summary["param_bytes"]  # mu + nu, f32 vs bf16
  spec = preset_spec("llama-3.1-8b", 0.0001, True)
  assert spec["opt_state"]["nu"]["embedding"]["dtype"] == "float32"


def test_bad_names_and_scales_are_user_errors():
  with pytest.raises(ckptbench.CkptbenchError, match="possible values are llama-3.1-8b"):
    preset_spec("llama-3-8b", 0.1)
  with pytest.raises(ckptbench.CkptbenchError, match=r"\(0, 1\]"):
    preset_spec("llama-3.1-8b", 2)
