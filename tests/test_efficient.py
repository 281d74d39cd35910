"""Efficient attention: each variant against dense attention, brute-force loops or closed forms.

References: ``torch.nn.functional.scaled_dot_product_attention`` with a dense mask built here by
explicit loops, Python loops for the kernel sums, closed forms for sizes. Memory claims are
checked with :class:`helpers.memory.TensorMemoryTracker`, which records every tensor ATen
allocates: no ``n x n`` tensor may appear.
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from helpers import masks
from helpers.chunked import chunked_attention
from helpers.efficient import (
    bigbird_attention,
    bigbird_layout,
    block_layout_to_mask,
    block_sparse_attention,
    hierarchical_attention,
    sliding_window_attention,
)
from helpers.efficient_linear import (
    LinformerAttention,
    linear_attention,
    performer_attention,
    positive_random_features,
    random_feature_projection,
)
from helpers.memory import TensorMemoryTracker

F64 = torch.float64


SUBQUADRATIC_AND_CONTROL = ["sliding_window", "bigbird", "linear", "performer", "chunked", "dense (positive control)"]


def qkv(
    L: int, S: int, *, B: int = 2, H: int = 3, E: int = 8, Ev: int = 5, dtype=F64, seed: int = 0, requires_grad=False
):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, L, E, generator=g, dtype=dtype)
    k = torch.randn(B, H, S, E, generator=g, dtype=dtype)
    v = torch.randn(B, H, S, Ev, generator=g, dtype=dtype)
    return [t.requires_grad_(requires_grad) for t in (q, k, v)]


def band_mask_loop(L: int, S: int, window: int, causal: bool) -> torch.Tensor:
    mask = torch.zeros(L, S, dtype=torch.bool)
    for i in range(L):
        for j in range(S):
            mask[i, j] = (i - window < j <= i) if causal else abs(i - j) < window
    return mask


def dense(q, k, v, mask=None, is_causal=False):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)


# ---------------------------------------------------------------------------------------------
# Sliding window
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "L,S,window", [(37, 37, 5), (64, 64, 16), (70, 50, 4), (50, 70, 9), (100, 30, 3), (33, 33, 40)]
)
def test_sliding_window_equals_dense_attention_with_band_mask(L, S, window, causal):
    q, k, v = qkv(L, S)
    mask = band_mask_loop(L, S, window, causal)
    torch.testing.assert_close(sliding_window_attention(q, k, v, window, is_causal=causal), dense(q, k, v, mask))


@pytest.mark.parametrize("causal", [False, True])
def test_sliding_window_band_is_masks_sliding_window_mask(causal):
    for L, S, window in [(20, 20, 3), (17, 25, 6), (25, 17, 1)]:
        expected = masks.sliding_window_mask(L, S, window, is_causal=causal)
        assert torch.equal(band_mask_loop(L, S, window, causal), expected)


@pytest.mark.parametrize("causal", [False, True])
def test_sliding_window_of_full_length_is_full_attention(causal):
    n = 45
    q, k, v = qkv(n, n)
    torch.testing.assert_close(sliding_window_attention(q, k, v, n, is_causal=causal), dense(q, k, v, is_causal=causal))


@pytest.mark.parametrize("causal", [False, True])
def test_sliding_window_of_one_attends_only_to_itself(causal):
    q, k, v = qkv(30, 30)
    torch.testing.assert_close(sliding_window_attention(q, k, v, 1, is_causal=causal), v)


def test_sliding_window_gradients_match_dense():
    q, k, v = qkv(41, 41, requires_grad=True)
    mask = band_mask_loop(41, 41, 6, False)
    grads = torch.autograd.grad(sliding_window_attention(q, k, v, 6).square().sum(), (q, k, v))
    ref = torch.autograd.grad(dense(q, k, v, mask).square().sum(), (q, k, v))
    for got, want in zip(grads, ref):
        torch.testing.assert_close(got, want)


def test_sliding_window_query_without_keys_outputs_zero_and_finite_gradients():
    q, k, v = qkv(40, 10, requires_grad=True)  # queries 12.. see no key with window 3
    out = sliding_window_attention(q, k, v, 3)
    assert torch.all(out[:, :, 12:] == 0)
    torch.testing.assert_close(out, dense(q, k, v, band_mask_loop(40, 10, 3, False)))
    grads = torch.autograd.grad(out.sum(), (q, k, v))
    assert all(torch.isfinite(g).all() for g in grads)
    assert torch.all(grads[0][:, :, 12:] == 0)  # a query that sees nothing gets no gradient


def test_sliding_window_supports_grouped_query_heads():
    q, _, _ = qkv(24, 24, H=4)
    _, k, v = qkv(24, 24, H=2, seed=1)
    mask = band_mask_loop(24, 24, 4, True)
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    torch.testing.assert_close(sliding_window_attention(q, k, v, 4, is_causal=True), want)


# ---------------------------------------------------------------------------------------------
# Block-sparse and BigBird
# ---------------------------------------------------------------------------------------------
def test_block_sparse_equals_dense_with_the_layout_as_mask():
    bs = 4
    layout = torch.rand(6, 5, generator=torch.Generator().manual_seed(3)) < 0.4
    layout[2] = False  # an empty row: output zeros, as PyTorch does for a fully masked row
    layout[4] = True  # a full row
    q, k, v = qkv(6 * bs, 5 * bs)
    mask = torch.zeros(6 * bs, 5 * bs, dtype=torch.bool)
    for i, j in itertools.product(range(6 * bs), range(5 * bs)):
        mask[i, j] = layout[i // bs, j // bs]
    assert torch.equal(block_layout_to_mask(layout, bs), mask)
    out = block_sparse_attention(q, k, v, layout, bs)
    torch.testing.assert_close(out, dense(q, k, v, mask))
    assert torch.all(out[:, :, 2 * bs : 3 * bs] == 0)


def test_block_sparse_gradients_match_dense():
    layout = torch.tensor([[1, 0, 1], [1, 1, 0], [0, 1, 1]], dtype=torch.bool)
    q, k, v = qkv(12, 12, requires_grad=True)
    mask = block_layout_to_mask(layout, 4)
    got = torch.autograd.grad(block_sparse_attention(q, k, v, layout, 4).sum(), (q, k, v))
    want = torch.autograd.grad(dense(q, k, v, mask).sum(), (q, k, v))
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("num_random", [0, 1, 3])
def test_bigbird_attention_equals_dense_with_bigbird_pattern(num_random):
    bs, nb = 4, 10
    kwargs = dict(num_global=1, window_blocks=3, num_random=num_random)
    q, k, v = qkv(nb * bs, nb * bs)
    layout = bigbird_layout(nb, nb, **kwargs, generator=torch.Generator().manual_seed(7))
    out = bigbird_attention(q, k, v, block_size=bs, **kwargs, generator=torch.Generator().manual_seed(7))
    torch.testing.assert_close(out, dense(q, k, v, block_layout_to_mask(layout, bs)))


@pytest.mark.parametrize("num_random", [0, 2])
def test_bigbird_layout_equals_masks_bigbird_mask(num_random):
    gen = torch.Generator().manual_seed(1)
    layout = bigbird_layout(8, 6, num_global=2, window_blocks=3, num_random=num_random, generator=gen)
    mask = masks.bigbird_mask(
        24, 18, block_size=3, num_global_blocks=2, window_blocks=3, num_random_blocks=num_random,
        generator=torch.Generator().manual_seed(1),
    )
    assert torch.equal(block_layout_to_mask(layout, 3), mask)


def test_bigbird_layout_has_global_window_and_exactly_num_random_extra_blocks():
    nb, g, w, r = 16, 2, 3, 3
    gen = torch.Generator().manual_seed(0)
    layout = bigbird_layout(nb, nb, num_global=g, window_blocks=w, num_random=r, generator=gen)
    assert layout[:g].all() and layout[:, :g].all()
    for a in range(nb):
        for b in range(max(0, a - 1), min(nb, a + 2)):
            assert layout[a, b]
    base = bigbird_layout(nb, nb, num_global=g, window_blocks=w, num_random=0)
    extra = (layout & ~base).sum(dim=1)
    assert extra[:g].tolist() == [0] * g
    assert extra[g:].tolist() == [r] * (nb - g)


# ---------------------------------------------------------------------------------------------
# Hierarchical
# ---------------------------------------------------------------------------------------------
def hierarchical_loop(q, k, v, bs, causal):
    """For each query, list its fine keys and block summaries explicitly, then one softmax."""
    B, H, n, E = q.shape
    out = torch.zeros(B, H, n, v.shape[-1], dtype=q.dtype)
    for i in range(n):
        a = i // bs
        keys, vals = [], []
        for j in range(a * bs, a * bs + bs):
            if not causal or j <= i:
                keys.append(k[:, :, j]), vals.append(v[:, :, j])
        for b in range(n // bs):
            if (b < a) if causal else (b != a):
                keys.append(k[:, :, b * bs : b * bs + bs].mean(2)), vals.append(v[:, :, b * bs : b * bs + bs].mean(2))
        K, V = torch.stack(keys, 2), torch.stack(vals, 2)
        w = torch.softmax((q[:, :, i : i + 1] @ K.transpose(-1, -2)) / math.sqrt(E), dim=-1)
        out[:, :, i] = (w @ V)[:, :, 0]
    return out


@pytest.mark.parametrize("causal", [False, True])
def test_hierarchical_attention_equals_explicit_fine_plus_coarse_loop(causal):
    q, k, v = qkv(24, 24)
    out = hierarchical_attention(q, k, v, block_size=4, is_causal=causal)
    torch.testing.assert_close(out, hierarchical_loop(q, k, v, 4, causal))


@pytest.mark.parametrize("causal", [False, True])
def test_hierarchical_attention_with_one_block_is_full_attention(causal):
    q, k, v = qkv(16, 16)
    out = hierarchical_attention(q, k, v, block_size=16, is_causal=causal)
    torch.testing.assert_close(out, dense(q, k, v, is_causal=causal))


# ---------------------------------------------------------------------------------------------
# Linear attention and Performer
# ---------------------------------------------------------------------------------------------
def kernel_loop(q, k, v, phi, causal, eps):
    """sum_{j (<= i)} phi(q_i).phi(k_j) v_j / (sum_{j (<= i)} phi(q_i).phi(k_j) + eps), by loops."""
    B, H, L, _ = q.shape
    out = torch.zeros(B, H, L, v.shape[-1], dtype=q.dtype)
    for i in range(L):
        num = torch.zeros(B, H, v.shape[-1], dtype=q.dtype)
        den = torch.zeros(B, H, 1, dtype=q.dtype)
        for j in range(i + 1 if causal else k.shape[2]):
            sim = (phi(q[:, :, i]) * phi(k[:, :, j])).sum(-1, keepdim=True)
            num, den = num + sim * v[:, :, j], den + sim
        out[:, :, i] = num / (den + eps)
    return out


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("chunk_size", [1, 5, 64])
def test_linear_attention_equals_explicit_kernel_sum(causal, chunk_size):
    q, k, v = qkv(23, 23)
    want = kernel_loop(q, k, v, lambda x: F.elu(x) + 1, causal, 1e-6)
    torch.testing.assert_close(linear_attention(q, k, v, is_causal=causal, chunk_size=chunk_size), want)


def test_linear_attention_relu_and_callable_feature_maps_and_cross_lengths():
    q, k, v = qkv(9, 14)
    out = linear_attention(q, k, v, feature_map="relu", eps=0.1)
    torch.testing.assert_close(out, kernel_loop(q, k, v, F.relu, False, 0.1))
    square = lambda x: x * x  # noqa: E731
    torch.testing.assert_close(linear_attention(q, k, v, feature_map=square), kernel_loop(q, k, v, square, False, 1e-6))


def test_positive_random_features_estimate_exp_dot_product_without_bias():
    q = torch.tensor([0.3, -0.5, 0.2, 0.4], dtype=F64)
    k = torch.tensor([0.1, 0.6, -0.3, 0.5], dtype=F64)
    draws, m = 4000, 8  # 4000 independent estimators of m = 8 features (two orthogonal blocks each)
    for orthogonal in (True, False):
        gen = torch.Generator().manual_seed(0)
        w = random_feature_projection(draws * m, 4, orthogonal=orthogonal, generator=gen, dtype=F64)
        terms = positive_random_features(q, w) * positive_random_features(k, w) * (draws * m)  # undo 1/sqrt(F) twice
        est = terms.view(draws, m).mean(dim=1)  # phi(q) . phi(k) with m features, per draw
        stderr = est.std() / math.sqrt(draws)
        assert abs(est.mean() - math.exp(q @ k)) < 4 * stderr, (orthogonal, est.mean(), math.exp(q @ k), stderr)
        assert abs(est.mean() / math.exp(q @ k) - 1) < 0.02


def test_orthogonal_projection_rows_are_orthogonal_within_blocks_with_gaussian_lengths():
    w = random_feature_projection(12, 4, generator=torch.Generator().manual_seed(0), dtype=F64)
    for block in (w[0:4], w[4:8], w[8:12]):
        gram = block @ block.T
        torch.testing.assert_close(gram - torch.diag(torch.diagonal(gram)), torch.zeros(4, 4, dtype=F64))
    lengths = random_feature_projection(4000, 16, generator=torch.Generator().manual_seed(1)).square().sum(1)
    assert abs(lengths.mean().item() - 16) < 0.5  # E|w|^2 = dim for w ~ N(0, I)


@pytest.mark.parametrize("causal", [False, True])
def test_performer_error_against_softmax_falls_as_features_grow(causal):
    q, k, v = qkv(48, 48, B=1, H=2, E=16, Ev=16, dtype=torch.float32)
    q, k = q * 0.5, k * 0.5  # FAVOR+ variance grows like exp(|q + k|^2): keep norms moderate
    ref = dense(q, k, v, is_causal=causal)
    errors = []
    for m in (16, 64, 256, 1024):
        runs = [
            performer_attention(q, k, v, num_features=m, is_causal=causal, generator=torch.Generator().manual_seed(s))
            for s in range(8)
        ]
        errors.append(sum((r - ref).square().mean().sqrt().item() for r in runs) / len(runs))
    assert all(a > b for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 0.35 * errors[0], errors  # ~ 1 / sqrt(F): 1/8 in theory


def test_performer_is_deterministic_given_the_generator():
    q, k, v = qkv(10, 12, dtype=torch.float32)
    a = performer_attention(q, k, v, num_features=32, generator=torch.Generator().manual_seed(5))
    b = performer_attention(q, k, v, num_features=32, generator=torch.Generator().manual_seed(5))
    assert torch.equal(a, b)


# ---------------------------------------------------------------------------------------------
# Linformer
# ---------------------------------------------------------------------------------------------
def test_linformer_shapes_for_full_and_shorter_inputs():
    module = LinformerAttention(seq_len=16, k=4, embed_dim=12, num_heads=3)
    x = torch.randn(2, 16, 12)
    assert module(x).shape == (2, 16, 12)
    assert module(x[:, :9]).shape == (2, 9, 12)
    assert module.e_proj.weight.shape == (4, 16)


def test_linformer_with_identity_projections_is_full_multihead_attention():
    torch.manual_seed(0)
    n, D, H = 10, 12, 3
    module = LinformerAttention(seq_len=n, k=n, embed_dim=D, num_heads=H).double()
    with torch.no_grad():
        module.e_proj.weight.copy_(torch.eye(n))
        module.f_proj.weight.copy_(torch.eye(n))
    x = torch.randn(2, n, D, dtype=F64)
    split = lambda t: t.view(2, n, H, D // H).transpose(1, 2)  # noqa: E731
    heads = dense(split(module.q_proj(x)), split(module.k_proj(x)), split(module.v_proj(x)))
    want = module.o_proj(heads.transpose(1, 2).reshape(2, n, D))
    torch.testing.assert_close(module(x), want)


# ---------------------------------------------------------------------------------------------
# Memory: "no n x n tensor is ever materialised" (chunked attention as one of the variants)
# ---------------------------------------------------------------------------------------------
N = 2048  # one n x n float32 matrix: 16 MiB


def _variants():
    g = lambda: torch.Generator().manual_seed(0)  # noqa: E731
    return {
        "sliding_window": lambda q, k, v: sliding_window_attention(q, k, v, 64, is_causal=True),
        "bigbird": lambda q, k, v: bigbird_attention(
            q, k, v, block_size=64, num_global=1, window_blocks=3, num_random=2, generator=g()
        ),
        "hierarchical": lambda q, k, v: hierarchical_attention(q, k, v, block_size=64),
        "linear": lambda q, k, v: linear_attention(q, k, v, is_causal=True),
        "performer": lambda q, k, v: performer_attention(q, k, v, num_features=128, generator=g()),
        "chunked": lambda q, k, v: chunked_attention(q, k, v, chunk_size=256, is_causal=True),
        "dense (positive control)": lambda q, k, v: torch.softmax(q @ k.transpose(-1, -2), -1) @ v,
    }


def _track(name: str, n: int) -> TensorMemoryTracker:
    q, k, v = qkv(n, n, B=1, H=1, E=64, Ev=64, dtype=torch.float32)
    with TensorMemoryTracker() as tracker:
        _variants()[name](q, k, v)
    return tracker


@pytest.mark.parametrize("name", list(_variants()))
def test_no_n_by_n_tensor_is_materialised(name):
    tracker = _track(name, N)
    if name.startswith("dense"):  # the tracker must catch the score matrix when there is one
        assert tracker.max_numel >= N * N and tracker.peak_bytes >= 2 * N * N * 4
    else:
        assert tracker.max_numel < N * N // 4, (tracker.max_shape, N)
        assert tracker.peak_bytes < N * N * 4, tracker.peak_bytes  # all live tensors < one n x n matrix


@pytest.mark.parametrize("name", SUBQUADRATIC_AND_CONTROL)
def test_peak_memory_grows_linearly_with_length(name):
    ratio = _track(name, 2 * N).peak_bytes / _track(name, N).peak_bytes
    if name.startswith("dense"):
        assert ratio > 3.5, ratio  # quadratic: doubling n quadruples the score matrix
    else:
        assert ratio < 2.3, ratio  # linear (plus constant terms): doubling n at most doubles it


def _flops(name: str, n: int) -> int:
    q, k, v = qkv(n, n, B=1, H=1, E=64, Ev=64, dtype=torch.float32)
    with FlopCounterMode(display=False) as counter:
        _variants()[name](q, k, v)
    return counter.get_total_flops()


@pytest.mark.parametrize("name", SUBQUADRATIC_AND_CONTROL)
def test_matmul_flops_grow_linearly_with_length_except_for_exact_attention(name):
    ratio = _flops(name, 2 * N) / _flops(name, N)
    if name == "chunked":  # causal, chunks of 256: 8 * 9 / 2 chunk pairs at N, 16 * 17 / 2 at 2N
        assert ratio == pytest.approx((16 * 17) / (8 * 9)), ratio  # still ~n^2: chunking saves memory, not work
    elif name.startswith("dense"):
        assert ratio == pytest.approx(4.0), ratio
    else:
        assert 1.9 < ratio < 2.1, ratio  # O(n): the work is linear in the length


def test_linear_variants_are_exported_from_the_package():
    import helpers
    import helpers.efficient_linear as efficient_linear

    for name in efficient_linear.__all__:
        assert getattr(helpers, name) is getattr(efficient_linear, name)


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------
def test_bad_arguments_raise_with_the_offending_value():
    q, k, v = qkv(8, 8, dtype=torch.float32)
    with pytest.raises(ValueError, match="window"):
        sliding_window_attention(q, k, v, 0)
    with pytest.raises(TypeError, match="window"):
        sliding_window_attention(q, k, v, 2.5)
    with pytest.raises(ValueError, match="num_features"):
        performer_attention(q, k, v, num_features=0)
    with pytest.raises(ValueError, match="feature_map"):
        linear_attention(q, k, v, feature_map="softmax")
    with pytest.raises(ValueError, match="block_size=3"):
        bigbird_attention(q, k, v, block_size=3, num_global=1, num_random=0, window_blocks=3)
    with pytest.raises(ValueError, match="block_size=3"):
        hierarchical_attention(q, k, v, block_size=3)
    with pytest.raises(ValueError, match="layout must have shape"):
        block_sparse_attention(q, k, v, torch.ones(3, 2, dtype=torch.bool), 4)
    with pytest.raises(TypeError, match="layout"):
        block_sparse_attention(q, k, v, torch.ones(2, 2), 4)
    with pytest.raises(ValueError, match="window_blocks must be odd"):
        bigbird_layout(4, 4, num_global=0, window_blocks=2, num_random=0)
    with pytest.raises(ValueError, match="query must have shape"):
        sliding_window_attention(q[0], k, v, 2)
    with pytest.raises(ValueError, match="needs L == S"):
        linear_attention(q, k[:, :, :5], v[:, :, :5], is_causal=True)
    with pytest.raises(ValueError, match="L=9 exceeds seq_len=8"):
        LinformerAttention(8, 4, 12, 3)(torch.randn(1, 9, 12))
    with pytest.raises(ValueError, match="num_heads=5"):
        LinformerAttention(8, 4, 12, 5)

