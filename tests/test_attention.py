"""Tests of helpers.attention: parity with torch, score functions against loops, properties."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.attention import attention_weights, default_scale, masked_softmax, repeat_kv, scaled_dot_product_attention
from helpers.masks import causal_mask
from helpers.scores import (
    additive_scores,
    cosine_scores,
    dot_scores,
    general_scores,
    scaled_dot_scores,
)

ATOL, RTOL = 1e-5, 1e-5  # float32 parity with torch's kernel


def randn(*shape: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def qkv(B=2, H=4, H_kv=None, L=5, S=7, E=8, Ev=6, seed=0):
    H_kv = H if H_kv is None else H_kv
    return (
        randn(B, H, L, E, seed=seed),
        randn(B, H_kv, S, E, seed=seed + 1),
        randn(B, H_kv, S, Ev, seed=seed + 2),
    )


# ------------------------------------------------------------------------------------------------
# Parity with torch.nn.functional.scaled_dot_product_attention
# ------------------------------------------------------------------------------------------------


def test_matches_torch_without_mask() -> None:
    q, k, v = qkv()
    torch.testing.assert_close(
        scaled_dot_product_attention(q, k, v), F.scaled_dot_product_attention(q, k, v), atol=ATOL, rtol=RTOL
    )


@pytest.mark.parametrize(
    "mask_shape", [(5, 7), (1, 1, 5, 7), (2, 1, 1, 7), (2, 4, 5, 7), (4, 5, 7), (5, 1), (1, 7), (2, 1, 5, 7)]
)
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_matches_torch_with_broadcast_masks(mask_shape: tuple[int, ...], kind: str) -> None:
    q, k, v = qkv()
    gen = torch.Generator().manual_seed(5)
    if kind == "bool":
        mask = torch.rand(mask_shape, generator=gen) > 0.3
    else:
        mask = torch.randn(mask_shape, generator=gen)
        mask = mask.masked_fill(torch.rand(mask_shape, generator=gen) < 0.2, float("-inf"))
    ours = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(
        ours, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), atol=ATOL, rtol=RTOL
    )


@pytest.mark.parametrize("L,S", [(3, 7), (7, 3), (5, 5), (1, 4), (4, 1)])
def test_is_causal_matches_torch_top_left_for_any_lengths(L: int, S: int) -> None:
    q, k, v = qkv(L=L, S=S)
    ours = scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(
        ours, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=ATOL, rtol=RTOL
    )
    explicit = scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(L, S, align="top_left"))
    torch.testing.assert_close(ours, explicit, atol=0, rtol=0)


@pytest.mark.parametrize("scale", [0.0, 0.05, 1.0, 3.0, -0.5])
def test_custom_scale_matches_torch(scale: float) -> None:
    q, k, v = qkv()
    ours = scaled_dot_product_attention(q, k, v, scale=scale)
    torch.testing.assert_close(
        ours, F.scaled_dot_product_attention(q, k, v, scale=scale), atol=ATOL, rtol=RTOL
    )


@pytest.mark.parametrize("H,H_kv", [(4, 2), (4, 1), (6, 3), (4, 4)])
def test_enable_gqa_matches_torch_and_repeat_interleave(H: int, H_kv: int) -> None:
    q, k, v = qkv(H=H, H_kv=H_kv)
    ours = scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    torch.testing.assert_close(
        ours, F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True), atol=ATOL, rtol=RTOL
    )
    group = H // H_kv
    repeated = scaled_dot_product_attention(
        q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), is_causal=True
    )
    torch.testing.assert_close(ours, repeated, atol=0, rtol=0)
    # query head h uses key/value head h // group
    for h in range(H):
        alone = scaled_dot_product_attention(q[:, h], k[:, h // group], v[:, h // group], is_causal=True)
        torch.testing.assert_close(ours[:, h], alone, atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("shape", [(6, 8), (3, 6, 8), (2, 2, 3, 6, 8)])
def test_any_number_of_batch_dims_matches_torch(shape: tuple[int, ...]) -> None:
    q, k, v = randn(*shape, seed=1), randn(*shape, seed=2), randn(*shape, seed=3)
    torch.testing.assert_close(
        scaled_dot_product_attention(q, k, v), F.scaled_dot_product_attention(q, k, v), atol=ATOL, rtol=RTOL
    )


@pytest.mark.parametrize("mask_kind", ["causal", "bool", "float"])
def test_gradients_match_torch(mask_kind: str) -> None:
    q, k, v = qkv(H=4, H_kv=2, L=5, S=5)
    mask = {
        "causal": None,
        "bool": (torch.rand(5, 5, generator=torch.Generator().manual_seed(1)) > 0.4)
        | torch.eye(5, dtype=torch.bool),
        "float": randn(2, 1, 5, 5, seed=9),
    }[mask_kind]
    kwargs = dict(attn_mask=mask, is_causal=mask_kind == "causal", enable_gqa=True)
    grads = []
    for attend in (scaled_dot_product_attention, F.scaled_dot_product_attention):
        inputs = [t.clone().requires_grad_() for t in (q, k, v)]
        attend(*inputs, **kwargs).square().sum().backward()
        grads.append([t.grad for t in inputs])
    for ours, theirs in zip(*grads):
        torch.testing.assert_close(ours, theirs, atol=ATOL, rtol=RTOL)


def test_dropout_matches_torch_for_the_same_seed() -> None:
    q, k, v = qkv(H=4, H_kv=2)
    torch.manual_seed(11)
    ours = scaled_dot_product_attention(q, k, v, dropout_p=0.3, enable_gqa=True)
    torch.manual_seed(11)
    theirs = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, enable_gqa=True)
    torch.testing.assert_close(ours, theirs, atol=ATOL, rtol=RTOL)


def test_dropout_zeroes_fraction_p_and_preserves_expectation() -> None:
    p = 0.25
    q, k, v = qkv(B=4, H=4, L=16, S=16)
    torch.manual_seed(0)
    _, dropped = scaled_dot_product_attention(q, k, v, dropout_p=p, need_weights=True)
    zero_fraction = (dropped == 0).float().mean().item()
    # 4096 weights, Bernoulli(0.25): standard deviation 0.0068; allow 4 of them
    assert abs(zero_fraction - p) < 0.03, zero_fraction
    clean = attention_weights(q, k)
    kept = dropped != 0
    torch.testing.assert_close(dropped[kept], clean[kept] / (1 - p))  # survivors are rescaled by 1 / (1 - p)
    one = (q[:1, :1], k[:1, :1], v[:1, :1])  # (1, 1, 16, E): 2000 independent draws as one batch
    draws = scaled_dot_product_attention(*(t.expand(2000, -1, -1, -1) for t in one), dropout_p=p)
    mean, exact = draws.mean(0), scaled_dot_product_attention(*one)[0]
    # the expectation is preserved: standard error <= 0.011 per entry, so 0.06 is ~5 of them;
    # dropout without the 1 / (1 - p) rescaling would be off by up to 0.25 here
    assert (mean - exact).abs().max().item() < 0.06


def test_need_weights_rows_sum_to_one_and_reproduce_output() -> None:
    q, k, v = qkv()
    out, weights = scaled_dot_product_attention(q, k, v, need_weights=True)
    assert weights.shape == (2, 4, 5, 7) and weights.dtype == torch.float32
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4, 5))
    torch.testing.assert_close(out, weights @ v, atol=0, rtol=0)
    manual = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1)
    torch.testing.assert_close(weights, manual)
    torch.testing.assert_close(attention_weights(q, k), manual)


def test_attention_weights_with_gqa_and_causal_match_brute_force_loop() -> None:
    q, k, _ = qkv(B=1, H=2, H_kv=1, L=4, S=4, E=3)
    weights = attention_weights(q, k, is_causal=True, enable_gqa=True, scale=0.7)
    for h in range(2):
        for i in range(4):
            scores = [0.7 * float(q[0, h, i] @ k[0, 0, j]) for j in range(i + 1)]
            expected = torch.softmax(torch.tensor(scores), 0)
            torch.testing.assert_close(weights[0, h, i, : i + 1], expected)
            assert (weights[0, h, i, i + 1 :] == 0).all()


# ------------------------------------------------------------------------------------------------
# Fully masked rows, low precision
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_fully_masked_row_gives_zero_output_and_finite_gradients_like_torch(kind: str) -> None:
    q, k, v = (t.requires_grad_() for t in qkv(B=1, H=2, L=3, S=4))
    mask = torch.ones(3, 4, dtype=torch.bool)
    mask[1] = False  # query 1 may attend to nothing
    attn_mask = mask if kind == "bool" else torch.zeros(3, 4).masked_fill(~mask, float("-inf"))
    out, weights = scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, need_weights=True)
    assert (weights[..., 1, :] == 0).all() and (out[..., 1, :] == 0).all()
    torch.testing.assert_close(weights[..., [0, 2], :].sum(-1), torch.ones(1, 2, 2))
    torch.testing.assert_close(
        out, F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask), atol=ATOL, rtol=RTOL
    )
    (out.square().sum()).backward()
    for name, t in (("query", q), ("key", k), ("value", v)):
        assert torch.isfinite(t.grad).all(), name
    assert (q.grad[..., 1, :] == 0).all()  # the empty row has no influence at all


def test_masked_softmax_empty_row_is_zero_and_gradient_is_zero() -> None:
    scores = randn(2, 5).requires_grad_()
    mask = torch.tensor([[True, False, True, False, False], [False] * 5])
    weights = masked_softmax(scores, mask)
    torch.testing.assert_close(weights[0], torch.softmax(scores[0].masked_fill(~mask[0], -math.inf), 0))
    assert (weights[1] == 0).all()
    weights.sum().backward()
    assert torch.isfinite(scores.grad).all() and (scores.grad[1] == 0).all()


# Low-precision tolerances (absolute, on O(1) outputs; measured max errors over 50 seeds of
# (2, 4, 16|24, 32) inputs: float16 1.4e-3, bfloat16 1.1e-2; torch's own kernel: 1.6e-3, 1.1e-2).
LOW_PRECISION_ATOL = {torch.float16: 5e-3, torch.bfloat16: 3e-2}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_within_stated_tolerance_of_float32(dtype: torch.dtype) -> None:
    q, k, v = randn(2, 4, 16, 32, seed=1), randn(2, 4, 24, 32, seed=2), randn(2, 4, 24, 32, seed=3)
    mask = torch.rand(16, 24, generator=torch.Generator().manual_seed(0)) > 0.2
    reference = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    out, weights = scaled_dot_product_attention(
        q.to(dtype), k.to(dtype), v.to(dtype), attn_mask=mask, need_weights=True
    )
    assert out.dtype == dtype and weights.dtype == torch.float32  # softmax ran in float32
    error = (out.float() - reference).abs().max().item()
    assert error < LOW_PRECISION_ATOL[dtype], error
    torch_error = (
        (
            F.scaled_dot_product_attention(q.to(dtype), k.to(dtype), v.to(dtype), attn_mask=mask).float()
            - reference
        )
        .abs()
        .max()
        .item()
    )
    assert error <= 1.5 * torch_error + 1e-4, (error, torch_error)  # no worse than torch's own kernel


# ------------------------------------------------------------------------------------------------
# Properties: causality, permutation equivariance
# ------------------------------------------------------------------------------------------------


def test_causal_output_ignores_future_tokens() -> None:
    q, k, v = qkv(L=6, S=6)
    out = scaled_dot_product_attention(q, k, v, is_causal=True)
    for i in range(6):
        k2, v2 = k.clone(), v.clone()
        k2[..., i + 1 :, :] = randn(*k2[..., i + 1 :, :].shape, seed=100 + i)
        v2[..., i + 1 :, :] = randn(*v2[..., i + 1 :, :].shape, seed=200 + i)
        q2 = q.clone()
        q2[..., i + 1 :, :] += 5.0
        out2 = scaled_dot_product_attention(q2, k2, v2, is_causal=True)
        torch.testing.assert_close(out2[..., : i + 1, :], out[..., : i + 1, :], atol=0, rtol=0)


def test_causal_gradient_of_output_i_wrt_future_key_value_is_exactly_zero() -> None:
    L = 5
    q, k, v = (t.requires_grad_() for t in qkv(B=1, H=1, L=L, S=L))
    out = scaled_dot_product_attention(q, k, v, is_causal=True)
    for i in range(L):
        grad_k, grad_v = torch.autograd.grad(out[0, 0, i].sum(), (k, v), retain_graph=True)
        assert (grad_k[0, 0, i + 1 :] == 0).all() and (grad_v[0, 0, i + 1 :] == 0).all()
        assert grad_v[0, 0, : i + 1].abs().sum() > 0  # the past does matter


def test_self_attention_without_positions_is_permutation_equivariant() -> None:
    x = randn(2, 3, 7, 8)
    perm = torch.randperm(7, generator=torch.Generator().manual_seed(1))
    out = scaled_dot_product_attention(x, x, x)
    torch.testing.assert_close(
        scaled_dot_product_attention(x[:, :, perm], x[:, :, perm], x[:, :, perm]), out[:, :, perm]
    )
    # and permuting only keys and values together changes nothing at all
    torch.testing.assert_close(scaled_dot_product_attention(x, x[:, :, perm], x[:, :, perm]), out)


# ------------------------------------------------------------------------------------------------
# Input validation
# ------------------------------------------------------------------------------------------------


def _bad_calls():
    q, k, v = qkv()
    return [
        (lambda: scaled_dot_product_attention(q[0, 0, 0], k, v), ValueError, "query"),
        (lambda: scaled_dot_product_attention(q, k[..., :5], v), ValueError, r"query.*key"),
        (lambda: scaled_dot_product_attention(q, k, v[..., :6, :]), ValueError, r"key and value"),
        (
            lambda: scaled_dot_product_attention(q, k[:, :3], v[:, :3], enable_gqa=True),
            ValueError,
            r"key \(2, 3",
        ),
        (lambda: scaled_dot_product_attention(q, k[:, :2], v[:, :2]), ValueError, "enable_gqa"),
        (
            lambda: scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(5, 7, dtype=torch.long)),
            TypeError,
            "attn_mask.*bool",
        ),
        (
            lambda: scaled_dot_product_attention(q, k, v, attn_mask=torch.zeros(5, 7, dtype=torch.float64)),
            TypeError,
            "attn_mask",
        ),
        (
            lambda: scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(5, 6, dtype=torch.bool)),
            ValueError,
            r"attn_mask.*\(5, 6\)",
        ),
        (
            lambda: scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(3, 5, 7, dtype=torch.bool)),
            ValueError,
            "attn_mask",
        ),
        (
            lambda: scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(7, dtype=torch.bool)),
            ValueError,
            "attn_mask",
        ),
        (
            lambda: scaled_dot_product_attention(q, k, v, attn_mask=torch.full((5, 7), math.nan)),
            ValueError,
            "attn_mask",
        ),
        (
            lambda: scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(5, 7), is_causal=True),
            ValueError,
            "is_causal",
        ),
        (lambda: scaled_dot_product_attention(q, k, v, dropout_p=1.0), ValueError, "dropout_p"),
        (lambda: scaled_dot_product_attention(q, k, v, dropout_p=-0.1), ValueError, "dropout_p"),
        (lambda: scaled_dot_product_attention(q, k, v, scale=math.inf), ValueError, "scale"),
        (lambda: scaled_dot_product_attention(q.masked_fill(q > 2, math.nan), k, v), ValueError, "query"),
        (lambda: scaled_dot_product_attention(q, k.masked_fill(k > 2, math.inf), v), ValueError, "key"),
        (lambda: scaled_dot_product_attention(q, k, v.masked_fill(v > 2, -math.inf)), ValueError, "value"),
        (lambda: scaled_dot_product_attention(q, k, v.double()), TypeError, "value"),
        (lambda: scaled_dot_product_attention(q.long(), k, v), TypeError, "query"),
        (lambda: scaled_dot_product_attention(q, k, v, is_causal=1), TypeError, "is_causal"),
        (lambda: attention_weights(q, k[:, :, :, :3]), ValueError, "key"),
        (lambda: dot_scores(q, k[..., :3]), ValueError, "key"),
        (lambda: general_scores(q, k, torch.ones(8, 7)), ValueError, "weight"),
        (lambda: additive_scores(q, k, torch.ones(4, 8), torch.ones(4, 8), torch.ones(3)), ValueError, "v "),
        (lambda: cosine_scores(q, k, eps=0.0), ValueError, "eps"),
    ]


@pytest.mark.parametrize("case", range(len(_bad_calls())))
def test_bad_input_raises_naming_the_argument(case: int) -> None:
    call, error, pattern = _bad_calls()[case]
    with pytest.raises(error, match=pattern):
        call()


ARG_NAMES = ("query", "key", "value", "attn_mask", "is_causal", "dropout_p", "scale", "enable_gqa")


GOOD_MASK_SHAPES = {  # name -> shape as a function of (B, H, L, S)
    "(L, S)": lambda B, H, L, S: (L, S),
    "(1, 1, L, S)": lambda B, H, L, S: (1, 1, L, S),
    "(B, 1, 1, S)": lambda B, H, L, S: (B, 1, 1, S),
    "(B, H, L, S)": lambda B, H, L, S: (B, H, L, S),
    "(H, L, S)": lambda B, H, L, S: (H, L, S),
    "(L, 1)": lambda B, H, L, S: (L, 1),
    "(1, S)": lambda B, H, L, S: (1, S),
}
BAD_MASK_SHAPES = {
    "(S,)": lambda B, H, L, S: (S,),
    "(L + 1, S)": lambda B, H, L, S: (L + 1, S),
    "(B + 2, 1, L, S)": lambda B, H, L, S: (B + 2, 1, L, S),
    "(1, B, H, L, S)": lambda B, H, L, S: (1, B, H, L, S),
    "(H + 1, L, S)": lambda B, H, L, S: (H + 1, L, S),
}


@st.composite
def sdpa_inputs(draw):
    """Random shapes, masks and options; in about half the cases exactly one thing is wrong."""
    fault = draw(st.sampled_from([None] * 5 + ["E", "S", "heads", "no_gqa", "mask_shape", "mask_dtype"]))
    B, H_kv, group = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    L, S, E, Ev = (
        draw(st.integers(1, 5)),
        draw(st.integers(1, 5)),
        draw(st.integers(1, 6)),
        draw(st.integers(1, 4)),
    )
    H = H_kv * group + (1 if fault == "heads" else 0)
    enable_gqa = fault != "no_gqa" and (H != H_kv or draw(st.booleans()))
    if fault == "no_gqa" and H == H_kv:
        H = 2 * H_kv
    seed = draw(st.integers(0, 2**16))
    q = randn(B, H, L, E, seed=seed)
    k = randn(B, H_kv, S, E + (fault == "E"), seed=seed + 1)
    v = randn(B, H_kv, S + (fault == "S"), Ev, seed=seed + 2)
    shapes = list(BAD_MASK_SHAPES) if fault == "mask_shape" else [None, None, *GOOD_MASK_SHAPES]
    mask_shape = draw(st.sampled_from(shapes))
    if fault == "mask_dtype" and mask_shape is None:
        mask_shape = "(L, S)"
    mask = None
    if mask_shape is not None:
        size = {**GOOD_MASK_SHAPES, **BAD_MASK_SHAPES}[mask_shape](B, H, L, S)
        kind = draw(st.sampled_from(["int", "double"] if fault == "mask_dtype" else ["bool", "float"]))
        gen = torch.Generator().manual_seed(seed)
        mask = {
            "bool": lambda: torch.rand(size, generator=gen) > 0.4,
            "float": lambda: torch.randn(size, generator=gen),
            "int": lambda: (torch.rand(size, generator=gen) > 0.4).int(),
            "double": lambda: torch.randn(size, generator=gen).double(),
        }[kind]()
    is_causal = draw(st.booleans()) if mask is None else draw(st.sampled_from([False] * 9 + [True]))
    scale = draw(st.sampled_from([None, None, 0.5, 2.0]))
    return q, k, v, dict(attn_mask=mask, is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sdpa_inputs())
def test_property_equals_torch_or_raises_value_or_type_error_naming_an_argument(inputs) -> None:
    q, k, v, kwargs = inputs
    try:
        expected, torch_error = F.scaled_dot_product_attention(q, k, v, **kwargs), None
    except Exception as error:  # noqa: BLE001 - torch raises RuntimeError, IndexError, ...
        expected, torch_error = None, error
    try:
        ours = scaled_dot_product_attention(q, k, v, **kwargs)
    except (ValueError, TypeError) as error:
        assert any(name in str(error) for name in ARG_NAMES), str(error)
        # we may be stricter than torch only where the docstring says so: key/value lengths that
        # differ; attn_mask with is_causal, or a 1-D attn_mask (torch lets both pass for some
        # sizes, e.g. L = S = 1)
        mask = kwargs["attn_mask"]
        documented = k.size(-2) != v.size(-2) or (
            mask is not None and (kwargs["is_causal"] or mask.dim() < 2)
        )
        assert torch_error is not None or documented, f"torch accepted it, we raised {error!r}"
        return
    assert torch_error is None, f"torch raised {torch_error!r}, we returned"
    torch.testing.assert_close(ours, expected, atol=ATOL, rtol=RTOL)


def test_float64_inputs_keep_float64_precision() -> None:
    """float64 is not downcast: the result matches torch's float64 kernel to float64 precision."""
    gen = torch.Generator().manual_seed(7)
    query, key, value = (torch.randn(2, 3, 5, 8, generator=gen, dtype=torch.float64) for _ in range(3))
    output, weights = scaled_dot_product_attention(query, key, value, is_causal=True, need_weights=True)
    expected = torch.nn.functional.scaled_dot_product_attention(query, key, value, is_causal=True)
    assert output.dtype == torch.float64 and weights.dtype == torch.float64
    torch.testing.assert_close(output, expected, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("n_rep", [1, 2, 3])
@pytest.mark.parametrize("shape", [(2, 2, 5, 4), (3, 5, 4), (2, 3, 2, 5, 4)])
def test_repeat_kv_equals_repeat_interleave_on_dim_minus_3(shape, n_rep) -> None:
    x = torch.randn(*shape)
    torch.testing.assert_close(repeat_kv(x, n_rep), x.repeat_interleave(n_rep, dim=-3), atol=0, rtol=0)


def test_repeat_kv_is_one_function_shared_by_the_package() -> None:
    import helpers
    from helpers.exercises.guard import CallWatch, watching
    from helpers.multihead import MultiHeadAttention

    assert helpers.repeat_kv is repeat_kv
    layer = MultiHeadAttention(16, 4, num_kv_heads=2)
    x = torch.randn(1, 3, 16)
    watch = CallWatch(forbidden=(repeat_kv,), package=False)
    with watching(watch):  # the readable path of a grouped layer expands keys with it, nothing else
        layer(x, need_weights=True)
    assert watch.reached is not None and "repeat_kv" in watch.reached
    with pytest.raises(TypeError, match="n_rep"):
        repeat_kv(torch.zeros(1, 2, 3, 4), 2.0)
    with pytest.raises(ValueError, match="x must have shape"):
        repeat_kv(torch.zeros(3, 4), 2)


def test_gqa_expands_keys_with_repeat_kv_as_torch_does() -> None:
    q, k, v = torch.randn(2, 6, 5, 4), torch.randn(2, 2, 7, 4), torch.randn(2, 2, 7, 3)
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    torch.testing.assert_close(scaled_dot_product_attention(q, k, v, enable_gqa=True), want)
    torch.testing.assert_close(scaled_dot_product_attention(q, repeat_kv(k, 3), repeat_kv(v, 3)), want)


@pytest.mark.parametrize("head_dim", [1, 4, 64, 80])
def test_default_scale_is_torchs_default_and_every_kernels(head_dim: int) -> None:
    from helpers import chunked, efficient

    assert default_scale(head_dim) == pytest.approx(1 / math.sqrt(head_dim), rel=0, abs=0)
    gen = torch.Generator().manual_seed(head_dim)
    q, k, v = (torch.randn(2, 2, 8, head_dim, generator=gen, dtype=torch.float64) for _ in range(3))
    explicit = F.scaled_dot_product_attention(q, k, v, scale=default_scale(head_dim))
    torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v), explicit)  # torch's scale=None
    for default in (
        scaled_dot_product_attention(q, k, v),
        chunked.online_softmax_attention(q, k, v, chunk_size=3),
        chunked.chunked_attention(q, k, v, chunk_size=3),
        efficient.sliding_window_attention(q, k, v, 8),
    ):
        torch.testing.assert_close(default, explicit)
    torch.testing.assert_close(scaled_dot_scores(q, k), q @ k.transpose(-2, -1) * default_scale(head_dim))


def test_default_scale_rejects_a_bad_head_dim() -> None:
    with pytest.raises(ValueError, match="head_dim must be a positive int, got 0"):
        default_scale(0)
    with pytest.raises(TypeError, match="head_dim must be an int"):
        default_scale(8.0)
