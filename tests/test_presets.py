"""Model-size presets: real Llama 3.1 shapes, scaling that keeps the structure."""

from __future__ import annotations

import pytest

import ckptbench
from ckptbench import PRESETS, preset_shape, preset_spec, preset_summary


@pytest.mark.parametrize(
    "name, params",
    [
        ("llama-3.1-8b", 8_030_261_248),
        ("llama-3.1-70b", 70_553_706_496),
        ("llama-3.1-405b", 405_853_388_800),
        ("mistral-7b", 7_241_732_096),
        ("mixtral-8x7b", 46_702_792_704),
        ("deepseek-v3", 671_026_404_352),
    ],
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


def test_mixture_of_experts_stacks_experts_and_deepseek_uses_latent_attention():
  mixtral = preset_spec("mixtral-8x7b")["params"]["layers"]["layer_0"]["moe"]
  assert mixtral["experts"]["gate"] == {
      "dtype": "bfloat16", "shape": [8, 4096, 14336], "sharding": ["expert", "fsdp", "tensor"]
  }
  layers = preset_spec("deepseek-v3")["params"]["layers"]
  assert "mlp" in layers["layer_2"] and "moe" in layers["layer_3"]
  assert layers["layer_3"]["moe"]["experts"]["down"]["shape"] == [256, 2048, 7168]
  assert layers["layer_3"]["moe"]["shared_experts"]["up"]["shape"] == [7168, 2048]
  assert layers["layer_0"]["attention"]["wkv_b"]["shape"] == [512, 128 * (128 + 128)]
  small = preset_shape("deepseek-v3", 0.0001)
  assert small.num_experts == 256 and small.num_dense_layers == small.num_layers - 1


def test_mlperf_storage_1t_has_its_published_widths():
  shape = preset_shape("mlperf-storage-1t")
  assert (shape.num_layers, shape.hidden, shape.intermediate, shape.num_heads, shape.num_kv_heads) == (
      128, 25872, 98304, 192, 32
  )
  assert 1.17e12 < preset_summary("mlperf-storage-1t")["param_count"] < 1.18e12
