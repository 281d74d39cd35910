"""Tests of helpers.experiments.scaling (chapter 3): numbers against closed forms and brute force."""

import math

import pytest
import torch
from torch import nn

from helpers.attention import scaled_dot_product_attention
from helpers.experiments import scaling as sc
from helpers.multihead import MultiHeadAttention
from helpers.train import TrainingHistory

# --------------------------------------------------------------------------------------------
# 1. Var(q . k)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("distribution", sorted(sc.DISTRIBUTIONS))
def test_measured_dot_variance_matches_closed_form(distribution):
    sweep = sc.dot_product_variance((8, 64), distribution=distribution, num_samples=40_000, seed=1)
    for measured, theory in zip(sweep.measured, sweep.theory):
        assert measured == pytest.approx(theory, rel=0.08)


@pytest.mark.parametrize("distribution", ["gaussian", "uniform", "rademacher", "laplace"])
def test_unit_variance_entries_have_unit_mean_square_and_zero_mean(distribution):
    x = sc.sample_entries(distribution, 200_000, 4, generator=torch.Generator().manual_seed(0))
    assert x.mean().item() == pytest.approx(0.0, abs=0.01)
    assert x.var().item() == pytest.approx(1.0, rel=0.02)


def test_scaled_variance_is_one_at_every_size_for_gaussian_entries():
    sweep = sc.dot_product_variance((1, 16, 256, 1024), num_samples=20_000)
    assert sweep.d_k == [1, 16, 256, 1024]
    for scaled, measured, d_k in zip(sweep.scaled, sweep.measured, sweep.d_k):
        assert scaled == pytest.approx(measured / d_k, rel=1e-9)
        assert scaled == pytest.approx(1.0, rel=0.05)


def test_rademacher_dot_product_of_size_one_has_variance_one():
    sweep = sc.dot_product_variance((1,), distribution="rademacher", num_samples=10_000)
    # q . k is +-1: its variance is 1 minus the squared sample mean, times n/(n-1)
    assert sweep.measured[0] == pytest.approx(1.0, abs=0.02)


def test_layernorm_of_two_features_gives_dot_products_of_plus_minus_two():
    # LayerNorm of a 2-vector is (+1, -1) or (-1, +1): q . k = +-2, variance d^2 / (d - 1) = 4
    sweep = sc.dot_product_variance((2,), distribution="layernorm", num_samples=10_000)
    assert sc.theoretical_dot_variance("layernorm", 2) == 4.0
    assert sweep.measured[0] == pytest.approx(4.0, abs=0.1)


def test_layernorm_skips_size_one_and_theory_formulas():
    sweep = sc.dot_product_variance((1, 2, 4), distribution="layernorm", num_samples=100)
    assert sweep.d_k == [2, 4]
    assert sc.theoretical_dot_variance("shifted", 10) == 30.0
    assert sc.theoretical_dot_variance("correlated", 100) == pytest.approx(100 * 0.99 + 0.01 * 100**2)
    assert sc.theoretical_dot_variance("projected", 90) == pytest.approx(10.0)


def test_projected_entries_follow_pytorch_linear_init():
    # nn.Linear(64, d)'s weight is U(-1/8, 1/8): variance 1/192; 64 LayerNorm-ed inputs give 1/3
    x = sc.sample_entries("projected", 20_000, 256, generator=torch.Generator().manual_seed(0))
    assert x.var().item() == pytest.approx(1 / 3, rel=0.05)


def test_unknown_distribution_is_rejected_by_name():
    with pytest.raises(ValueError, match="distribution must be one of"):
        sc.dot_product_variance((4,), distribution="cauchy")


# --------------------------------------------------------------------------------------------
# 2. Saturation
# --------------------------------------------------------------------------------------------


def test_saturation_sweep_matches_brute_force_softmax():
    sweep = sc.saturation_sweep((1, 64), scaled=False, num_keys=8, num_rows=500, seed=3)
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
    unscaled = sc.saturation_sweep((1, 16, 256, 1024), scaled=False, num_rows=1000)
    scaled = sc.saturation_sweep((1, 16, 256, 1024), scaled=True, num_rows=1000)
    assert unscaled.max_weight == sorted(unscaled.max_weight)
    assert unscaled.entropy == sorted(unscaled.entropy, reverse=True)
    assert unscaled.saturated_fraction[-1] > 0.6 and unscaled.entropy[-1] < 0.2
    assert scaled.max_weight[0] == pytest.approx(unscaled.max_weight[0])  # d_k = 1: the scale is 1
    assert scaled.saturated_fraction[1:] == [0.0, 0.0, 0.0]  # d_k = 1 is heavy-tailed: q . k = q_1 k_1
    assert max(scaled.entropy) - min(scaled.entropy) < 0.1


def test_softmax_row_frames_are_nested_partial_dot_products():
    frames = sc.softmax_row_frames((1, 3, 10), num_keys=4, seed=2)
    gen = torch.Generator().manual_seed(2)
    query = torch.randn(10, generator=gen)
    keys = torch.randn(4, 10, generator=gen)
    for f, d_k in enumerate((1, 3, 10)):
        brute = torch.tensor([sum(query[i] * keys[j, i] for i in range(d_k)) for j in range(4)])
        torch.testing.assert_close(frames["scores"][f], brute)
        torch.testing.assert_close(frames["scaled_weights"][f], torch.softmax(brute / math.sqrt(d_k), 0))
        torch.testing.assert_close(frames["weights"][f], torch.softmax(brute, 0))
    with pytest.raises(ValueError, match="increasing"):
        sc.softmax_row_frames((4, 2))


# --------------------------------------------------------------------------------------------
# 3. Jacobian and gradients
# --------------------------------------------------------------------------------------------


def test_jacobian_norms_at_zero_logits_are_the_uniform_closed_form():
    out = sc.jacobian_norm_sweep([0.0], num_keys=16, num_rows=10)
    # J = I/S - 11^T/S^2: Frobenius sqrt(S - 1)/S, eigenvalues 1/S (S - 1 times) and 0
    assert out["frobenius"][0] == pytest.approx(math.sqrt(15) / 16, rel=1e-5)
    assert out["spectral"][0] == pytest.approx(1 / 16, rel=1e-5)
    assert out["max_weight"][0] == pytest.approx(1 / 16)


def test_jacobian_norm_agrees_with_autograd_and_vanishes_for_large_logits():
    out = sc.jacobian_norm_sweep([1.0, 64.0], num_keys=6, num_rows=3, seed=5)
    base = torch.randn(3, 6, generator=torch.Generator().manual_seed(5))
    norms = [torch.autograd.functional.jacobian(lambda z: torch.softmax(z, 0), row).norm() for row in base]
    assert out["frobenius"][0] == pytest.approx(torch.stack(norms).mean().item(), rel=1e-4)
    assert out["frobenius"][1] < 0.05 * out["frobenius"][0]


def test_logit_scale_gives_the_scores_q_dot_k_times_scale():
    torch.manual_seed(0)
    layer = MultiHeadAttention(32, 4, bias=False)
    reference = MultiHeadAttention(32, 4, bias=False)
    reference.load_state_dict(layer.state_dict())
    sc.with_logit_scale(layer, 0.7)
    x = torch.randn(2, 5, 32)
    out, _ = layer(x)
    q = reference.q_proj(x).view(2, 5, 4, 8).transpose(1, 2)  # (B, H, L, E)
    k = reference.k_proj(x).view(2, 5, 4, 8).transpose(1, 2)
    v = reference.v_proj(x).view(2, 5, 4, 8).transpose(1, 2)
    expected = reference.o_proj(scaled_dot_product_attention(q, k, v, scale=0.7).transpose(1, 2).reshape(2, 5, 32))
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    assert sc.logit_scale_of(layer) == pytest.approx(0.7)
    assert sc.logit_scale_of(reference) == pytest.approx(1 / math.sqrt(8))
    with pytest.raises(ValueError, match="already has a LogitScale"):
        sc.with_logit_scale(layer, 1.0)


def test_learned_logit_scale_receives_the_gradient_of_its_log():
    torch.manual_seed(0)
    layer = sc.with_logit_scale(MultiHeadAttention(16, 1, bias=False), 0.5, learned=True)
    x = torch.randn(2, 6, 16)
    out, _ = layer(x)
    out.square().sum().backward()
    log_scale = layer.q_proj[1].log_scale
    assert isinstance(log_scale, nn.Parameter) and log_scale.grad is not None
    # d loss / d log(s) = s * d loss / d s, checked by a finite difference in s
    def loss_at(scale):
        probe = sc.with_logit_scale(MultiHeadAttention(16, 1, bias=False), scale)
        probe.load_state_dict({k: v for k, v in layer.state_dict().items() if "log_scale" not in k}, strict=False)
        return probe(x)[0].square().sum().item()
    eps = 1e-3
    numeric = 0.5 * (loss_at(0.5 + eps) - loss_at(0.5 - eps)) / (2 * eps)
    assert log_scale.grad.item() == pytest.approx(numeric, rel=1e-2)


def test_gradient_sweep_matches_a_manual_backward_pass():
    sweep = sc.qk_gradient_sweep((8,), scaled=False, seq_len=5, batch_size=2, num_seeds=1, seed=7)
    torch.manual_seed(7)
    layer = MultiHeadAttention(8, 1, bias=False)
    gen = torch.Generator().manual_seed(10_007)
    x = nn.functional.layer_norm(torch.randn(2, 5, 8, generator=gen), (8,))
    target = torch.randn(2, 5, 8, generator=gen)
    q, k, v = layer.q_proj(x), layer.k_proj(x), layer.v_proj(x)
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)  # unscaled
    loss = nn.functional.mse_loss(layer.o_proj(weights @ v), target)
    loss.backward()
    assert sweep.q_proj[0] == pytest.approx(layer.q_proj.weight.grad.norm().item(), rel=1e-4)
    assert sweep.k_proj[0] == pytest.approx(layer.k_proj.weight.grad.norm().item(), rel=1e-4)
    assert sweep.v_proj[0] == pytest.approx(layer.v_proj.weight.grad.norm().item(), rel=1e-4)
    assert sweep.max_weight[0] == pytest.approx(weights.amax(-1).mean().item(), rel=1e-5)


def test_unscaled_layer_saturates_with_d_k_while_scaled_stays_soft():
    scaled = sc.qk_gradient_sweep((16, 1024), scaled=True, num_seeds=1)
    unscaled = sc.qk_gradient_sweep((16, 1024), scaled=False, num_seeds=1)
    assert max(scaled.saturated_fraction) == 0.0
    assert unscaled.saturated_fraction[1] > 0.2
    assert unscaled.median_jacobian_norm[1] < 0.5 * scaled.median_jacobian_norm[1]
    # PyTorch's default init gives q, k entries of variance 1/3: logit std sqrt(d_k)/3 without the scale
    assert unscaled.logit_std[1] == pytest.approx(math.sqrt(1024) / 3, rel=0.2)


# --------------------------------------------------------------------------------------------
# 4-6. Training
# --------------------------------------------------------------------------------------------


def test_recall_batches_ask_for_the_value_next_to_the_query_key():
    config = sc.RecallConfig(num_pairs=4, num_keys=6, num_values=5, batch_size=32, seed=0)
    tokens, target = config.make_batch(3)
    assert tokens.shape == (32, 9) and target.shape == (32,)
    for row, value in zip(tokens.tolist(), target.tolist()):
        keys, values, query = row[0:8:2], row[1:8:2], row[8]
        assert values[keys.index(query)] - 6 == value
    assert 0 <= target.min() and target.max() < 5


def test_recall_model_with_hand_set_weights_solves_the_task():
    # keys embedded as one-hot, W_q = W_k = 10 I: the query's own key gets all the weight
    config = sc.RecallConfig(num_pairs=4, num_keys=8, num_values=8, batch_size=64)
    model = sc.RecallAttention(8, 8, 8, 1, scale=1.0)
    with torch.no_grad():
        model.key_embed.weight.copy_(torch.eye(8))
        model.value_embed.weight.copy_(torch.eye(8))
        model.attention.q_proj[0].weight.copy_(10 * torch.eye(8))
        model.attention.k_proj.weight.copy_(10 * torch.eye(8))
        model.attention.v_proj.weight.copy_(torch.eye(8))
        model.attention.o_proj.weight.copy_(torch.eye(8))
        model.readout.weight.copy_(torch.eye(8))
        model.readout.bias.zero_()
        tokens, target = config.make_batch(0)
        logits, weights = model(tokens)
    assert weights is None
    assert (logits.argmax(-1) == target).all()


def test_steps_to_accuracy_uses_a_moving_average():
    history = TrainingHistory(accuracy=[0.0] * 10 + [1.0] * 10)
    assert sc.steps_to_accuracy(history, 0.5, window=4) == 11  # window 10..13 averages 0.5 at step 11
    assert sc.steps_to_accuracy(history, 1.0, window=4) == 13
    assert sc.steps_to_accuracy(TrainingHistory(accuracy=[0.2] * 30), 0.9) is None
    assert sc.final_accuracy(history, last=5) == 1.0


def test_usable_learning_rate_range_in_decades():
    def run(acc):
        return sc.RecallRun("x", 4, 1, 1e-3, 1.0, TrainingHistory(), None, acc, 0.9)

    sweep = sc.LearningRateSweep(
        4, [1e-4, 1e-3, 1e-2, 1e-1],
        {"scaled": [run(a) for a in (0.95, 1.0, 0.92, 0.1)], "no scale": [run(a) for a in (0.5, 0.95, 0.2, 0.1)]},
        0.9,
    )
    assert sweep.usable("scaled") == [1e-4, 1e-3, 1e-2]
    assert sweep.usable_decades("scaled") == pytest.approx(2.0)
    assert sweep.usable_decades("no scale") == 0.0
    sweep.runs["no scale"] = [run(0.1)] * 4
    assert math.isnan(sweep.usable_decades("no scale"))


def test_scale_bug_shrinks_the_score_variance_to_one_over_num_heads():
    report = sc.multihead_scale_bug(64, 8, steps=2, num_samples=50_000)
    assert report.head_dim == 8
    assert report.score_variance["1/sqrt(head_dim)"] == pytest.approx(1.0, rel=0.03)
    assert report.score_variance["1/sqrt(d_model)"] == pytest.approx(1 / 8, rel=0.03)
    assert report.init_entropy["1/sqrt(d_model)"] > report.init_entropy["1/sqrt(head_dim)"]
    assert report.init_entropy["1/sqrt(d_model)"] <= report.max_entropy + 1e-6
    assert [run.scale for run in report.runs] == pytest.approx([1 / math.sqrt(8), 1 / 8])


@pytest.mark.slow
def test_scaled_model_learns_recall_and_unscaled_wide_head_lags():
    runs = sc.dk_training_sweep((256,), steps=120)
    scaled, unscaled = runs
    assert (scaled.label, unscaled.label) == ("scaled", "no scale")
    assert scaled.steps_to_target is not None and scaled.steps_to_target < 60
    assert unscaled.steps_to_target is None or unscaled.steps_to_target > scaled.steps_to_target + 20


@pytest.mark.slow
def test_learned_temperature_moves_and_records_its_trajectory():
    from_one, from_prior = sc.learned_temperature_runs(64, steps=40)
    assert len(from_one.scale_trajectory) == 40
    assert from_one.scale_trajectory[0] < 1.0  # the first steps already shrink it
    assert from_prior.scale_trajectory[0] == pytest.approx(1 / 8, rel=0.05)
