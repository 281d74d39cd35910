"""Tests of helpers.positional against closed forms, brute-force loops and reference implementations."""

from __future__ import annotations

import math

import pytest
import torch

from helpers.masks import causal_mask
from helpers.positional import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    T5RelativeBias,
    alibi_bias,
    alibi_slopes,
    apply_rotary_pos_emb,
    relative_position_bucket,
    rotate_half,
    sinusoidal_encoding,
    transformer_xl_scores,
)

inf = float("inf")


def randn(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ----------------------------------------------------------------------------------------------
# Sinusoidal and learned
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [8, 7])
def test_sinusoidal_equals_closed_form_sin_even_cos_odd(dim: int) -> None:
    encoding = sinusoidal_encoding(12, dim)
    expected = torch.zeros(12, dim)
    for pos in range(12):
        for col in range(dim):
            angle = pos / 10000.0 ** ((col - col % 2) / dim)
            expected[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    assert encoding.shape == (12, dim) and encoding.dtype == torch.float32
    torch.testing.assert_close(encoding, expected, atol=1e-6, rtol=0)


def test_sinusoidal_dot_product_depends_only_on_offset() -> None:
    encoding = sinusoidal_encoding(64, 16).double()
    for offset in (1, 5, 17):
        dots = torch.stack([encoding[p] @ encoding[p + offset] for p in range(0, 40, 7)])
        torch.testing.assert_close(dots, dots[0].expand_as(dots), atol=1e-5, rtol=0)


def test_learned_positions_look_up_rows_and_refuse_past_the_end() -> None:
    torch.manual_seed(0)
    table = LearnedPositionalEmbedding(10, 4)
    torch.testing.assert_close(table(3), table.weight[:3], atol=0, rtol=0)
    torch.testing.assert_close(table(2, offset=7), table.weight[7:9], atol=0, rtol=0)
    positions = torch.tensor([[0, 9], [4, 4]])
    assert table(positions).shape == (2, 2, 4)
    with pytest.raises(ValueError, match=r"max_positions=10.*from 8 to 10"):
        table(3, offset=8)
    with pytest.raises(ValueError, match=r"from -1 to 0"):
        table(torch.tensor([-1, 0]))


# ----------------------------------------------------------------------------------------------
# T5 relative bias
# ----------------------------------------------------------------------------------------------


def t5_bucket_reference(offset: int, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """The T5 rule for one offset, written independently with Python scalars."""
    bucket = 0
    if bidirectional:
        num_buckets //= 2
        if offset > 0:
            bucket += num_buckets
        n = abs(offset)
    else:
        n = max(-offset, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return bucket + n
    large = max_exact + int(math.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact))
    return bucket + min(large, num_buckets - 1)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", [(32, 128), (8, 20), (16, 64)])
def test_t5_buckets_equal_independent_rule(bidirectional: bool, num_buckets: int, max_distance: int) -> None:
    offsets = torch.arange(-300, 301)
    buckets = relative_position_bucket(offsets, bidirectional, num_buckets, max_distance)
    expected = torch.tensor([t5_bucket_reference(int(o), bidirectional, num_buckets, max_distance) for o in offsets])
    torch.testing.assert_close(buckets, expected, atol=0, rtol=0)
    assert int(buckets.min()) >= 0 and int(buckets.max()) == num_buckets - 1


@pytest.mark.parametrize("bidirectional,first_in_last", [(True, 91), (False, 113)])
def test_t5_last_bucket_starts_before_max_distance(bidirectional: bool, first_in_last: int) -> None:
    """T5's 32 buckets, max_distance 128: the last bucket of past offsets starts at 91 (encoder) or 113
    (decoder), as the docstring and chapter 6.5 say, and holds everything from there on."""
    distance = torch.arange(0, 400)
    buckets = relative_position_bucket(-distance, bidirectional, 32, 128)
    last = int(buckets.max())
    assert int(distance[buckets == last].min()) == first_in_last
    assert bool((buckets[first_in_last:] == last).all()) and int(buckets[first_in_last - 1]) == last - 1


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_buckets_equal_transformers_t5attention(bidirectional: bool) -> None:
    modeling_t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    offsets = torch.arange(-200, 201)[:, None] - torch.arange(0, 5)[None, :]  # (401, 5)
    ours = relative_position_bucket(offsets, bidirectional, 32, 128)
    theirs = modeling_t5.T5Attention._relative_position_bucket(offsets, bidirectional, 32, 128)
    torch.testing.assert_close(ours, theirs, atol=0, rtol=0)


def test_t5_relative_bias_is_the_embedding_of_each_offsets_bucket() -> None:
    torch.manual_seed(0)
    module = T5RelativeBias(3, bidirectional=False, num_buckets=8, max_distance=16)
    bias = module(4, 6, query_offset=2)  # queries at positions 2..5
    assert bias.shape == (1, 3, 4, 6)
    weight = module.relative_attention_bias.weight  # (buckets, H)
    for i in range(4):
        for j in range(6):
            bucket = t5_bucket_reference(j - (i + 2), False, 8, 16)
            torch.testing.assert_close(bias[0, :, i, j], weight[bucket], atol=0, rtol=0)


# ----------------------------------------------------------------------------------------------
# ALiBi
# ----------------------------------------------------------------------------------------------


def test_alibi_slopes_for_8_heads_are_half_to_1_over_256() -> None:
    torch.testing.assert_close(alibi_slopes(8), torch.tensor([2.0 ** -k for k in range(1, 9)]), atol=0, rtol=0)


@pytest.mark.parametrize(
    "num_heads,exponents",
    [
        (6, [2, 4, 6, 8, 1, 3]),  # slopes of 4 heads, then every other slope of 8 heads
        (12, [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5]),  # 8 heads, then every other of 16
        (1, [8]),
        (4, [2, 4, 6, 8]),
    ],
)
def test_alibi_slopes_follow_the_non_power_of_two_rule(num_heads: int, exponents: list[float]) -> None:
    torch.testing.assert_close(alibi_slopes(num_heads), torch.tensor([2.0 ** -e for e in exponents]), atol=0, rtol=0)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("query_offset", [0, 2])
def test_alibi_bias_equals_brute_force_with_queries_at_the_offset(causal: bool, query_offset: int) -> None:
    bias = alibi_bias(4, 3, 5, is_causal=causal, query_offset=query_offset)  # queries at offset, offset + 1, + 2
    slopes = alibi_slopes(4)
    assert bias.shape == (1, 4, 3, 5)
    for h in range(4):
        for i in range(3):
            for j in range(5):
                distance = (i + query_offset) - j
                expected = -inf if (causal and distance < 0) else -slopes[h].item() * abs(distance)
                assert bias[0, h, i, j].item() == pytest.approx(expected)


def test_alibi_defaults_to_not_causal_and_top_left_like_every_is_causal() -> None:
    assert torch.equal(alibi_bias(4, 3, 5), alibi_bias(4, 3, 5, is_causal=False, query_offset=0))
    masked = alibi_bias(4, 3, 5, is_causal=True).isneginf()[0, 0]  # (L, S)
    torch.testing.assert_close(~masked, causal_mask(3, 5))  # the same keys as the top-left causal mask
    masked = alibi_bias(4, 3, 5, is_causal=True, query_offset=2).isneginf()[0, 0]
    torch.testing.assert_close(~masked, causal_mask(3, 5, align="bottom_right"))  # a cache of 2 tokens
    with pytest.raises(ValueError, match="query_offset must be >= 0, got -1"):
        alibi_bias(4, 3, 5, query_offset=-1)


def test_alibi_causal_bias_gives_the_papers_softmax() -> None:
    # The paper's code adds slope * key_position to every row (a per-row constant away from ours).
    scores = randn(1, 8, 6, 6)
    slopes = alibi_slopes(8)
    future = torch.ones(6, 6, dtype=torch.bool).triu(1)
    paper_bias = (slopes[:, None, None] * torch.arange(6.0)).masked_fill(future, -inf)  # (H, L, S)
    torch.testing.assert_close(
        torch.softmax(scores + alibi_bias(8, 6, 6, is_causal=True), -1), torch.softmax(scores + paper_bias, -1)
    )


# ----------------------------------------------------------------------------------------------
# RoPE
# ----------------------------------------------------------------------------------------------


def test_rotate_half_closed_form() -> None:
    x = torch.arange(1.0, 7.0)  # (x1 | x2) = (1, 2, 3 | 4, 5, 6)
    torch.testing.assert_close(rotate_half(x), torch.tensor([-4.0, -5.0, -6.0, 1.0, 2.0, 3.0]), atol=0, rtol=0)
    y = randn(2, 3, 8)
    torch.testing.assert_close(rotate_half(rotate_half(y)), -y, atol=0, rtol=0)  # 90 + 90 degrees


def test_rope_preserves_norms() -> None:
    q, k = randn(2, 4, 9, 16, seed=1), randn(2, 2, 9, 16, seed=2)
    cos, sin = RotaryEmbedding(16)(9)
    q_rot, k_rot = apply_rotary_pos_emb(q, k, cos, sin)
    torch.testing.assert_close(q_rot.norm(dim=-1), q.norm(dim=-1))
    torch.testing.assert_close(k_rot.norm(dim=-1), k.norm(dim=-1))


def test_rope_dot_product_depends_only_on_position_offset() -> None:
    rope = RotaryEmbedding(16)
    q, k = randn(1, 1, 1, 16, seed=3), randn(1, 1, 1, 16, seed=4)

    def score(m: int, n: int) -> torch.Tensor:
        q_cos, q_sin = rope(torch.tensor([m]))
        k_cos, k_sin = rope(torch.tensor([n]))
        q_rot, _ = apply_rotary_pos_emb(q, q, q_cos, q_sin)
        _, k_rot = apply_rotary_pos_emb(k, k, k_cos, k_sin)
        return (q_rot * k_rot).sum()

    for offset in (0, 3, -5):
        scores = torch.stack([score(m, m - offset) for m in (10, 17, 40, 123)])
        torch.testing.assert_close(scores, scores[0].expand_as(scores), atol=1e-4, rtol=1e-5)
    assert abs(score(10, 7) - score(10, 8)).item() > 1e-3  # and it does depend on the offset


def test_rope_matches_complex_number_half_split_implementation() -> None:
    head_dim, length = 8, 6
    x = randn(2, 3, length, head_dim).double()
    theta = 10000.0 ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)  # (E/2,)
    angle = torch.arange(length, dtype=torch.float64)[:, None] * theta  # (L, E/2)
    z = torch.complex(x[..., : head_dim // 2], x[..., head_dim // 2:]) * torch.polar(torch.ones_like(angle), angle)
    expected = torch.cat([z.real, z.imag], dim=-1)
    cos, sin = RotaryEmbedding(head_dim)(length)
    rotated, _ = apply_rotary_pos_emb(x, x, cos.double(), sin.double())
    torch.testing.assert_close(rotated, expected, atol=1e-6, rtol=1e-6)


def test_rope_half_split_equals_interleaved_paper_form_after_a_feature_permutation() -> None:
    head_dim, length = 8, 5
    x = randn(1, 2, length, head_dim)
    theta = 10000.0 ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angle = torch.arange(length, dtype=torch.float32)[:, None] * theta  # (L, E/2)
    # paper (RoFormer eq. 34): pairs of neighbours (2i, 2i + 1)
    even, odd = x[..., 0::2], x[..., 1::2]
    paper = torch.stack([even * angle.cos() - odd * angle.sin(), even * angle.sin() + odd * angle.cos()], dim=-1)
    paper = paper.flatten(-2)  # back to interleaved order
    # half-split on the permuted features (evens first, then odds) is the same rotation
    perm = torch.cat([torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)])
    cos, sin = RotaryEmbedding(head_dim)(length)
    half_split, _ = apply_rotary_pos_emb(x[..., perm], x[..., perm], cos, sin)
    torch.testing.assert_close(half_split, paper[..., perm])


def test_rope_matches_transformers_llama() -> None:
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(hidden_size=64, num_attention_heads=4, rope_theta=10000.0)
    position_ids = torch.tensor([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11]])
    ref_cos, ref_sin = llama.LlamaRotaryEmbedding(config)(torch.zeros(2, 5, 64), position_ids)
    cos, sin = RotaryEmbedding(16)(position_ids)
    torch.testing.assert_close(cos, ref_cos)
    torch.testing.assert_close(sin, ref_sin)
    q, k = randn(2, 4, 5, 16, seed=1), randn(2, 1, 5, 16, seed=2)
    ours = apply_rotary_pos_emb(q, k, cos, sin)
    theirs = llama.apply_rotary_pos_emb(q, k, ref_cos, ref_sin)
    torch.testing.assert_close(ours[0], theirs[0])
    torch.testing.assert_close(ours[1], theirs[1])


def test_rope_offset_equals_explicit_positions() -> None:
    rope = RotaryEmbedding(8)
    cos, sin = rope(3, offset=4)
    ref_cos, ref_sin = rope(torch.tensor([4, 5, 6]))
    assert cos.shape == (1, 3, 8)
    torch.testing.assert_close(cos, ref_cos, atol=0, rtol=0)
    torch.testing.assert_close(sin, ref_sin, atol=0, rtol=0)


# ----------------------------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------------------------


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"head_dim must be even.*got 7"):
        RotaryEmbedding(7)
    with pytest.raises(ValueError, match=r"even last dimension, got shape \(2, 5\)"):
        rotate_half(torch.zeros(2, 5))
    with pytest.raises(ValueError, match=r"positions must have shape \(L,\) or \(B, L\), got \(1, 2, 3\)"):
        RotaryEmbedding(8)(torch.zeros(1, 2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match=r"q, k and cos must share the last dimension"):
        apply_rotary_pos_emb(torch.zeros(1, 1, 2, 4), torch.zeros(1, 1, 2, 4), *RotaryEmbedding(8)(2))
    with pytest.raises(ValueError, match=r"num_heads must be a positive int, got 0"):
        alibi_slopes(0)
    with pytest.raises(TypeError, match=r"embed_dim must be an int"):
        sinusoidal_encoding(4, 2.5)
    with pytest.raises(TypeError, match=r"relative_position must be an integer tensor"):
        relative_position_bucket(torch.zeros(3))
    with pytest.raises(ValueError, match=r"max_distance"):
        T5RelativeBias(2, num_buckets=8, max_distance=2)


# ----------------------------------------------------------------------------------------------
# Transformer-XL's relative score (Dai et al., 2019, section 3.3)
# ----------------------------------------------------------------------------------------------


def txl_inputs(batch: int = 2, heads: int = 2, length: int = 3, keys: int = 5, dim: int = 4, rel_dim: int = 6,
               seed: int = 0) -> tuple[torch.Tensor, ...]:
    return (randn(batch, heads, length, dim, seed=seed), randn(batch, heads, keys, dim, seed=seed + 1),
            randn(heads, rel_dim, dim, seed=seed + 2), randn(heads, dim, seed=seed + 3),
            randn(heads, dim, seed=seed + 4))


@pytest.mark.parametrize("query_offset", [None, 0, 4])
def test_transformer_xl_terms_equal_a_brute_force_loop(query_offset: int | None) -> None:
    query, key, w_r, u, v = txl_inputs()
    terms = transformer_xl_scores(query, key, w_r, u, v, query_offset=query_offset)
    first = 5 - 3 if query_offset is None else query_offset  # queries are the last L positions by default
    expected = torch.zeros(4, 2, 2, 3, 5)
    for b in range(2):
        for h in range(2):
            for i in range(3):
                for j in range(5):
                    offset = first + i - j
                    r = torch.tensor([math.sin(offset / 10000.0 ** (f / 6)) if f % 2 == 0
                                      else math.cos(offset / 10000.0 ** ((f - 1) / 6)) for f in range(6)])
                    wr = r @ w_r[h]  # (E,): W_R R_{i-j} of head h
                    expected[0, b, h, i, j] = query[b, h, i] @ key[b, h, j]
                    expected[1, b, h, i, j] = query[b, h, i] @ wr
                    expected[2, b, h, i, j] = u[h] @ key[b, h, j]
                    expected[3, b, h, i, j] = v[h] @ wr
    for term, want in zip(terms, expected):
        assert term.shape == (2, 2, 3, 5)
        torch.testing.assert_close(term, want, atol=1e-5, rtol=1e-5)


def test_transformer_xl_position_terms_depend_on_the_offset_only() -> None:
    query, key, w_r, u, v = txl_inputs(length=6, keys=9)
    _, b, c, d = transformer_xl_scores(query, key, w_r, u, v)
    for offset in range(-5, 9):  # (d): one value along every diagonal p_i - j = const, whatever the input
        diagonal = torch.diagonal(d, offset=offset, dim1=-2, dim2=-1)
        assert (diagonal - diagonal[..., :1]).abs().max() < 1e-5
    assert (c - c[..., :1, :]).abs().max() == 0  # (c) is the same for every query: u replaces q_i
    spread = max((torch.diagonal(b, offset=o, dim1=-2, dim2=-1).std(-1)).max().item() for o in range(-4, 8))
    assert spread > 0.1  # (b) changes along a diagonal with the query's content ...
    shared = query[:, :, :1].expand_as(query)  # ... and not when every query is the same vector
    _, b_shared, _, d_shared = transformer_xl_scores(shared, key, w_r, u, v)
    for offset in range(-5, 9):
        diagonal = torch.diagonal(b_shared + d_shared, offset=offset, dim1=-2, dim2=-1)
        assert (diagonal - diagonal[..., :1]).abs().max() < 1e-5


def test_transformer_xl_score_is_unchanged_when_every_position_shifts() -> None:
    """Shifting the queries and the keys by the same amount (a new segment after a cache) changes nothing."""
    query, key, w_r, u, v = txl_inputs(length=4, keys=4)
    near = transformer_xl_scores(query, key, w_r, u, v, query_offset=0)
    shifted_keys = torch.cat([randn(2, 2, 7, 4, seed=9), key], dim=2)  # 7 cached keys before the same 4
    far = transformer_xl_scores(query, shifted_keys, w_r, u, v, query_offset=7)
    for a, b in zip(near, far):
        torch.testing.assert_close(b[..., 7:], a, atol=1e-5, rtol=1e-5)


def test_transformer_xl_rejects_mismatched_shapes() -> None:
    query, key, w_r, u, v = txl_inputs()
    with pytest.raises(ValueError, match=r"query and key must be \(B, H, L, E\)"):
        transformer_xl_scores(query, key[..., :3], w_r, u, v)
    with pytest.raises(ValueError, match=r"w_r must be \(H, D_r, E\) = \(2, D_r, 4\), got \(2, 6, 3\)"):
        transformer_xl_scores(query, key, w_r[..., :3], u, v)
    with pytest.raises(ValueError, match=r"v must be \(H, E\)"):
        transformer_xl_scores(query, key, w_r, u, v[:1])


@pytest.mark.parametrize("device", ["cpu", *(["cuda"] if torch.cuda.is_available() else [])])
def test_transformer_xl_terms_keep_the_inputs_dtype_and_device(device: str) -> None:
    inputs = [x.to(device, torch.float64) for x in txl_inputs()]
    terms = transformer_xl_scores(*inputs)
    reference = transformer_xl_scores(*txl_inputs())  # float32 on the CPU
    for term, ref in zip(terms, reference):
        assert term.dtype == torch.float64 and term.device.type == device
        torch.testing.assert_close(term.cpu().float(), ref, atol=1e-4, rtol=1e-4)
