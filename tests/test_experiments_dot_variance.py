"""Tests of helpers.experiments.dot_variance (chapter 3): Var(q . k) against closed forms."""


import pytest
import torch

from helpers.experiments import dot_variance

# --------------------------------------------------------------------------------------------
# 1. Var(q . k)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("distribution", sorted(dot_variance.DISTRIBUTIONS))
def test_measured_dot_variance_matches_closed_form(distribution):
    sweep = dot_variance.dot_product_variance((8, 64), distribution=distribution, num_samples=40_000, seed=1)
    for measured, theory in zip(sweep.measured, sweep.theory):
        assert measured == pytest.approx(theory, rel=0.08)


@pytest.mark.parametrize("distribution", ["gaussian", "uniform", "rademacher", "laplace"])
def test_unit_variance_entries_have_unit_mean_square_and_zero_mean(distribution):
    x = dot_variance.sample_entries(distribution, 200_000, 4, generator=torch.Generator().manual_seed(0))
    assert x.mean().item() == pytest.approx(0.0, abs=0.01)
    assert x.var().item() == pytest.approx(1.0, rel=0.02)


def test_scaled_variance_is_one_at_every_size_for_gaussian_entries():
    sweep = dot_variance.dot_product_variance((1, 16, 256, 1024), num_samples=20_000)
    assert sweep.d_k == [1, 16, 256, 1024]
    for scaled, measured, d_k in zip(sweep.scaled, sweep.measured, sweep.d_k):
        assert scaled == pytest.approx(measured / d_k, rel=1e-9)
        assert scaled == pytest.approx(1.0, rel=0.05)


def test_rademacher_dot_product_of_size_one_has_variance_one():
    sweep = dot_variance.dot_product_variance((1,), distribution="rademacher", num_samples=10_000)
    # q . k is +-1: its variance is 1 minus the squared sample mean, times n/(n-1)
    assert sweep.measured[0] == pytest.approx(1.0, abs=0.02)


def test_layernorm_of_two_features_gives_dot_products_of_plus_minus_two():
    # LayerNorm of a 2-vector is (+1, -1) or (-1, +1): q . k = +-2, variance d^2 / (d - 1) = 4
    sweep = dot_variance.dot_product_variance((2,), distribution="layernorm", num_samples=10_000)
    assert dot_variance.theoretical_dot_variance("layernorm", 2) == 4.0
    assert sweep.measured[0] == pytest.approx(4.0, abs=0.1)


def test_layernorm_skips_size_one_and_theory_formulas():
    sweep = dot_variance.dot_product_variance((1, 2, 4), distribution="layernorm", num_samples=100)
    assert sweep.d_k == [2, 4]
    assert dot_variance.theoretical_dot_variance("shifted", 10) == 30.0
    assert dot_variance.theoretical_dot_variance("correlated", 100) == pytest.approx(100 * 0.99 + 0.01 * 100**2)
    assert dot_variance.theoretical_dot_variance("projected", 90) == pytest.approx(10.0)


def test_projected_entries_follow_pytorch_linear_init():
    # nn.Linear(64, d)'s weight is U(-1/8, 1/8): variance 1/192; 64 LayerNorm-ed inputs give 1/3
    x = dot_variance.sample_entries("projected", 20_000, 256, generator=torch.Generator().manual_seed(0))
    assert x.var().item() == pytest.approx(1 / 3, rel=0.05)


def test_unknown_distribution_is_rejected_by_name():
    with pytest.raises(ValueError, match="distribution must be one of"):
        dot_variance.dot_product_variance((4,), distribution="cauchy")


# --------------------------------------------------------------------------------------------


def test_within_row_variance_of_shifted_entries_is_two_d_k_not_three():
    from helpers.experiments import dot_variance

    rows = dot_variance.within_row_variance((64, 256), distribution="shifted", num_queries=400)
    for d, within, across in zip(rows.d_k, rows.within_row, rows.across_pairs):
        assert within == pytest.approx(2 * d, rel=0.08)
        assert across == pytest.approx(3 * d, rel=0.12)
    zero_mean = dot_variance.within_row_variance((256,), distribution="gaussian", num_queries=400)
    assert zero_mean.within_row[0] == pytest.approx(256, rel=0.08) and zero_mean.theory_row == [256.0]


def test_aligned_dot_product_has_a_mean_that_grows_like_d_k():
    from helpers.experiments import dot_variance

    stats = dot_variance.aligned_dot_stats((64, 1024), alignment=0.1, num_samples=8192)
    assert stats["mean"] == pytest.approx(stats["theory_mean"], rel=0.15)
    assert stats["std"] == pytest.approx(stats["theory_std"], rel=0.05)
    assert stats["mean"][1] > 3 * stats["std"][1]  # at d_k = 1024 the mean (~102) dwarfs the spread (~32)
