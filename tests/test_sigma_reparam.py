"""σReparam (chapter 6.2): the reparametrised weight's spectral norm is gamma, checked against torch.linalg."""

import pytest
import torch
from torch import nn
from torch.nn.utils import parametrize

from helpers.sigma_reparam import SigmaReparam, apply_sigma_reparam, reparam_gammas, sigma_reparam


def _spectral_norm(weight: torch.Tensor) -> float:
    return float(torch.linalg.matrix_norm(weight.detach().double(), ord=2))


def test_at_creation_the_layer_is_unchanged_and_its_gamma_is_the_spectral_norm():
    torch.manual_seed(0)
    layer = nn.Linear(24, 16)
    before = layer.weight.detach().clone()
    sigma_reparam(layer)
    gamma = float(layer.parametrizations.weight[0].gamma.detach())
    assert gamma == pytest.approx(_spectral_norm(before), rel=1e-5)
    torch.testing.assert_close(layer.weight, before, rtol=1e-5, atol=1e-6)  # gamma = sigma(W_0): W_hat = W_0
    assert _spectral_norm(layer.weight) == pytest.approx(gamma, rel=1e-5)


def test_spectral_norm_of_the_reparametrised_weight_follows_gamma_as_w_grows():
    torch.manual_seed(1)
    layer = sigma_reparam(nn.Linear(20, 30))
    reparam = layer.parametrizations.weight[0]
    with torch.no_grad():
        layer.parametrizations.weight.original.mul_(50.0).add_(torch.randn(30, 20))  # W moves and grows
        reparam.gamma.fill_(2.5)
    for _ in range(30):  # one power-iteration step per access in training mode
        weight = layer.weight
    assert _spectral_norm(weight) == pytest.approx(2.5, rel=1e-4)
    assert _spectral_norm(layer.parametrizations.weight.original) > 50  # the raw entries are large


def test_eval_mode_does_not_update_the_power_iteration_vector():
    layer = sigma_reparam(nn.Linear(8, 8))
    u = layer.parametrizations.weight[0].u.clone()
    with torch.no_grad():
        layer.parametrizations.weight.original.add_(torch.randn(8, 8))
    layer.eval()
    _ = layer.weight
    assert torch.equal(layer.parametrizations.weight[0].u, u)
    layer.train()
    _ = layer.weight
    assert not torch.equal(layer.parametrizations.weight[0].u, u)


def test_gradients_reach_the_raw_weight_and_gamma():
    layer = sigma_reparam(nn.Linear(6, 4))
    layer(torch.randn(3, 6)).square().sum().backward()
    assert layer.parametrizations.weight.original.grad is not None
    assert layer.parametrizations.weight[0].gamma.grad is not None


def test_apply_reparametrises_every_linear_layer_and_reports_gammas():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Sequential(nn.Linear(8, 8)), nn.LayerNorm(8))
    names = apply_sigma_reparam(model)
    assert names == ["0", "2.0"]
    assert all(parametrize.is_parametrized(model.get_submodule(n), "weight") for n in names)
    gammas = reparam_gammas(model)
    assert set(gammas) == {"0", "2.0"}
    assert gammas["0"] == pytest.approx(_spectral_norm(model[0].weight), rel=1e-5)


def test_bad_input_raises():
    with pytest.raises(ValueError, match="weight"):
        SigmaReparam(torch.randn(3))
    with pytest.raises(ValueError, match="module"):
        sigma_reparam(nn.LayerNorm(4))
    with pytest.raises(TypeError, match="model"):
        apply_sigma_reparam("not a model")
