"""Tests of helpers.diagnostics against closed forms, autograd and brute-force loops."""

import math

import pytest
import torch
from torch import nn

from helpers.diagnostics import (
    GradientNormTracker,
    attention_entropy,
    attention_rollout,
    saturation_stats,
    softmax_jacobian,
    softmax_jacobian_norm,
)


def test_entropy_of_uniform_rows_is_log_s_and_of_one_hot_rows_is_zero():
    uniform = torch.full((2, 3, 4, 7), 1 / 7)
    torch.testing.assert_close(attention_entropy(uniform), torch.full((2, 3), math.log(7)))
    torch.testing.assert_close(attention_entropy(uniform, normalized=True), torch.ones(2, 3))
    one_hot = torch.nn.functional.one_hot(torch.tensor([[0, 3, 6, 2]]), 7).float()[None]  # (1, 1, 4, 7)
    torch.testing.assert_close(attention_entropy(one_hot), torch.zeros(1, 1))


def test_entropy_matches_explicit_sum_per_query_row():
    torch.manual_seed(0)
    weights = torch.softmax(torch.randn(2, 3, 5, 6), -1)
    expected = torch.zeros(2, 3, 5)
    for b in range(2):
        for h in range(3):
            for i in range(5):
                expected[b, h, i] = -sum(p * math.log(p) for p in weights[b, h, i].tolist())
    torch.testing.assert_close(attention_entropy(weights, average_queries=False), expected)
    torch.testing.assert_close(attention_entropy(weights), expected.mean(-1))
    torch.testing.assert_close(attention_entropy(weights, normalized=True), expected.mean(-1) / math.log(6))


def test_entropy_treats_zero_weights_as_contributing_nothing():
    weights = torch.tensor([[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])  # second row fully masked
    out = attention_entropy(weights, average_queries=False)
    torch.testing.assert_close(out, torch.tensor([math.log(2), 0.0]))


def test_entropy_rejects_scores_that_are_not_probabilities():
    with pytest.raises(ValueError, match="non-negative"):
        attention_entropy(torch.randn(2, 4, 4))
    with pytest.raises(ValueError, match="sum to 1"):
        attention_entropy(torch.full((2, 4, 4), 0.5))
    with pytest.raises(TypeError, match="weights"):
        attention_entropy([[0.5, 0.5]])


def test_softmax_jacobian_equals_autograd_jacobian():
    torch.manual_seed(1)
    logits = torch.randn(3, 5, dtype=torch.float64)
    jac = softmax_jacobian(logits)
    assert jac.shape == (3, 5, 5)
    for row in range(3):
        expected = torch.autograd.functional.jacobian(lambda z: torch.softmax(z, -1), logits[row])
        torch.testing.assert_close(jac[row], expected.float(), atol=1e-6, rtol=1e-5)


def test_softmax_jacobian_norm_matches_matrix_norms_and_vanishes_when_saturated():
    torch.manual_seed(2)
    logits = torch.randn(4, 6)
    jac = softmax_jacobian(logits)
    torch.testing.assert_close(softmax_jacobian_norm(logits), jac.flatten(1).norm(dim=1))
    torch.testing.assert_close(
        softmax_jacobian_norm(logits, ord="spectral"), torch.linalg.svdvals(jac)[:, 0], atol=1e-6, rtol=1e-5
    )
    # uniform p over S: J = I/S - 11^T/S^2 has Frobenius norm sqrt(S-1)/S
    torch.testing.assert_close(softmax_jacobian_norm(torch.zeros(6)), torch.tensor(math.sqrt(5) / 6))
    saturated = torch.tensor([100.0, 0.0, 0.0, 0.0])
    assert softmax_jacobian_norm(saturated).item() < 1e-30


def test_saturation_stats_of_growing_scale():
    torch.manual_seed(3)
    scores = torch.randn(64, 16)
    mild, harsh = saturation_stats(scores), saturation_stats(scores * 100)
    p = torch.softmax(scores, -1)
    assert mild.max_weight == pytest.approx(p.max(-1).values.mean().item(), rel=1e-5)
    assert mild.saturated_fraction == 0.0
    assert mild.entropy == pytest.approx(attention_entropy(p[None]).item(), rel=1e-5)
    assert mild.normalized_entropy == pytest.approx(mild.entropy / math.log(16), rel=1e-5)
    assert mild.jacobian_norm == pytest.approx(softmax_jacobian_norm(scores).mean().item(), rel=1e-5)
    q = torch.softmax(scores * 100, -1)
    assert harsh.saturated_fraction == pytest.approx((q.max(-1).values > 0.99).float().mean().item())
    assert harsh.saturated_fraction > 0.9 and harsh.entropy < 0.05 * mild.entropy


def test_saturation_stats_accepts_masked_scores_and_rejects_fully_masked_rows():
    scores = torch.tensor([[0.0, 0.0, -math.inf, -math.inf]])
    stats = saturation_stats(scores)
    assert stats.max_weight == pytest.approx(0.5) and stats.entropy == pytest.approx(math.log(2))
    with pytest.raises(ValueError, match="finite"):
        saturation_stats(torch.full((2, 3), -math.inf))
    with pytest.raises(ValueError, match="threshold"):
        saturation_stats(scores, threshold=1.5)


def _toy_model() -> nn.Module:
    torch.manual_seed(4)
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))


def test_gradient_norm_tracker_equals_norms_computed_from_grad_and_removes_hooks():
    model = _toy_model()
    x = torch.randn(10, 5)
    with GradientNormTracker(model) as tracker:
        for _ in range(2):
            model.zero_grad()
            model(x).pow(2).sum().backward()
            x = x * 2
        assert tracker.active
    expected = {name: p.grad.norm().item() for name, p in model.named_parameters()}
    assert set(tracker.history) == set(expected)
    for name, norm in expected.items():
        assert len(tracker.history[name]) == 2
        assert tracker.latest()[name] == pytest.approx(norm, rel=1e-6)
    layer0 = math.sqrt(expected["0.weight"] ** 2 + expected["0.bias"] ** 2)
    assert tracker.layer_norms()["0"] == pytest.approx(layer0, rel=1e-6)
    # hooks are gone: another backward records nothing
    assert not tracker.active
    model(x).sum().backward()
    assert all(len(norms) == 2 for norms in tracker.history.values())


def test_gradient_norm_tracker_sees_accumulated_gradient_of_reused_parameters():
    layer = nn.Linear(3, 3)
    x = torch.randn(4, 3)
    with GradientNormTracker(layer) as tracker:
        layer(layer(x)).sum().backward()  # the weight is used twice in one graph
    assert tracker.latest()["weight"] == pytest.approx(layer.weight.grad.norm().item(), rel=1e-6)
    assert len(tracker.history["weight"]) == 1


def test_gradient_norm_tracker_rejects_non_modules():
    with pytest.raises(TypeError, match="model"):
        GradientNormTracker(torch.randn(3))


def test_attention_rollout_equals_brute_force_product():
    torch.manual_seed(5)
    layers = [torch.softmax(torch.randn(2, 3, 4, 4), -1) for _ in range(3)]
    out = attention_rollout(layers)
    assert out.shape == (2, 4, 4)
    for b in range(2):
        mats = []
        for layer in layers:
            a = [[sum(layer[b, h, i, j].item() for h in range(3)) / 3 for j in range(4)] for i in range(4)]
            a = [[0.5 * a[i][j] + 0.5 * (i == j) for j in range(4)] for i in range(4)]
            mats.append([[v / sum(row) for v in row] for row in a])
        result = mats[0]
        for m in mats[1:]:  # later layers multiply on the left
            result = [[sum(m[i][k] * result[k][j] for k in range(4)) for j in range(4)] for i in range(4)]
        torch.testing.assert_close(out[b], torch.tensor(result), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(out.sum(-1), torch.ones(2, 4))
    torch.testing.assert_close(attention_rollout(torch.stack(layers)), out)


def test_attention_rollout_without_residual_is_plain_product_of_head_means():
    torch.manual_seed(6)
    layers = [torch.softmax(torch.randn(1, 2, 5, 5), -1) for _ in range(2)]
    expected = layers[1].mean(1) @ layers[0].mean(1)
    torch.testing.assert_close(attention_rollout(layers, add_residual=False), expected)


def test_attention_rollout_rejects_mismatched_layers():
    with pytest.raises(ValueError, match="layer 1"):
        attention_rollout([torch.rand(1, 2, 4, 4), torch.rand(1, 2, 5, 5)])
    with pytest.raises(ValueError, match="at least one"):
        attention_rollout([])
    with pytest.raises(ValueError, match="head_fusion"):
        attention_rollout([torch.rand(1, 2, 4, 4)], head_fusion="median")
