"""Tests of helpers.scores: every score function against a brute-force loop or torch, and the
modules that hold the learned ones (chapter 2)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from helpers.scores import (
    AdditiveAttention,
    GeneralAttention,
    additive_scores,
    cosine_scores,
    dot_scores,
    general_scores,
    neg_euclidean_scores,
    scaled_dot_scores,
)


def randn(*shape: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


# ------------------------------------------------------------------------------------------------
# Score functions against brute-force loops
# ------------------------------------------------------------------------------------------------


def _loop(L: int, S: int, pair) -> torch.Tensor:
    return torch.tensor([[float(pair(i, j)) for j in range(S)] for i in range(L)])


def test_dot_and_scaled_dot_scores_match_loop() -> None:
    q, k = randn(4, 5, seed=1), randn(6, 5, seed=2)
    expected = _loop(4, 6, lambda i, j: sum(q[i, e] * k[j, e] for e in range(5)))
    torch.testing.assert_close(dot_scores(q, k), expected)
    torch.testing.assert_close(scaled_dot_scores(q, k), expected / math.sqrt(5))
    torch.testing.assert_close(scaled_dot_scores(q, k, scale=0.1), expected * 0.1)
    torch.testing.assert_close(dot_scores(q.expand(3, 2, 4, 5), k)[1, 0], expected)  # batch dims broadcast


def test_cosine_scores_match_torch_cosine_similarity_and_equal_dot_for_unit_vectors() -> None:
    q, k = randn(2, 4, 5, seed=1), randn(2, 6, 5, seed=2)
    expected = F.cosine_similarity(q.unsqueeze(-2), k.unsqueeze(-3), dim=-1)  # (2, 4, 6)
    torch.testing.assert_close(cosine_scores(q, k), expected)
    q_unit, k_unit = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
    torch.testing.assert_close(cosine_scores(q_unit, k_unit), dot_scores(q_unit, k_unit))
    assert (cosine_scores(q * 100, k).abs() <= 1 + 1e-6).all()
    assert torch.equal(cosine_scores(torch.zeros(1, 5), k[0]), torch.zeros(1, 6))  # a zero vector scores 0


def test_neg_euclidean_scores_match_loop_and_order_keys_by_distance() -> None:
    q, k = randn(4, 3, seed=1), randn(9, 3, seed=2)
    expected = _loop(4, 9, lambda i, j: -((q[i] - k[j]) ** 2).sum())
    scores = neg_euclidean_scores(q, k)
    torch.testing.assert_close(scores, expected)
    distances = torch.cdist(q, k)
    for i in range(4):
        assert torch.equal(scores[i].argsort(descending=True), distances[i].argsort())
    assert (scores <= 0).all()
    # A key's distance to itself is 0 up to rounding in |k|^2 - 2 k.k + |k|^2 (the BLAS decides how much).
    self_scores = neg_euclidean_scores(k, k).diagonal()
    tolerance = 1e-5 * k.pow(2).sum(-1).max().item()
    torch.testing.assert_close(self_scores, torch.zeros_like(self_scores), rtol=0, atol=tolerance)


def test_general_scores_match_loop() -> None:
    q, k, w = randn(3, 4, seed=1), randn(5, 6, seed=2), randn(4, 6, seed=3)
    expected = _loop(3, 5, lambda i, j: sum(q[i, a] * w[a, b] * k[j, b] for a in range(4) for b in range(6)))
    torch.testing.assert_close(general_scores(q, k, w), expected)
    # W = I is the dot product
    torch.testing.assert_close(general_scores(q, q, torch.eye(4)), dot_scores(q, q))


def test_additive_scores_match_loop() -> None:
    q, k = randn(2, 3, 4, seed=1), randn(2, 5, 6, seed=2)
    w_q, w_k, v = randn(7, 4, seed=3), randn(7, 6, seed=4), randn(7, seed=5)
    scores = additive_scores(q, k, w_q, w_k, v)
    assert scores.shape == (2, 3, 5)
    for b in range(2):
        expected = _loop(3, 5, lambda i, j, b=b: v @ torch.tanh(w_q @ q[b, i] + w_k @ k[b, j]))
        torch.testing.assert_close(scores[b], expected)


def test_additive_attention_module_matches_loop_and_masks() -> None:
    torch.manual_seed(0)
    module = AdditiveAttention(query_dim=4, key_dim=6, hidden_dim=5)
    q, k, val = randn(2, 3, 4, seed=1), randn(2, 5, 6, seed=2), randn(2, 5, 2, seed=3)
    mask = torch.tensor([True, True, True, False, False])  # key padding, broadcast over (B, L)
    out, weights = module(q, k, val, attn_mask=mask.expand(3, 5))
    for b in range(2):
        for i in range(3):
            e = torch.stack(
                [
                    module.score_vector
                    @ torch.tanh(module.query_proj.weight @ q[b, i] + module.key_proj.weight @ k[b, j])
                    for j in range(3)
                ]
            )
            alpha = torch.softmax(e, 0)
            torch.testing.assert_close(weights[b, i, :3], alpha)
            torch.testing.assert_close(out[b, i], alpha @ val[b, :3])
    assert (weights[..., 3:] == 0).all()
    out.sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in module.parameters())


def test_general_attention_module_matches_softmax_of_bilinear_scores() -> None:
    torch.manual_seed(0)
    module = GeneralAttention(query_dim=4, key_dim=6)
    q, k, val = randn(3, 4, seed=1), randn(5, 6, seed=2), randn(5, 2, seed=3)
    out, weights = module(q, k, val)
    expected = torch.softmax(q @ module.weight @ k.T, dim=-1)
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(out, expected @ val)
    empty = torch.zeros(3, 5, dtype=torch.bool)
    out_empty, _ = module(q, k, val, attn_mask=empty)
    assert torch.equal(out_empty, torch.zeros(3, 2))
    with pytest.raises(TypeError, match="attn_mask"):
        module(q, k, val, attn_mask=empty.float())
