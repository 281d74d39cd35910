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
    cost = ec.measure_cost([64, 128], methods=["dense", "linear (elu+1)"], d=8, heads=1, repeats=1)
    assert set(cost) == {"dense", "linear (elu+1)"}
    assert len(cost["dense"]["time_s"]) == 2 and cost["dense"]["peak_mib"][1] > cost["dense"]["peak_mib"][0]


def test_errors_are_normalised_and_linformer_is_not_causal_nor_length_free():
    errors = ec.approximation_errors(128, 16)
    assert errors["uniform average (baseline)"] == 1.0 and errors["chunked (exact)"] < 1e-5
    random, best = ec.linformer_error_curve([16, 128], n=128, d=16, seeds=(0,))
    assert random.shape == (1, 2) and best[-1] < 1e-4  # rank n reproduces attention exactly
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
