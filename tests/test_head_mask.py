"""``MultiHeadAttention(..., head_mask=...)``: each head's output scaled before ``o_proj``, checked
against a computation done by hand, on the readable and the fused path, with GQA and a KV cache."""

from __future__ import annotations

import math

import pytest
import torch

from helpers.multihead import KVCache, MultiHeadAttention


def by_hand(layer: MultiHeadAttention, x: torch.Tensor, head_mask: torch.Tensor, *, is_causal: bool = False):
    """Per-head attention written out with explicit loops over heads, mask applied to each head's output."""
    batch, length, _ = x.shape
    heads, kv_heads, head_dim = layer.num_heads, layer.num_kv_heads, layer.head_dim
    q = layer.q_proj(x)  # (B, L, H*E)
    k = layer.k_proj(x)  # (B, L, H_kv*E)
    v = layer.v_proj(x)  # (B, L, H_kv*E)
    factors = head_mask.to(x.dtype).expand(batch, heads)  # (B, H)
    outputs = []
    for h in range(heads):
        g = h // (heads // kv_heads)  # the key/value head this query head reads
        q_h = q[..., h * head_dim:(h + 1) * head_dim]  # (B, L, E)
        k_h = k[..., g * head_dim:(g + 1) * head_dim]  # (B, L, E)
        v_h = v[..., g * head_dim:(g + 1) * head_dim]  # (B, L, E)
        scores = q_h @ k_h.transpose(1, 2) / math.sqrt(head_dim)  # (B, L, L)
        if is_causal:
            scores = scores.masked_fill(~torch.ones(length, length, dtype=torch.bool).tril(), float("-inf"))
        outputs.append(factors[:, h, None, None] * (scores.softmax(-1) @ v_h))  # (B, L, E)
    return layer.o_proj(torch.cat(outputs, dim=-1))  # (B, L, D)


@pytest.fixture
def setup():
    torch.manual_seed(0)
    return MultiHeadAttention(24, 4), torch.randn(3, 5, 24)


@pytest.mark.parametrize("need_weights", [False, True])
def test_head_mask_matches_per_head_computation_by_hand(setup, need_weights):
    layer, x = setup
    mask = torch.tensor([1.0, 0.0, 0.5, 2.0])
    out, _ = layer(x, head_mask=mask, need_weights=need_weights)
    torch.testing.assert_close(out, by_hand(layer, x, mask), rtol=1e-5, atol=1e-6)


def test_per_example_head_mask_matches_by_hand_and_each_row_alone(setup):
    layer, x = setup
    mask = torch.tensor([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])  # (B, H)
    out, _ = layer(x, head_mask=mask)
    torch.testing.assert_close(out, by_hand(layer, x, mask), rtol=1e-5, atol=1e-6)
    for b in range(3):
        torch.testing.assert_close(out[b:b + 1], layer(x[b:b + 1], head_mask=mask[b])[0], rtol=1e-5, atol=1e-6)


def test_all_ones_mask_changes_nothing_and_bool_mask_equals_float(setup):
    layer, x = setup
    torch.testing.assert_close(layer(x, head_mask=torch.ones(4))[0], layer(x)[0])
    keep = torch.tensor([True, False, True, False])
    torch.testing.assert_close(layer(x, head_mask=keep)[0], layer(x, head_mask=keep.float())[0])


def test_all_zero_mask_leaves_only_the_output_bias(setup):
    layer, x = setup
    out, _ = layer(x, head_mask=torch.zeros(4))
    torch.testing.assert_close(out, layer.o_proj.bias.expand_as(out))


def test_removing_a_head_removes_exactly_its_slice_of_o_proj(setup):
    layer, x = setup
    e = layer.head_dim
    with torch.no_grad():
        full, _ = layer(x)
        without_2, _ = layer(x, head_mask=torch.tensor([1.0, 1.0, 0.0, 1.0]))
        _, weights = layer(x, need_weights=True)
        v = layer.v_proj(x)[..., 2 * e:3 * e]  # (B, L, E): head 2's values
        head_2 = weights[:, 2] @ v  # (B, L, E)
        contribution = head_2 @ layer.o_proj.weight[:, 2 * e:3 * e].T  # (B, L, D): head_2 W^O_2
    torch.testing.assert_close(full - without_2, contribution, rtol=1e-4, atol=1e-5)


def test_head_mask_with_gqa_removes_a_query_head_not_its_kv_group():
    torch.manual_seed(1)
    layer = MultiHeadAttention(32, 8, num_kv_heads=2)
    x = torch.randn(2, 6, 32)
    mask = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.3])
    for need_weights in (False, True):
        out, _ = layer(x, head_mask=mask, need_weights=need_weights, is_causal=True)
        torch.testing.assert_close(out, by_hand(layer, x, mask, is_causal=True), rtol=1e-5, atol=1e-6)


def test_head_mask_with_kv_cache_equals_full_causal_pass():
    torch.manual_seed(2)
    layer = MultiHeadAttention(16, 4, num_kv_heads=2)
    x = torch.randn(2, 7, 16)
    mask = torch.tensor([0.0, 1.0, 1.0, 0.0])
    full, _ = layer(x, is_causal=True, head_mask=mask)
    cache = KVCache()
    steps = [layer(x[:, :3], is_causal=True, kv_cache=cache, head_mask=mask)[0]]
    for t in range(3, 7):
        steps.append(layer(x[:, t:t + 1], is_causal=True, kv_cache=cache, head_mask=mask, need_weights=t % 2 == 0)[0])
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-5, atol=1e-6)
    assert cache.seq_len == 7 and cache.key.shape == (2, 2, 7, 4)  # the cache is filled for every head


def test_head_mask_gradient_is_the_head_importance_of_michel_et_al(setup):
    layer, x = setup
    mask = torch.ones(4, requires_grad=True)
    out, _ = layer(x, head_mask=mask)
    out.sum().backward()
    with torch.no_grad():
        expected = torch.stack([
            by_hand(layer, x, torch.eye(4)[h]).sum() - layer.o_proj.bias.sum() * x.shape[0] * x.shape[1]
            for h in range(4)])  # d(sum out)/d xi_h = sum of head h's contribution
    torch.testing.assert_close(mask.grad, expected, rtol=1e-4, atol=1e-4)


def test_head_mask_weights_are_returned_unmasked(setup):
    layer, x = setup
    _, plain = layer(x, need_weights=True)
    _, masked = layer(x, need_weights=True, head_mask=torch.zeros(4))
    torch.testing.assert_close(plain, masked)


@pytest.mark.parametrize(
    ("mask", "error", "words"),
    [
        (torch.ones(3), ValueError, "(H,)"),
        (torch.ones(2, 4), ValueError, "(B, H)"),
        (torch.ones(3, 4, 1), ValueError, "head_mask must have shape"),
        (torch.ones(4, dtype=torch.long), TypeError, "float or bool"),
        ([1.0, 1.0, 1.0, 1.0], TypeError, "torch.Tensor"),
    ],
)
def test_bad_head_mask_is_rejected_by_name(setup, mask, error, words):
    layer, x = setup
    with pytest.raises(error, match="head_mask") as info:
        layer(x, head_mask=mask)
    assert words in str(info.value)


def test_bad_head_mask_does_not_touch_the_cache():
    layer = MultiHeadAttention(16, 4)
    cache = KVCache()
    with pytest.raises(ValueError):
        layer(torch.randn(1, 2, 16), kv_cache=cache, head_mask=torch.ones(5))
    assert cache.seq_len == 0
