"""Chapter 6.4 (decoding): KV cache equivalence, cache sizes, decode cost, grouped attention, KV-head pooling."""

from __future__ import annotations

import math

import plotly.graph_objects as go
import pytest
import torch
import torch.nn.functional as F

from helpers.attention import repeat_kv
from helpers.experiments import decoding as dec
from helpers.figures import decoding as fig
from helpers.memory import kv_cache_bytes
from helpers.models import TinyConfig, TinyGPT


def test_cached_decoding_equals_recomputing_the_prefix() -> None:
    result = dec.cache_equivalence(("learned", "rope"), new_tokens=12)
    for r in result.values():
        assert r["same_tokens"] == 1.0
        assert r["max_logit_gap"] < 1e-4
        assert r["distinct_tokens"] >= 3
    assert "| learned | yes |" in fig.equivalence_table(result)


def test_decode_step_times_have_one_entry_per_position_and_the_cache_is_cheaper_far_out() -> None:
    times = dec.decode_step_times((64, 512), repeats=3)
    assert times["positions"] == [64.0, 512.0]
    assert len(times["without cache"]) == len(times["with cache"]) == 2
    assert times["with cache"][-1] < times["without cache"][-1]


def test_fit_slope_recovers_a_line() -> None:
    slope, intercept = dec.fit_slope([0, 1, 2, 3], [1.0, 3.0, 5.0, 7.0])
    assert slope == pytest.approx(2.0) and intercept == pytest.approx(1.0)


def test_model_shapes_parameter_counts_match_published_sizes() -> None:
    billions = {name: s.params / 1e9 for name, s in dec.MODEL_SHAPES.items()}
    mha, gqa, mqa = dec.MODEL_SHAPES.values()
    assert 6.4 < billions[mha.name] < 6.8  # Llama-2-7B: 6.7 B with the input embedding, 6.6 B without
    assert 68 < billions[gqa.name] < 70  # Llama-2-70B: 69 B
    assert 6.7 < billions[mqa.name] < 7.3  # Falcon-7B: 7 B


def test_cache_size_table_matches_the_closed_form() -> None:
    table = dec.cache_size_table([4096], [1, 8], [torch.bfloat16, torch.float32])
    mha_name = next(iter(dec.MODEL_SHAPES))
    assert table[(1, torch.bfloat16)][mha_name][0] == pytest.approx(2 * 32 * 32 * 128 * 4096 * 2 / 2**30)  # 2 GiB
    assert table[(8, torch.float32)][mha_name][0] == pytest.approx(4 * 8 * table[(1, torch.bfloat16)][mha_name][0]
                                                                   / 2)
    figure = fig.cache_size_figure([4096], table)
    assert isinstance(figure, go.Figure) and len(figure.frames) == 4


def test_decode_cost_counts_flops_and_bytes() -> None:
    shape = dec.ModelShape("toy", num_layers=2, embed_dim=8, num_heads=4, num_kv_heads=2, head_dim=2, ffn_dim=16,
                           ffn_matrices=2, vocab_size=10)
    # per layer: q, o: 2*8*8 = 128; k, v: 2*8*4 = 64; ffn: 2*8*16 = 256 -> 448; 2 layers + 80 output = 976
    assert shape.params == 976
    c = dec.decode_cost(shape, seq_len=5, batch=3, bytes_per_element=2)
    assert c["weight_flops"] == 2 * 976 * 3
    assert c["weight_bytes"] == 976 * 2
    assert c["attention_flops"] == 4 * 2 * 4 * 2 * 5 * 3
    assert c["cache_bytes"] == kv_cache_bytes(2, 2, 2, 5, 3, torch.bfloat16)
    assert c["attention_intensity"] == pytest.approx(4 / 2)  # H / H_kv in 2-byte elements
    assert c["intensity"] == pytest.approx((c["weight_flops"] + c["attention_flops"])
                                           / (c["weight_bytes"] + c["cache_bytes"]))
    assert "| toy | 3 |" in fig.intensity_table({"toy": shape}, 5, [3])


@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_grouped_decode_attention_equals_sdpa_with_repeated_heads(kv_heads: int) -> None:
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(2, 4, 3, 8, generator=gen)
    k = torch.randn(2, kv_heads, 7, 8, generator=gen)
    v = torch.randn(2, kv_heads, 7, 5, generator=gen)
    expected = F.scaled_dot_product_attention(q, repeat_kv(k, 4 // kv_heads), repeat_kv(v, 4 // kv_heads))
    torch.testing.assert_close(dec.grouped_decode_attention(q, k, v), expected, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="multiple"):
        dec.grouped_decode_attention(torch.randn(1, 3, 1, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8))


def test_kv_head_times_report_exact_cache_bytes() -> None:
    result = dec.kv_head_times((4, 1), num_heads=4, head_dim=8, seq_len=32, batch=2, repeats=2)
    assert result["cache_bytes"] == [2 * 2 * 4 * 32 * 8 * 4.0, 2 * 2 * 1 * 32 * 8 * 4.0]
    assert all(t > 0 for t in result["grouped"] + result["repeat_kv"])


def _random_mha() -> TinyGPT:
    torch.manual_seed(0)
    model = TinyGPT(TinyConfig(vocab_size=11, embed_dim=16, num_heads=4, num_layers=1, max_positions=8)).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.3)
    return model


def test_mean_pooling_with_as_many_heads_changes_nothing() -> None:
    model = _random_mha()
    tokens = torch.randint(0, 11, (2, 6), generator=torch.Generator().manual_seed(1))
    same = dec.mean_pool_kv_heads(model, 4).eval()
    torch.testing.assert_close(same(tokens).output, model(tokens).output)


def test_mean_pooling_of_identical_heads_is_exact() -> None:
    model = _random_mha()
    attn = model.stack.blocks[0].self_attn
    with torch.no_grad():  # heads 0,1 share one key/value projection, heads 2,3 another: GQA-2 in disguise
        for proj in (attn.k_proj, attn.v_proj):
            w = proj.weight.view(4, 4, 16)
            w[1], w[3] = w[0], w[2]
            b = proj.bias.view(4, 4)
            b[1], b[3] = b[0], b[2]
    pooled = dec.mean_pool_kv_heads(model, 2).eval()
    assert pooled.config.num_kv_heads == 2
    assert pooled.stack.blocks[0].self_attn.k_proj.weight.shape == (8, 16)
    tokens = torch.randint(0, 11, (2, 6), generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(pooled(tokens).output, model(tokens).output, atol=1e-5, rtol=1e-5)


def test_mean_pooling_averages_the_group() -> None:
    model = _random_mha()
    pooled = dec.mean_pool_kv_heads(model, 1)
    w = model.stack.blocks[0].self_attn.v_proj.weight.view(4, 4, 16)
    torch.testing.assert_close(pooled.stack.blocks[0].self_attn.v_proj.weight, w.mean(0))
    with pytest.raises(ValueError, match="multiple"):
        dec.mean_pool_kv_heads(model, 3)


def test_gqa_quality_runs_shape_and_pooling_then_uptraining() -> None:
    runs = dec.gqa_quality_runs(seeds=(0,), kv_heads=(4, 1), steps=120, uptrain_steps=10, num_test=128)
    assert list(runs) == ["MHA", "MQA", "MHA → MQA pooled", "MHA → MQA uptrained"]
    acc = {name: group[0].accuracy for name, group in runs.items()}
    assert all(0.0 <= a <= 1.0 for a in acc.values())
    assert acc["MHA"] > 0.9  # x_t = x_{t-3} is learned in a few hundred steps
    assert acc["MHA → MQA uptrained"] > acc["MHA → MQA pooled"]
    assert "MHA → MQA pooled" in fig.quality_table(runs)
    assert math.isclose(dec.mean_spread([1.0, 2.0, 3.0])[0], 2.0)


def test_convert_kv_heads_first_keeps_the_groups_first_head_and_random_keeps_nothing() -> None:
    model = _random_mha()
    w = model.stack.blocks[0].self_attn.k_proj.weight.view(4, 4, 16)  # (H, E, D)
    first = dec.convert_kv_heads(model, 2, "first")
    torch.testing.assert_close(first.stack.blocks[0].self_attn.k_proj.weight, w[[0, 2]].reshape(8, 16))
    bias = model.stack.blocks[0].self_attn.v_proj.bias.view(4, 4)
    torch.testing.assert_close(first.stack.blocks[0].self_attn.v_proj.bias, bias[[0, 2]].reshape(8))
    random = dec.convert_kv_heads(model, 2, "random", seed=3)
    torch.manual_seed(3)
    fresh = TinyGPT(random.config)
    new_k = random.stack.blocks[0].self_attn.k_proj.weight
    torch.testing.assert_close(new_k, fresh.stack.blocks[0].self_attn.k_proj.weight)  # the seeded fresh init
    same_q = random.stack.blocks[0].self_attn.q_proj.weight
    torch.testing.assert_close(same_q, model.stack.blocks[0].self_attn.q_proj.weight)  # the rest is copied
    torch.testing.assert_close(dec.convert_kv_heads(model, 2, "mean").stack.blocks[0].self_attn.k_proj.weight,
                               dec.mean_pool_kv_heads(model, 2).stack.blocks[0].self_attn.k_proj.weight)
    with pytest.raises(ValueError, match="how"):
        dec.convert_kv_heads(model, 2, "median")


def test_recent_shapes_are_gqa8_with_128_kib_per_token_and_the_window_caps_the_cache() -> None:
    llama3, mistral = dec.RECENT_SHAPES.values()
    for s in (llama3, mistral):
        assert (s.num_layers, s.num_heads, s.num_kv_heads, s.head_dim) == (32, 32, 8, 128)
        assert kv_cache_bytes(s.num_layers, s.num_kv_heads, s.head_dim, 1, 1, torch.bfloat16) == 128 * 1024
    assert llama3.sliding_window is None and llama3.cache_tokens(32768) == 32768
    assert mistral.cache_tokens(1000) == 1000 and mistral.cache_tokens(32768) == 4096
    # Llama-3.1-8B: 8.03 B parameters with the untied 128256 x 4096 input embedding
    assert abs((llama3.params + llama3.vocab_size * llama3.embed_dim) / 1e9 - 8.03) < 0.01
    table = fig.shape_table(dec.RECENT_SHAPES, context=32768)
    assert "| 4.0 GiB |" in table and "| 0.5 GiB |" in table
    assert fig.shape_table(dec.MODEL_SHAPES).count("GiB") == 0


def test_prefill_cost_closed_form_and_intensity_grows_with_the_prompt() -> None:
    s = dec.MODEL_SHAPES["7B, MHA (Llama-2-7B-like)"]
    c = dec.prefill_cost(s, 10, batch=2)
    flops = 2.0 * s.params * 10 * 2 + 4.0 * 32 * 32 * 128 * (10 * 11 / 2) * 2
    bytes_ = s.params * 2 + 2.0 * 32 * 32 * 128 * 10 * 2 * 2
    assert math.isclose(c["flops"], flops) and math.isclose(c["bytes"], bytes_)
    assert math.isclose(c["intensity"], flops / bytes_)
    assert dec.prefill_cost(s, 1)["intensity"] < 2 < 500 < dec.prefill_cost(s, 512)["intensity"]
    with pytest.raises(ValueError, match="prompt_len"):
        dec.prefill_cost(s, 0)
