"""Attention with FlashAttention's recomputing backward pass: outputs and gradients equal dense attention's,
and the memory of a training step grows linearly with the sequence, where autograd through the same
online softmax grows quadratically."""

from __future__ import annotations

import pytest
import torch

from helpers.attention import scaled_dot_product_attention
from helpers.chunked import online_softmax_attention
from helpers.flash_backward import recomputing_attention
from helpers.masks import causal_mask
from helpers.memory import TensorMemoryTracker


def qkv(L=7, S=11, heads=4, kv_heads=2, E=5, Ev=3, dtype=torch.float64, seed=0):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(2, heads, L, E), (2, kv_heads, S, E), (2, kv_heads, S, Ev)]
    return [torch.randn(s, generator=gen, dtype=dtype, requires_grad=True) for s in shapes]


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("block_size", [1, 3, 4, 11, 50])
def test_output_and_gradients_equal_dense_attention(is_causal, block_size):
    q, k, v = qkv(L=11 if is_causal else 7)
    mask = causal_mask(q.size(2), k.size(2)) if is_causal else None
    dense = scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    ours = recomputing_attention(q, k, v, block_size=block_size, is_causal=is_causal)
    torch.testing.assert_close(ours, dense, rtol=1e-12, atol=1e-12)
    upstream = torch.randn_like(dense)
    expected = torch.autograd.grad(dense, (q, k, v), upstream)
    got = torch.autograd.grad(ours, (q, k, v), upstream)
    for name, a, b in zip("qkv", got, expected):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12, msg=f"gradient of {name}")


def test_gradcheck_with_a_scale_and_large_scores():
    q, k, v = qkv(L=4, S=6, heads=2, kv_heads=1, E=3, Ev=2, seed=1)
    with torch.no_grad():
        k[..., 0, :] *= 30  # one key with huge scores: the saved log-sum-exp must carry the max
    assert torch.autograd.gradcheck(lambda a, b, c: recomputing_attention(a, b, c, block_size=4, scale=0.7), (q, k, v))


def test_float32_inputs_give_float32_outputs_and_finite_gradients_at_scores_of_1000():
    q, k, v = qkv(dtype=torch.float32)
    with torch.no_grad():
        q.mul_(300)
    out = recomputing_attention(q, k, v, block_size=4)
    assert out.dtype == torch.float32 and torch.isfinite(out).all()
    out.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))


def peak_training_bytes(attention, n: int) -> int:
    """Peak bytes of the tensors alive during one forward and backward pass at length n."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, n, 16, generator=gen, requires_grad=True) for _ in range(3))
    with TensorMemoryTracker() as tracker:
        attention(q, k, v).sum().backward()
    return tracker.peak_bytes


def test_training_memory_grows_linearly_with_recomputation_and_quadratically_without():
    sizes = (256, 512, 1024)
    recomputed = [peak_training_bytes(lambda q, k, v: recomputing_attention(q, k, v, block_size=64), n) for n in sizes]
    stored = [peak_training_bytes(lambda q, k, v: online_softmax_attention(q, k, v, chunk_size=64), n) for n in sizes]
    for small, big in zip(recomputed, recomputed[1:]):
        assert 1.6 < big / small < 2.4, recomputed  # double n, double the memory
    for small, big in zip(stored, stored[1:]):
        assert big / small > 3.2, stored  # autograd keeps every block: quadratic
    assert stored[-1] > 4 * recomputed[-1]
    scores_bytes = 2 * 1024 * 1024 * 4  # one (H, n, n) float32 score matrix at n = 1024
    assert recomputed[-1] < scores_bytes / 2  # a training step holds less than half of one score matrix


@pytest.mark.parametrize("kwargs, words", [({"block_size": 0}, "block_size"), ({"block_size": 2.5}, "block_size")])
def test_bad_arguments_are_named(kwargs, words):
    q, k, v = qkv()
    with pytest.raises((ValueError, TypeError), match=words):
        recomputing_attention(q, k, v, **kwargs)
