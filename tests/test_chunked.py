"""Chunked exact attention: the readable online-softmax loop and the tuned kernel, against dense.

References: ``torch.nn.functional.scaled_dot_product_attention`` and the package's own
:func:`helpers.attention.scaled_dot_product_attention`; the readable and the tuned versions are
also checked equal to each other. Memory and work are measured with
:class:`helpers.memory.TensorMemoryTracker` and ``FlopCounterMode``.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from helpers.attention import scaled_dot_product_attention
from helpers.chunked import chunked_attention, online_softmax_attention
from helpers.memory import TensorMemoryTracker

F64 = torch.float64
N = 2048  # one n x n float32 matrix: 16 MiB


def qkv(
    L: int, S: int, *, B=2, H=3, H_kv: int | None = None, E=8, Ev=5, dtype=F64, seed=0, requires_grad=False
):
    g = torch.Generator().manual_seed(seed)
    H_kv = H if H_kv is None else H_kv
    q = torch.randn(B, H, L, E, generator=g, dtype=dtype)
    k = torch.randn(B, H_kv, S, E, generator=g, dtype=dtype)
    v = torch.randn(B, H_kv, S, Ev, generator=g, dtype=dtype)
    return [t.requires_grad_(requires_grad) for t in (q, k, v)]


def dense(q, k, v, mask=None, is_causal=False):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)


# ---------------------------------------------------------------------------------------------
# The tuned kernel against dense attention
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("chunk_size", [7, 16, 33, 200])
@pytest.mark.parametrize("L,S", [(48, 48), (37, 53), (53, 37)])
def test_chunked_attention_equals_dense_in_values_and_gradients(L, S, chunk_size, is_causal):
    q, k, v = qkv(L, S, requires_grad=True)
    out = chunked_attention(q, k, v, chunk_size=chunk_size, is_causal=is_causal)
    ref = dense(q, k, v, is_causal=is_causal)
    torch.testing.assert_close(out, ref)
    grad_out = torch.randn_like(ref)
    got = torch.autograd.grad(out, (q, k, v), grad_out)
    want = torch.autograd.grad(ref, (q, k, v), grad_out)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("is_causal", [False, True])
def test_chunked_attention_with_chunks_of_one_equals_dense(is_causal):
    q, k, v = qkv(12, 9)
    out = chunked_attention(q, k, v, chunk_size=1, is_causal=is_causal)
    torch.testing.assert_close(out, dense(q, k, v, is_causal=is_causal))


def test_chunked_attention_is_stable_for_large_scores_in_float32():
    q, k, v = qkv(40, 40, dtype=torch.float32)
    q = q * 30  # scores in the hundreds: a naive exp overflows
    out = chunked_attention(q, k, v, chunk_size=8, scale=1.0)
    assert torch.isfinite(out).all()
    expected = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), scale=1.0).float()
    torch.testing.assert_close(out, expected)


def test_chunked_attention_in_bfloat16_matches_float32_reference():
    q, k, v = qkv(64, 64, dtype=torch.float32)
    out = chunked_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), chunk_size=16, is_causal=True)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), dense(q, k, v, is_causal=True), atol=3e-2, rtol=3e-2)


def test_causal_chunked_attention_skips_chunks_above_the_diagonal():
    q, k, v = qkv(8 * 64, 8 * 64, B=1, H=1, E=16, Ev=16, dtype=torch.float32)
    flops = {}
    for causal in (False, True):
        with FlopCounterMode(display=False) as counter:
            chunked_attention(q, k, v, chunk_size=64, is_causal=causal)
        flops[causal] = counter.get_total_flops()
    assert flops[True] / flops[False] == pytest.approx(36 / 64)  # 8 * 9 / 2 of the 8 x 8 chunk pairs


def test_chunked_attention_backward_materialises_no_n_by_n_tensor():
    q, k, v = qkv(N, N, B=1, H=1, E=32, Ev=32, dtype=torch.float32, requires_grad=True)
    with TensorMemoryTracker() as tracker:
        out = chunked_attention(q, k, v, chunk_size=256, is_causal=True)
        out.sum().backward()
    assert tracker.max_numel < N * N // 4, tracker.max_shape
    assert tracker.peak_bytes < N * N * 4 // 2

# ---------------------------------------------------------------------------------------------
# The readable loop and the tuned kernel: equal to each other and to scaled_dot_product_attention
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("chunk_size", [1, 5, 16, 100])
@pytest.mark.parametrize("L,S", [(24, 24), (17, 29), (29, 17)])
@pytest.mark.parametrize("H_kv", [3, 1])  # multi-head and multi-query (H_kv = 1 shares one head)
def test_readable_and_tuned_chunked_attention_equal_sdpa(L, S, chunk_size, is_causal, H_kv):
    q, k, v = qkv(L, S, H=3, H_kv=H_kv)
    want = scaled_dot_product_attention(q, k, v, is_causal=is_causal, enable_gqa=True)
    readable = online_softmax_attention(q, k, v, chunk_size=chunk_size, is_causal=is_causal)
    tuned = chunked_attention(q, k, v, chunk_size=chunk_size, is_causal=is_causal)
    torch.testing.assert_close(readable, want)
    torch.testing.assert_close(tuned, want)
    torch.testing.assert_close(readable, tuned)
    torch.testing.assert_close(want, F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, enable_gqa=True))


@pytest.mark.parametrize("is_causal", [False, True])
def test_grouped_query_chunked_attention_equals_torch_with_enable_gqa(is_causal):
    q, k, v = qkv(20, 20, H=4, H_kv=2, requires_grad=True)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, enable_gqa=True)
    for fn in (online_softmax_attention, chunked_attention):
        out = fn(q, k, v, chunk_size=6, is_causal=is_causal)
        torch.testing.assert_close(out, want)
        got = torch.autograd.grad(out.sum(), (q, k, v))
        ref = torch.autograd.grad(want.sum(), (q, k, v), retain_graph=True)
        for a, b in zip(got, ref):
            torch.testing.assert_close(a, b)


def test_readable_chunked_attention_gradients_match_dense():
    q, k, v = qkv(19, 23, requires_grad=True)
    out = online_softmax_attention(q, k, v, chunk_size=7, is_causal=True)
    ref = dense(q, k, v, is_causal=True)
    grad_out = torch.randn_like(ref)
    for a, b in zip(torch.autograd.grad(out, (q, k, v), grad_out), torch.autograd.grad(ref, (q, k, v), grad_out)):
        torch.testing.assert_close(a, b)


def test_readable_chunked_attention_is_stable_for_large_scores_and_keeps_half_dtypes():
    q, k, v = qkv(40, 40, dtype=torch.float32)
    out = online_softmax_attention(q * 30, k, v, chunk_size=8, scale=1.0)  # scores in the hundreds
    assert torch.isfinite(out).all()
    want = F.scaled_dot_product_attention((q * 30).double(), k.double(), v.double(), scale=1.0).float()
    torch.testing.assert_close(out, want)
    half = online_softmax_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), chunk_size=16, is_causal=True)
    assert half.dtype == torch.bfloat16
    torch.testing.assert_close(half.float(), dense(q, k, v, is_causal=True), atol=3e-2, rtol=3e-2)


def test_readable_chunked_attention_holds_only_one_chunk_of_scores():
    q, k, v = qkv(N, N, B=1, H=1, E=16, Ev=16, dtype=torch.float32)
    with TensorMemoryTracker() as tracker:
        online_softmax_attention(q, k, v, chunk_size=128)
    assert tracker.max_numel <= N * 128, tracker.max_shape  # an (L, chunk) block, never (L, S)


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [chunked_attention, online_softmax_attention])
def test_bad_arguments_raise_with_the_offending_value(fn):
    q, k, v = qkv(8, 8, dtype=torch.float32)
    with pytest.raises(ValueError, match="chunk_size"):
        fn(q, k, v, chunk_size=0)
    with pytest.raises(TypeError, match="chunk_size"):
        fn(q, k, v, chunk_size=2.0)
    with pytest.raises(ValueError, match=r"key \(2, 3, 8, 7\)"):
        fn(q, k[..., :7], v, chunk_size=4)
    with pytest.raises(ValueError, match=r"key \(1, 3, 8, 8\)"):
        fn(q, k[:1], v, chunk_size=4)
    with pytest.raises(ValueError, match="H_kv=2"):
        fn(q, k[:, :2], v[:, :2], chunk_size=4)
    with pytest.raises(ValueError, match="query must have shape"):
        fn(q[0], k, v, chunk_size=4)
    with pytest.raises(TypeError, match="value"):
        fn(q, k, v.long(), chunk_size=4)
    with pytest.raises(ValueError, match="scale"):
        fn(q, k, v, chunk_size=4, scale=float("nan"))
