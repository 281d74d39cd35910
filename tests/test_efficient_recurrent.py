"""Causal linear attention run as a recurrent network (chapter 5.3): the token-by-token state
update gives the parallel (chunked) causal form, from a state whose size does not grow."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.efficient_linear import linear_attention, linear_attention_step


def run_recurrent(q, k, v, **kwargs):
    state, outs = None, []
    for t in range(q.shape[2]):
        out, state = linear_attention_step(q[:, :, t : t + 1], k[:, :, t : t + 1], v[:, :, t : t + 1], state, **kwargs)
        outs.append(out)
    return torch.cat(outs, dim=2), state


@settings(max_examples=40, deadline=None)
@given(
    batch=st.integers(1, 3),
    kv_heads=st.integers(1, 2),
    rep=st.integers(1, 2),
    length=st.integers(1, 80),
    dim=st.integers(1, 9),
    vdim=st.integers(1, 7),
    chunk=st.sampled_from([1, 7, 64]),
    seed=st.integers(0, 2**31 - 1),
)
def test_recurrent_equals_parallel_causal(batch, kv_heads, rep, length, dim, vdim, chunk, seed) -> None:
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, kv_heads * rep, length, dim, generator=g, dtype=torch.float64)
    k = torch.randn(batch, kv_heads, length, dim, generator=g, dtype=torch.float64)
    v = torch.randn(batch, kv_heads, length, vdim, generator=g, dtype=torch.float64)
    parallel = linear_attention(q, k, v, is_causal=True, chunk_size=chunk)
    recurrent, _ = run_recurrent(q, k, v)
    torch.testing.assert_close(recurrent, parallel, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("feature_map", ["relu", lambda x: x.pow(2)])
def test_recurrent_equals_parallel_other_feature_maps(feature_map) -> None:
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 50, 4, generator=g, dtype=torch.float64) for _ in range(3))
    parallel = linear_attention(q, k, v, is_causal=True, feature_map=feature_map)
    recurrent, _ = run_recurrent(q, k, v, feature_map=feature_map)
    torch.testing.assert_close(recurrent, parallel, rtol=1e-12, atol=1e-12)


def test_state_is_the_closed_form_sums() -> None:
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(1, 2, 30, 5, generator=g, dtype=torch.float64) for _ in range(3))
    _, (s, z) = run_recurrent(q, k, v)
    phi_k = torch.nn.functional.elu(k) + 1
    torch.testing.assert_close(s, phi_k.transpose(-1, -2) @ v)  # sum_t phi(k_t) v_t^T
    torch.testing.assert_close(z, phi_k.sum(dim=2))  # sum_t phi(k_t)


def test_state_size_does_not_depend_on_position() -> None:
    q, k, v = (torch.randn(2, 4, 1000, 8) for _ in range(3))
    sizes = {}
    state = None
    for t in range(1000):
        _, state = linear_attention_step(q[:, :, t : t + 1], k[:, :, t : t + 1], v[:, :, t : t + 1], state)
        if t + 1 in (10, 1000):
            sizes[t + 1] = sum(x.numel() for x in state)
    assert sizes[10] == sizes[1000] == 2 * 4 * (8 * 8 + 8)  # B * H * (F * Ev + F)


def test_half_inputs_sum_in_float32() -> None:
    q, k, v = (torch.randn(1, 1, 1, 4).half() for _ in range(3))
    out, (s, z) = linear_attention_step(q, k, v)
    assert out.dtype == torch.float16 and s.dtype == z.dtype == torch.float32


def test_bad_inputs_raise() -> None:
    q = torch.randn(1, 2, 1, 4)
    with pytest.raises(ValueError, match="length 1"):
        linear_attention_step(torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4))
    with pytest.raises(ValueError, match="state shapes"):
        linear_attention_step(q, q, q, (torch.zeros(1, 2, 4, 5), torch.zeros(1, 2, 4)))
    with pytest.raises(TypeError, match="state"):
        linear_attention_step(q, q, q, [torch.zeros(1, 2, 4, 4), torch.zeros(1, 2, 4)])
    with pytest.raises(ValueError, match="feature_map"):
        linear_attention_step(q, q, q, feature_map="softmax")
    with pytest.raises(TypeError, match="query"):
        linear_attention_step(q.long(), q, q)
