"""Tests of helpers.experiments.qk_gradient (chapter 3): gradient norms against a manual backward pass."""

import math

import pytest
import torch
from torch import nn

from helpers.experiments import qk_gradient
from helpers.multihead import MultiHeadAttention


def test_gradient_sweep_matches_a_manual_backward_pass():
    sweep = qk_gradient.qk_gradient_sweep((8,), scaled=False, seq_len=5, batch_size=2, num_seeds=1, seed=7)
    torch.manual_seed(7)
    layer = MultiHeadAttention(8, 1, bias=False)
    gen = torch.Generator().manual_seed(10_007)
    x = nn.functional.layer_norm(torch.randn(2, 5, 8, generator=gen), (8,))
    target = torch.randn(2, 5, 8, generator=gen)
    q, k, v = layer.q_proj(x), layer.k_proj(x), layer.v_proj(x)
    q.retain_grad()
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)  # unscaled
    loss = nn.functional.mse_loss(layer.o_proj(weights @ v), target)
    loss.backward()
    assert sweep.q_proj[0] == pytest.approx(layer.q_proj.weight.grad.norm().item(), rel=1e-4)
    assert sweep.k_proj[0] == pytest.approx(layer.k_proj.weight.grad.norm().item(), rel=1e-4)
    assert sweep.v_proj[0] == pytest.approx(layer.v_proj.weight.grad.norm().item(), rel=1e-4)
    assert sweep.max_weight[0] == pytest.approx(weights.amax(-1).mean().item(), rel=1e-5)
    # the row's gradient as the scores use the query: q' = sqrt(d_k) q, scores q' . k / sqrt(d_k)
    unsaturated = weights.detach().amax(-1) <= 0.99
    expected = (q.grad.norm(dim=-1) / math.sqrt(8))[unsaturated].mean().item()
    assert sweep.unsaturated_row_gradient[0] == pytest.approx(expected, rel=1e-4)


def test_unscaled_layer_saturates_with_d_k_while_scaled_stays_soft():
    scaled = qk_gradient.qk_gradient_sweep((16, 1024), scaled=True, num_seeds=1)
    unscaled = qk_gradient.qk_gradient_sweep((16, 1024), scaled=False, num_seeds=1)
    assert max(scaled.saturated_fraction) == 0.0
    assert unscaled.saturated_fraction[1] > 0.2
    assert unscaled.median_jacobian_norm[1] < 0.5 * scaled.median_jacobian_norm[1]
    # PyTorch's default init gives q, k entries of variance 1/3: logit std sqrt(d_k)/3 without the scale
    assert unscaled.logit_std[1] == pytest.approx(math.sqrt(1024) / 3, rel=0.2)


# --------------------------------------------------------------------------------------------


def test_gradient_of_w_q_comes_from_the_rows_that_are_not_saturated():
    from helpers.experiments import qk_gradient

    unscaled = qk_gradient.qk_gradient_sweep((1024,), scaled=False, num_seeds=2)
    scaled = qk_gradient.qk_gradient_sweep((1024,), scaled=True, num_seeds=2)
    assert unscaled.saturated_fraction[0] > 0.2
    assert unscaled.unsaturated_gradient_share[0] > 0.9  # the saturated rows give almost nothing
    assert scaled.unsaturated_gradient_share[0] == pytest.approx(1.0)
