"""Tests of helpers.multihead: parity with torch.nn.MultiheadAttention, GQA/MQA, KV cache, causality."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from helpers.attention import repeat_kv
from helpers.masks import causal_mask, padding_mask
from helpers.multihead import KVCache, MultiHeadAttention
from helpers.positional import RotaryEmbedding

TOL = dict(atol=1e-5, rtol=1e-5)


def seeded_mha(embed_dim: int = 16, num_heads: int = 4, seed: int = 0, **kwargs) -> MultiHeadAttention:
    torch.manual_seed(seed)
    module = MultiHeadAttention(embed_dim, num_heads, **kwargs).eval()
    with torch.no_grad():  # non-zero biases, so that a wrong bias would show
        for linear in (module.q_proj, module.k_proj, module.v_proj, module.o_proj):
            if linear.bias is not None:
                linear.bias.normal_()
    return module


def torch_twin(module: MultiHeadAttention) -> nn.MultiheadAttention:
    """A torch.nn.MultiheadAttention holding the same weights as ``module`` (MHA only)."""
    twin = nn.MultiheadAttention(
        module.embed_dim, module.num_heads, bias=module.q_proj.bias is not None,
        kdim=module.kdim, vdim=module.vdim, batch_first=True,
    ).eval()
    with torch.no_grad():
        if twin._qkv_same_embed_dim:
            twin.in_proj_weight.copy_(torch.cat([module.q_proj.weight, module.k_proj.weight, module.v_proj.weight]))
        else:
            twin.q_proj_weight.copy_(module.q_proj.weight)
            twin.k_proj_weight.copy_(module.k_proj.weight)
            twin.v_proj_weight.copy_(module.v_proj.weight)
        if twin.in_proj_bias is not None:
            twin.in_proj_bias.copy_(torch.cat([module.q_proj.bias, module.k_proj.bias, module.v_proj.bias]))
            twin.out_proj.bias.copy_(module.o_proj.bias)
        twin.out_proj.weight.copy_(module.o_proj.weight)
    return twin


def inputs(*shape: int, seed: int = 1) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ----------------------------------------------------------------------------------------------
# Parity with torch.nn.MultiheadAttention
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("need_weights", [False, True])
def test_self_attention_matches_torch_multihead_attention(need_weights: bool) -> None:
    module = seeded_mha()
    twin = torch_twin(module)
    x = inputs(2, 5, 16)
    out, weights = module(x, need_weights=need_weights)
    ref_out, ref_avg = twin(x, x, x, need_weights=True)
    _, ref_per_head = twin(x, x, x, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, **TOL)
    if need_weights:
        torch.testing.assert_close(weights, ref_per_head, **TOL)  # (B, H, L, S)
        torch.testing.assert_close(weights.mean(dim=1), ref_avg, **TOL)  # (B, L, S)
    else:
        assert weights is None


@pytest.mark.parametrize("need_weights", [False, True])
def test_cross_attention_with_kdim_vdim_matches_torch(need_weights: bool) -> None:
    module = seeded_mha(16, 4, kdim=6, vdim=10)
    twin = torch_twin(module)
    query, key, value = inputs(3, 4, 16, seed=1), inputs(3, 7, 6, seed=2), inputs(3, 7, 10, seed=3)
    out, weights = module(query, key, value, need_weights=need_weights)
    ref_out, ref_per_head = twin(query, key, value, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, **TOL)
    if need_weights:
        torch.testing.assert_close(weights, ref_per_head, **TOL)


def test_cross_attention_value_defaults_to_key() -> None:
    module = seeded_mha()
    query, memory = inputs(2, 3, 16, seed=1), inputs(2, 6, 16, seed=2)
    torch.testing.assert_close(module(query, memory)[0], module(query, memory, memory)[0], atol=0, rtol=0)


@pytest.mark.parametrize("need_weights", [False, True])
def test_key_mask_true_means_real_token_matches_torch(need_weights: bool) -> None:
    module = seeded_mha()
    twin = torch_twin(module)
    query, memory = inputs(2, 4, 16, seed=1), inputs(2, 6, 16, seed=2)
    real = torch.tensor([[True] * 6, [True] * 3 + [False] * 3])  # second sequence: 3 real keys
    out, weights = module(query, memory, key_mask=real, need_weights=need_weights)
    ref_out, ref_per_head = twin(query, memory, memory, key_padding_mask=~real, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, **TOL)
    if need_weights:
        torch.testing.assert_close(weights, ref_per_head, **TOL)
        assert weights[1, :, :, 3:].abs().max().item() == 0.0  # padding gets exactly zero weight
    four_d, _ = module(query, memory, key_mask=padding_mask([6, 3], 6), need_weights=need_weights)  # (B, 1, 1, S)
    torch.testing.assert_close(four_d, out, atol=0, rtol=0)


@pytest.mark.parametrize("need_weights", [False, True])
def test_a_pytorch_style_padding_mask_cannot_silently_attend_to_padding(need_weights: bool) -> None:
    module = seeded_mha()
    twin = torch_twin(module)
    query, memory = inputs(2, 4, 16, seed=1), inputs(2, 6, 16, seed=2)
    torch_padding = torch.tensor([[False] * 6, [False] * 3 + [True] * 3])  # PyTorch: True = padding, ignore
    with pytest.raises(TypeError, match=r"key_padding_mask is not an argument here.*key_mask=~key_padding_mask"):
        module(query, memory, key_padding_mask=torch_padding, need_weights=need_weights)
    # the conversion the message gives is exactly PyTorch's layer, with padding at zero weight
    out, weights = module(query, memory, key_mask=~torch_padding, need_weights=True)
    ref_out, _ = twin(query, memory, memory, key_padding_mask=torch_padding)
    torch.testing.assert_close(out, ref_out, **TOL)
    assert weights[1, :, :, 3:].abs().max().item() == 0.0
    # the TypeError is raised before any work, even for a mask that would broadcast, and for a float one
    with pytest.raises(TypeError, match=r"key_padding_mask is not an argument here"):
        module(query, memory, key_padding_mask=torch_padding.float())


@pytest.mark.parametrize("need_weights", [False, True])
def test_is_causal_is_top_left_like_torch_when_lengths_differ(need_weights: bool) -> None:
    module = seeded_mha()
    query, memory = inputs(2, 3, 16, seed=1), inputs(2, 5, 16, seed=2)  # L = 3 queries, S = 5 keys
    out, weights = module(query, memory, is_causal=True, need_weights=need_weights)
    explicit, _ = module(query, memory, attn_mask=causal_mask(3, 5), need_weights=need_weights)  # j <= i
    torch.testing.assert_close(out, explicit, **TOL)
    q = module.q_proj(query).view(2, 3, 4, 4).transpose(1, 2)  # (B, H, L, E)
    k = module.k_proj(memory).view(2, 5, 4, 4).transpose(1, 2)  # (B, H, S, E)
    v = module.v_proj(memory).view(2, 5, 4, 4).transpose(1, 2)
    torch_out = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # PyTorch's own top-left
    torch.testing.assert_close(out, module.o_proj(torch_out.transpose(1, 2).reshape(2, 3, 16)), **TOL)
    if need_weights:
        assert weights[..., 1:].triu().abs().max().item() == 0.0  # query i sees no key j > i


@pytest.mark.parametrize("need_weights", [False, True])
def test_is_causal_matches_torch_with_explicit_causal_mask(need_weights: bool) -> None:
    module = seeded_mha()
    twin = torch_twin(module)
    x = inputs(2, 6, 16)
    future = torch.ones(6, 6, dtype=torch.bool).triu(1)  # torch: True = may NOT attend
    out, weights = module(x, is_causal=True, need_weights=need_weights)
    ref_out, ref_per_head = twin(x, x, x, attn_mask=future, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, **TOL)
    bool_out, _ = module(x, attn_mask=~future, need_weights=need_weights)  # ours: True = may attend
    torch.testing.assert_close(bool_out, ref_out, **TOL)
    if need_weights:
        torch.testing.assert_close(weights, ref_per_head, **TOL)


def test_causal_plus_padding_plus_float_bias_matches_torch() -> None:
    module = seeded_mha()
    twin = torch_twin(module)
    x = inputs(2, 5, 16)
    bias = inputs(5, 5, seed=7)
    real = torch.tensor([[True] * 5, [True] * 4 + [False]])
    causal_bias = bias.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf"))
    padding_bias = torch.zeros(2, 5).masked_fill(~real, float("-inf"))  # float, like attn_mask (torch warns otherwise)
    ref_out, ref_w = twin(x, x, x, attn_mask=causal_bias, key_padding_mask=padding_bias, average_attn_weights=False)
    for need_weights in (False, True):
        out, weights = module(x, attn_mask=bias, key_mask=real, is_causal=True, need_weights=need_weights)
        torch.testing.assert_close(out, ref_out, **TOL)
    torch.testing.assert_close(weights, ref_w, **TOL)


# ----------------------------------------------------------------------------------------------
# GQA / MQA
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_rep", [1, 2, 3])
def test_repeat_kv_equals_repeat_interleave(n_rep: int) -> None:
    x = inputs(2, 3, 5, 4)
    torch.testing.assert_close(repeat_kv(x, n_rep), x.repeat_interleave(n_rep, dim=1), atol=0, rtol=0)


def test_gqa_with_as_many_kv_heads_as_heads_matches_torch() -> None:
    module = seeded_mha(16, 4, num_kv_heads=4)
    assert module.num_key_value_groups == 1
    x = inputs(2, 5, 16)
    torch.testing.assert_close(module(x)[0], torch_twin(module)(x, x, x)[0], **TOL)


@pytest.mark.parametrize("num_kv_heads", [1, 2])
@pytest.mark.parametrize("need_weights", [False, True])
def test_gqa_and_mqa_equal_mha_with_repeated_kv_weights(num_kv_heads: int, need_weights: bool) -> None:
    gqa = seeded_mha(24, 6 if num_kv_heads == 2 else 4, num_kv_heads=num_kv_heads)
    groups, head_dim = gqa.num_key_value_groups, gqa.head_dim
    mha = MultiHeadAttention(gqa.embed_dim, gqa.num_heads).eval()
    with torch.no_grad():
        mha.q_proj.load_state_dict(gqa.q_proj.state_dict())
        mha.o_proj.load_state_dict(gqa.o_proj.state_dict())
        for src, dst in ((gqa.k_proj, mha.k_proj), (gqa.v_proj, mha.v_proj)):
            # brute force: query head h uses key/value head h // groups
            for h in range(gqa.num_heads):
                g = h // groups
                dst.weight[h * head_dim:(h + 1) * head_dim] = src.weight[g * head_dim:(g + 1) * head_dim]
                dst.bias[h * head_dim:(h + 1) * head_dim] = src.bias[g * head_dim:(g + 1) * head_dim]
    x = inputs(2, 5, 24)
    out, weights = gqa(x, is_causal=True, need_weights=need_weights)
    ref_out, ref_weights = mha(x, is_causal=True, need_weights=need_weights)
    torch.testing.assert_close(out, ref_out, **TOL)
    if need_weights:
        torch.testing.assert_close(weights, ref_weights, **TOL)
    assert gqa.k_proj.out_features == num_kv_heads * head_dim  # fewer key/value parameters


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
@pytest.mark.parametrize(
    "masks",
    ["none", "causal", "padding", "causal+padding", "bool", "float"],
)
def test_fast_path_equals_weights_path(num_kv_heads: int, masks: str) -> None:
    module = seeded_mha(16, 4, num_kv_heads=num_kv_heads)
    x = inputs(3, 6, 16)
    kwargs: dict = {}
    if "causal" in masks:
        kwargs["is_causal"] = True
    if "padding" in masks:
        kwargs["key_mask"] = torch.arange(6)[None, :] < torch.tensor([[6], [4], [1]])
    if masks == "bool":
        kwargs["attn_mask"] = inputs(3, 1, 6, 6, seed=5) > 0
        kwargs["attn_mask"][..., 0] = True  # no empty row
    if masks == "float":
        kwargs["attn_mask"] = inputs(6, 6, seed=5)
    fast, none = module(x, **kwargs)
    slow, weights = module(x, need_weights=True, **kwargs)
    assert none is None
    torch.testing.assert_close(fast, slow, **TOL)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, 6), **TOL)


@pytest.mark.parametrize("need_weights", [False, True])
def test_fully_padded_sequence_gives_bias_only_and_no_nan_in_output_or_gradient(need_weights: bool) -> None:
    module = seeded_mha()
    query, memory = inputs(2, 3, 16, seed=1).requires_grad_(True), inputs(2, 4, 16, seed=2).requires_grad_(True)
    real = torch.tensor([[True] * 4, [False] * 4])  # second sequence has no real key
    out, _ = module(query, memory, key_mask=real, need_weights=need_weights)
    # attention output is the zero vector, so only o_proj's bias is left
    torch.testing.assert_close(out[1], module.o_proj.bias.expand(3, 16), **TOL)
    out.sum().backward()
    grads = [query.grad, memory.grad] + [p.grad for p in module.parameters()]
    assert all(torch.isfinite(g).all() for g in grads)
    assert memory.grad[1].abs().max().item() == 0.0  # padding receives no gradient


# ----------------------------------------------------------------------------------------------
# KV cache
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
@pytest.mark.parametrize("use_rope", [False, True])
@pytest.mark.parametrize("need_weights", [False, True])
def test_kv_cache_token_by_token_equals_full_causal_pass(num_kv_heads: int, use_rope: bool, need_weights: bool) -> None:
    module = seeded_mha(16, 4, num_kv_heads=num_kv_heads)
    rope = RotaryEmbedding(module.head_dim) if use_rope else None
    x = inputs(2, 7, 16)
    full, full_weights = module(x, is_causal=True, rope=rope, need_weights=True)
    cache = KVCache()
    steps = []
    for t in range(7):
        out, weights = module(x[:, t:t + 1], is_causal=True, kv_cache=cache, rope=rope, need_weights=need_weights)
        steps.append(out)
        if need_weights:  # the new query's weights over all t + 1 cached keys = row t of the full pass
            torch.testing.assert_close(weights[:, :, 0], full_weights[:, :, t, :t + 1], **TOL)
    torch.testing.assert_close(torch.cat(steps, dim=1), full, **TOL)
    assert cache.seq_len == 7
    assert cache.key.shape == (2, num_kv_heads, 7, module.head_dim)  # the cache holds H_kv heads


def test_kv_cache_prefill_then_decode_puts_the_queries_after_the_cached_keys() -> None:
    module = seeded_mha(16, 4, num_kv_heads=2)
    rope = RotaryEmbedding(module.head_dim)
    x = inputs(2, 8, 16)
    full, _ = module(x, is_causal=True, rope=rope)
    cache = KVCache(max_length=8)
    prefill, _ = module(x[:, :5], is_causal=True, kv_cache=cache, rope=rope)
    chunk, _ = module(x[:, 5:7], is_causal=True, kv_cache=cache, rope=rope)  # 2 new queries, 7 keys
    last, _ = module(x[:, 7:], is_causal=True, kv_cache=cache, rope=rope)
    torch.testing.assert_close(torch.cat([prefill, chunk, last], dim=1), full, **TOL)


def test_kv_cache_errors_and_reset() -> None:
    cache = KVCache(max_length=3)
    k = torch.zeros(1, 2, 2, 4)
    cache.update(k, k)
    with pytest.raises(ValueError, match=r"max_length=3"):
        cache.update(k, k)  # 2 + 2 > 3
    with pytest.raises(ValueError, match=r"do not match the cached"):
        cache.update(torch.zeros(1, 1, 1, 4), torch.zeros(1, 1, 1, 4))
    with pytest.raises(ValueError, match=r"\(B, H_kv, L_new, E\)"):
        cache.update(torch.zeros(2, 4), torch.zeros(2, 4))
    with pytest.raises(ValueError, match="max_length"):
        KVCache(max_length=0)
    cache.reset()
    assert cache.seq_len == 0 and cache.key is None
    key_all, _ = cache.update(torch.ones(1, 2, 3, 4), torch.ones(1, 2, 3, 4))
    assert key_all.shape == (1, 2, 3, 4)


# ----------------------------------------------------------------------------------------------
# Causality and permutation equivariance
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("need_weights", [False, True])
def test_causal_output_ignores_future_tokens(need_weights: bool) -> None:
    module = seeded_mha(16, 4, num_kv_heads=2)
    x = inputs(2, 6, 16)
    changed = x.clone()
    changed[:, 4:] = inputs(2, 2, 16, seed=9)  # change tokens 4 and 5
    out, _ = module(x, is_causal=True, need_weights=need_weights)
    out_changed, _ = module(changed, is_causal=True, need_weights=need_weights)
    torch.testing.assert_close(out[:, :4], out_changed[:, :4], atol=0, rtol=0)
    assert (out[:, 4:] - out_changed[:, 4:]).abs().max() > 1e-3  # the future positions did change


@pytest.mark.parametrize("need_weights", [False, True])
def test_causal_gradient_to_future_positions_is_exactly_zero(need_weights: bool) -> None:
    module = seeded_mha()
    x = inputs(1, 6, 16).requires_grad_(True)
    out, _ = module(x, is_causal=True, need_weights=need_weights)
    out[:, 2].sum().backward()  # output at position 2
    assert x.grad[:, 3:].abs().max().item() == 0.0
    assert x.grad[:, :3].abs().min(dim=-1).values.gt(0).all()  # every past position contributes


@pytest.mark.parametrize("need_weights", [False, True])
def test_self_attention_without_positions_is_permutation_equivariant(need_weights: bool) -> None:
    module = seeded_mha()
    x = inputs(2, 7, 16)
    perm = torch.randperm(7, generator=torch.Generator().manual_seed(3))
    out, weights = module(x, need_weights=need_weights)
    out_perm, weights_perm = module(x[:, perm], need_weights=need_weights)
    torch.testing.assert_close(out_perm, out[:, perm], **TOL)
    if need_weights:
        torch.testing.assert_close(weights_perm, weights[:, :, perm][:, :, :, perm], **TOL)


def test_dropout_only_acts_in_training_mode() -> None:
    module = seeded_mha(dropout=0.5)
    x = inputs(2, 5, 16)
    eval_out, _ = module(x)
    torch.testing.assert_close(eval_out, torch_twin(module)(x, x, x)[0], **TOL)
    module.train()
    torch.manual_seed(0)
    train_out, _ = module(x)
    assert (train_out - eval_out).abs().max() > 1e-3


# ----------------------------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------------------------


def test_constructor_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match=r"num_heads=3 must divide embed_dim=16"):
        MultiHeadAttention(16, 3)
    with pytest.raises(ValueError, match=r"num_kv_heads=3 must divide num_heads=4"):
        MultiHeadAttention(16, 4, num_kv_heads=3)
    with pytest.raises(ValueError, match=r"num_heads must be a positive int"):
        MultiHeadAttention(16, 0)
    with pytest.raises(ValueError, match=r"dropout"):
        MultiHeadAttention(16, 4, dropout=1.0)


def test_forward_errors_name_the_argument_and_shape() -> None:
    module = seeded_mha(16, 4)
    with pytest.raises(ValueError, match=r"query must have shape \(B, L, 16\), got \(5, 16\)"):
        module(torch.zeros(5, 16))
    with pytest.raises(ValueError, match=r"query must have shape \(B, L, 16\), got \(2, 5, 8\)"):
        module(torch.zeros(2, 5, 8))
    with pytest.raises(TypeError, match=r"query must be a torch.Tensor"):
        module([[1.0]])
    with pytest.raises(ValueError, match=r"key must have shape \(B, S, 16\), got \(2, 3, 7\)"):
        module(torch.zeros(2, 5, 16), torch.zeros(2, 3, 7))
    with pytest.raises(ValueError, match=r"share the batch size.*query \(2, 5, 16\), key \(3, 4, 16\)"):
        module(torch.zeros(2, 5, 16), torch.zeros(3, 4, 16))
    with pytest.raises(ValueError, match=r"key \(2, 4, 16\), value \(2, 3, 16\)"):
        module(torch.zeros(2, 5, 16), torch.zeros(2, 4, 16), torch.zeros(2, 3, 16))
    with pytest.raises(ValueError, match=r"value was given without key"):
        module(torch.zeros(2, 5, 16), value=torch.zeros(2, 5, 16))
    with pytest.raises(
        ValueError,
        match=r"key_mask must have shape \(B, S\) = \(2, 5\) or \(B, 1, 1, S\) = \(2, 1, 1, 5\).*got \(2, 4\)",
    ):
        module(torch.zeros(2, 5, 16), key_mask=torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"key_mask must have shape .* got \(2, 1, 5\)"):
        module(torch.zeros(2, 5, 16), key_mask=torch.ones(2, 1, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"key_mask must have shape .* got \(2, 5, 5\)"):
        module(torch.zeros(2, 5, 16), key_mask=torch.ones(2, 5, 5, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"key_mask must be a bool tensor"):
        module(torch.zeros(2, 5, 16), key_mask=torch.ones(2, 5))
    with pytest.raises(ValueError, match=r"attn_mask of shape \(4, 5\) does not broadcast to .* shape \(2, 4, 5, 5\)"):
        module(torch.zeros(2, 5, 16), attn_mask=torch.ones(4, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"self-attention only"):
        module(torch.zeros(2, 5, 16), torch.zeros(2, 5, 16), kv_cache=KVCache())
    with pytest.raises(ValueError, match=r"rope.head_dim=8 must equal the head_dim=4"):
        module(torch.zeros(2, 5, 16), rope=RotaryEmbedding(8))


def test_repeat_kv_errors() -> None:
    with pytest.raises(ValueError, match=r"\(B, H_kv, S, E\), got \(2, 3\)"):
        repeat_kv(torch.zeros(2, 3), 2)
    with pytest.raises(ValueError, match=r"n_rep must be a positive int, got 0"):
        repeat_kv(torch.zeros(1, 2, 3, 4), 0)


@pytest.mark.parametrize("need_weights", [False, True])
def test_custom_scale_equals_rescaled_queries(need_weights: bool) -> None:
    """scale=s multiplies Q K^T by s: the same as the default scale with queries rescaled by s*sqrt(E)."""
    torch.manual_seed(0)
    embed_dim, num_heads, scale = 32, 4, 0.05
    scaled = MultiHeadAttention(embed_dim, num_heads, scale=scale)
    default = MultiHeadAttention(embed_dim, num_heads)
    default.load_state_dict(scaled.state_dict())
    factor = scale * math.sqrt(embed_dim // num_heads)
    with torch.no_grad():
        default.q_proj.weight.mul_(factor)
        default.q_proj.bias.mul_(factor)
    x = torch.randn(2, 6, embed_dim)
    out, _ = scaled(x, is_causal=True, need_weights=need_weights)
    expected, _ = default(x, is_causal=True, need_weights=need_weights)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)


def test_scale_must_be_a_number() -> None:
    with pytest.raises(TypeError, match="scale"):
        MultiHeadAttention(16, 2, scale="1/sqrt(8)")
