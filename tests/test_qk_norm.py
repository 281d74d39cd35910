"""QK-norm option of MultiHeadAttention (chapter 6): a LayerNorm on each head's q and k."""

import math

import torch
import torch.nn.functional as F

from helpers.multihead import MultiHeadAttention


def _reference(layer: MultiHeadAttention, x: torch.Tensor) -> torch.Tensor:
    b, l, d = x.shape
    h, e = layer.num_heads, layer.head_dim
    q = layer.q_proj(x).view(b, l, h, e).transpose(1, 2)
    k = layer.k_proj(x).view(b, l, h, e).transpose(1, 2)
    v = layer.v_proj(x).view(b, l, h, e).transpose(1, 2)
    q = F.layer_norm(q, (e,), layer.q_norm.weight, layer.q_norm.bias)
    k = F.layer_norm(k, (e,), layer.k_norm.weight, layer.k_norm.bias)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1)
    out = (weights @ v).transpose(1, 2).reshape(b, l, d)
    return layer.o_proj(out)


def test_qk_norm_matches_a_layer_norm_on_each_head_before_the_scores():
    torch.manual_seed(0)
    layer = MultiHeadAttention(16, 4, qk_norm=True)
    with torch.no_grad():
        layer.q_norm.weight.uniform_(0.5, 2.0)
        layer.k_norm.bias.uniform_(-0.5, 0.5)
    x = torch.randn(2, 5, 16)
    for need_weights in (True, False):
        out, _ = layer(x, need_weights=need_weights)
        torch.testing.assert_close(out, _reference(layer, x), atol=1e-5, rtol=1e-5)


def test_qk_norm_bounds_the_logits_when_the_projections_grow():
    torch.manual_seed(0)
    plain, normed = MultiHeadAttention(16, 2), MultiHeadAttention(16, 2, qk_norm=True)
    normed.load_state_dict(plain.state_dict(), strict=False)
    x = torch.randn(1, 8, 16)
    with torch.no_grad():
        for layer in (plain, normed):
            layer.q_proj.weight.mul_(50)
            layer.k_proj.weight.mul_(50)
    _, w_plain = plain(x, need_weights=True)
    _, w_normed = normed(x, need_weights=True)
    assert w_plain.amax(-1).mean() > 0.95  # saturated
    assert w_normed.amax(-1).mean() < 0.9  # unit-variance q and k: logits of order sqrt(E)


def test_qk_norm_is_off_by_default_and_shown_in_repr():
    assert MultiHeadAttention(8, 2).q_norm is None
    layer = MultiHeadAttention(8, 2, qk_norm=True)
    assert "qk_norm=True" in repr(layer)
    plain = sum(p.numel() for p in MultiHeadAttention(8, 2).parameters())
    assert sum(p.numel() for p in layer.parameters()) == plain + 4 * 4  # two LayerNorms of size E = 4


def test_qk_norm_with_gqa_and_kv_cache_equals_the_full_pass():
    from helpers.multihead import KVCache

    torch.manual_seed(0)
    layer = MultiHeadAttention(16, 4, num_kv_heads=2, qk_norm=True)
    x = torch.randn(1, 6, 16)
    full, _ = layer(x, is_causal=True)
    cache = KVCache()
    steps = [layer(x[:, i:i + 1], is_causal=True, kv_cache=cache)[0] for i in range(6)]
    torch.testing.assert_close(torch.cat(steps, 1), full, atol=1e-5, rtol=1e-5)
