"""Tests of helpers.experiments.saturation (chapter 3): softmax rows and Jacobians against brute force."""

import math

import pytest
import torch

from helpers.experiments import saturation

# 2. Saturation
# --------------------------------------------------------------------------------------------


def test_saturation_sweep_matches_brute_force_softmax():
    sweep = saturation.saturation_sweep((1, 64), scaled=False, num_keys=8, num_rows=500, seed=3)
    gen = torch.Generator().manual_seed(3)
    for index, d_k in enumerate((1, 64)):
        q = torch.randn(500, 1, d_k, generator=gen)
        k = torch.randn(500, 8, d_k, generator=gen)
        rows = []
        for n in range(500):  # one softmax row at a time
            scores = torch.stack([torch.dot(q[n, 0], k[n, j]) for j in range(8)])
            rows.append(torch.softmax(scores, dim=0))
        p = torch.stack(rows)
        assert sweep.max_weight[index] == pytest.approx(p.max(dim=1).values.mean().item(), rel=1e-4)
        entropy = -(p * torch.log(p.clamp_min(1e-45))).sum(1).mean().item()
        assert sweep.entropy[index] == pytest.approx(entropy, rel=1e-3, abs=1e-5)
        assert sweep.saturated_fraction[index] == pytest.approx((p.max(dim=1).values > 0.99).float().mean().item())


def test_unscaled_rows_saturate_as_d_k_grows_and_scaled_rows_do_not():
    unscaled = saturation.saturation_sweep((1, 16, 256, 1024), scaled=False, num_rows=1000)
    scaled = saturation.saturation_sweep((1, 16, 256, 1024), scaled=True, num_rows=1000)
    assert unscaled.max_weight == sorted(unscaled.max_weight)
    assert unscaled.entropy == sorted(unscaled.entropy, reverse=True)
    assert unscaled.saturated_fraction[-1] > 0.6 and unscaled.entropy[-1] < 0.2
    assert scaled.max_weight[0] == pytest.approx(unscaled.max_weight[0])  # d_k = 1: the scale is 1
    assert scaled.saturated_fraction[1:] == [0.0, 0.0, 0.0]  # d_k = 1 is heavy-tailed: q . k = q_1 k_1
    assert max(scaled.entropy) - min(scaled.entropy) < 0.1


def test_softmax_row_frames_are_nested_partial_dot_products():
    frames = saturation.softmax_row_frames((1, 3, 10), num_keys=4, seed=2)
    gen = torch.Generator().manual_seed(2)
    query = torch.randn(10, generator=gen)
    keys = torch.randn(4, 10, generator=gen)
    for f, d_k in enumerate((1, 3, 10)):
        brute = torch.tensor([sum(query[i] * keys[j, i] for i in range(d_k)) for j in range(4)])
        torch.testing.assert_close(frames["scores"][f], brute)
        torch.testing.assert_close(frames["scaled_weights"][f], torch.softmax(brute / math.sqrt(d_k), 0))
        torch.testing.assert_close(frames["weights"][f], torch.softmax(brute, 0))
    with pytest.raises(ValueError, match="increasing"):
        saturation.softmax_row_frames((4, 2))


# --------------------------------------------------------------------------------------------
# 3. Jacobian and gradients
# --------------------------------------------------------------------------------------------


def test_jacobian_norms_at_zero_logits_are_the_uniform_closed_form():
    out = saturation.jacobian_norm_sweep([0.0], num_keys=16, num_rows=10)
    # J = I/S - 11^T/S^2: Frobenius sqrt(S - 1)/S, eigenvalues 1/S (S - 1 times) and 0
    assert out["frobenius"][0] == pytest.approx(math.sqrt(15) / 16, rel=1e-5)
    assert out["spectral"][0] == pytest.approx(1 / 16, rel=1e-5)
    assert out["max_weight"][0] == pytest.approx(1 / 16)


def test_jacobian_norm_agrees_with_autograd_and_vanishes_for_large_logits():
    out = saturation.jacobian_norm_sweep([1.0, 64.0], num_keys=6, num_rows=3, seed=5)
    base = torch.randn(3, 6, generator=torch.Generator().manual_seed(5))
    norms = [torch.autograd.functional.jacobian(lambda z: torch.softmax(z, 0), row).norm() for row in base]
    assert out["frobenius"][0] == pytest.approx(torch.stack(norms).mean().item(), rel=1e-4)
    assert out["frobenius"][1] < 0.05 * out["frobenius"][0]




def test_jacobian_norm_sweep_reports_the_median_row_too():
    out = saturation.jacobian_norm_sweep([0.0, 32.0], num_keys=16, num_rows=500)
    assert out["median_frobenius"][0] == pytest.approx(math.sqrt(15) / 16, rel=1e-5)
    assert out["median_frobenius"][1] < 0.1 * out["frobenius"][1]  # the mean is held up by near-tie rows
