"""Tests of helpers.experiments.efficient_cost and efficient_accuracy (chapter 5.3)."""

import math

import numpy as np
import torch

from helpers.experiments import efficient_accuracy as ea
from helpers.experiments import efficient_cost as ec


def test_every_variant_returns_the_dense_shape_and_chunked_is_exact():
    q, k, v = ec.random_qkv(128, 16, heads=2)
    exact = ec.dense_attention(q, k, v)
    for name, fn in ec.variant_functions(128, params={"window": 8, "bigbird_block": 16, "hier_block": 16}).items():
        assert fn(q, k, v).shape == exact.shape, name
    torch.testing.assert_close(ec.variant_functions(128)["chunked (exact)"](q, k, v), exact, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ec.variant_functions(128)["dense (fused SDPA)"](q, k, v), exact, atol=1e-5, rtol=1e-5)


def test_fit_exponent_and_crossover_on_known_power_laws():
    n = np.array([100, 200, 400, 800])
    assert math.isclose(ec.fit_exponent(n, 3 * n**2.0), 2.0, rel_tol=1e-9)
    n_star, how = ec.crossover_length(n, 1e-4 * n**2.0, 1e-2 * n)  # equal at n = 100 * ... : 1e-4 n^2 = 1e-2 n -> 100
    assert how in ("measured", "always cheaper") and n_star <= 200
    n_star, how = ec.crossover_length(n, 1e-6 * n**2.0, 1e-2 * n)  # cross at 10_000: beyond the sizes
    assert how == "extrapolated" and math.isclose(n_star, 10_000, rel_tol=1e-6)
    assert ec.crossover_length(n, 1e-2 * n, 1e-6 * n**2.0)[1] in ("never", "always cheaper")


def test_analytic_costs_match_the_formulas():
    assert ec.analytic_cost("dense", 64.0, 32, 0)[0] == 4 * 64 * 64 * 32
    assert ec.analytic_cost("sliding window", 1000.0, 32, 8)[1] == 1000 * 15
    flops, memory = ec.analytic_cost("linear (elu+1)", 1000.0, 16, 0)
    assert flops == 4 * 1000 * 16 * 16 and memory == 1000 * 16 + 16 * 16


def test_reordering_is_exact_and_n_over_d_times_cheaper():
    check = ec.reordering_check(64, 8)
    assert check["max_difference"] < 1e-10 and check["flops_left"] == 8 * check["flops_right"]


def test_measure_cost_reports_time_and_memory_per_size():
    cost = ec.measure_cost([64, 128], methods=["dense", "linear (elu+1)"], d=8, heads=1, repeats=2)
    assert set(cost) == {"dense", "linear (elu+1)"}
    assert len(cost["dense"]["time_s"]) == 2 and cost["dense"]["peak_mib"][1] > cost["dense"]["peak_mib"][0]
    repeats = cost["dense"]["repeats_s"]
    assert [len(r) for r in repeats] == [2, 2] and cost["dense"]["time_s"] == [min(r) for r in repeats]


def test_exponent_spread_fits_each_repeat_alone():
    n = np.array([100, 200, 400])
    times = np.stack([1e-6 * n**2.0, 3e-6 * n**1.5], axis=1)  # (sizes, repeats): repeat 0 ~ n^2, repeat 1 ~ n^1.5
    np.testing.assert_allclose(ec.exponent_spread(n, times), [2.0, 1.5], rtol=1e-9)
    try:
        ec.exponent_spread(n, times[:2])
    except ValueError as exc:
        assert "repeats_s" in str(exc)
    else:
        raise AssertionError("a wrong shape must raise")


def test_errors_are_normalised_and_linformer_is_not_causal_nor_length_free():
    errors = ec.approximation_errors(128, 16)
    assert errors["uniform average (baseline)"] == 1.0 and errors["chunked (exact)"] < 1e-5
    curves = ec.linformer_error_curve([16, 128], n=128, d=16, seeds=(0,))
    assert set(curves) == {"E = F, entries N(0, 1/k)", "E, F independent, N(0, 1/k)", "E = F, entries N(0, 1/n)"}
    assert all(c.shape == (1, 2) for c in curves.values())
    # at k = n the two scalings are the same matrix
    assert curves["E = F, entries N(0, 1/k)"][0, 1] == curves["E = F, entries N(0, 1/n)"][0, 1]
    limits = ec.linformer_limits()
    assert "exceeds" in limits["error_longer"] and limits["future_change"] > 0


def test_lookup_task_puts_the_answer_where_it_says():
    keys, values, target = ea.lookup_task(500, 10, near=3, seed=0)
    assert keys.shape == (500, 11) and (values[:, -1] == 8).all()
    position = (keys[:, :-1] == keys[:, -1:]).float().argmax(1)
    assert (position >= 7).all() and (values[torch.arange(500), position] == target).all()


def test_lookup_model_window_masks_and_runs_every_variant():
    for variant in ea.VARIANTS:
        model = ea.LookupModel(variant, 11)
        keys, values, _ = ea.lookup_task(4, 10, seed=1)
        assert model(keys, values).shape == (4, 8)
    mask = ea.LookupModel("window + global", 11, window=2).mask
    assert mask[-1].all() and mask[5, :3].sum() == 0 and mask[5, 3:6].all()


def test_a_rank_d_attention_matrix_gives_the_exact_output():
    # P V V+ has rank <= d and (P V V+) V = P V: no SVD lower bound on the output error exists for k >= d
    result = ec.linformer_rank_d_output(128, 8)
    assert result["rank"] == 8 and result["rank_p"] == 128 and result["error"] < 1e-12


def test_random_projection_lengthens_keys_by_root_n_over_k():
    ratios = ec.projection_inflation([16, 32, 128], n=128, d=16, seeds=(0, 1, 2, 3))
    np.testing.assert_allclose(ratios.mean(0), np.sqrt(128 / np.array([16, 32, 128])), rtol=0.1)


def test_effective_keys_is_n_for_uniform_and_smaller_for_peaked_attention():
    assert math.isclose(ec.effective_keys(64, 8, score_std=1e-12), 64, rel_tol=1e-4)  # scores ~ 0: uniform
    assert ec.effective_keys(64, 8, score_std=16.0) < ec.effective_keys(64, 8, score_std=1.0) < 64


def test_performer_kernel_is_unbiased_and_its_normalised_output_is_not():
    bias = ec.performer_bias(draws=5000)
    assert bias["kernel_z"] < 1.2  # |z| of an unbiased mean: about 0.8
    assert bias["output_z"] > 5  # grows like sqrt(draws) for a biased one
    assert 0.7 < bias["variance_ratio"] < 1.3 and bias["spread_lemma2"] < bias["spread_sum_norms"]
