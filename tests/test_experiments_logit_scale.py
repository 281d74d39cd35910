"""Tests of helpers.experiments.logit_scale (chapter 3): the factor on q . k of a real layer."""

import math

import pytest
import torch
from torch import nn

from helpers.attention import scaled_dot_product_attention
from helpers.experiments import logit_scale
from helpers.multihead import MultiHeadAttention


def test_logit_scale_gives_the_scores_q_dot_k_times_scale():
    torch.manual_seed(0)
    layer = MultiHeadAttention(32, 4, bias=False)
    reference = MultiHeadAttention(32, 4, bias=False)
    reference.load_state_dict(layer.state_dict())
    logit_scale.with_logit_scale(layer, 0.7)
    x = torch.randn(2, 5, 32)
    out, _ = layer(x)
    q = reference.q_proj(x).view(2, 5, 4, 8).transpose(1, 2)  # (B, H, L, E)
    k = reference.k_proj(x).view(2, 5, 4, 8).transpose(1, 2)
    v = reference.v_proj(x).view(2, 5, 4, 8).transpose(1, 2)
    expected = reference.o_proj(scaled_dot_product_attention(q, k, v, scale=0.7).transpose(1, 2).reshape(2, 5, 32))
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    assert logit_scale.logit_scale_of(layer) == pytest.approx(0.7)
    assert logit_scale.logit_scale_of(reference) == pytest.approx(1 / math.sqrt(8))
    with pytest.raises(ValueError, match="already has a LogitScale"):
        logit_scale.with_logit_scale(layer, 1.0)


def test_learned_logit_scale_receives_the_gradient_of_its_log():
    torch.manual_seed(0)
    layer = logit_scale.with_logit_scale(MultiHeadAttention(16, 1, bias=False), 0.5, learned=True)
    x = torch.randn(2, 6, 16)
    out, _ = layer(x)
    out.square().sum().backward()
    log_scale = layer.q_proj[1].log_scale
    assert isinstance(log_scale, nn.Parameter) and log_scale.grad is not None
    # d loss / d log(s) = s * d loss / d s, checked by a finite difference in s
    def loss_at(scale):
        probe = logit_scale.with_logit_scale(MultiHeadAttention(16, 1, bias=False), scale)
        probe.load_state_dict({k: v for k, v in layer.state_dict().items() if "log_scale" not in k}, strict=False)
        return probe(x)[0].square().sum().item()
    eps = 1e-3
    numeric = 0.5 * (loss_at(0.5 + eps) - loss_at(0.5 - eps)) / (2 * eps)
    assert log_scale.grad.item() == pytest.approx(numeric, rel=1e-2)


