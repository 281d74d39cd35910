"""Tests of helpers.experiments.parallelism (chapter 1): operation counts on computations whose
chains of matrix products are known, and the timing table's structure."""

import pytest
import torch

from helpers.experiments.parallelism import operation_profile, operation_profiles, sequential_vs_parallel_time


def test_profile_counts_a_chain_of_products_and_independent_products():
    x, w = torch.randn(3, 3), torch.randn(3, 3)

    def chain(x):
        for _ in range(5):
            x = torch.tanh(x @ w)
        return x

    profile = operation_profile(chain, x)
    assert (profile.matmuls, profile.matmul_depth) == (5, 5)
    assert profile.op_names["aten.tanh"] == 5
    side_by_side = operation_profile(lambda x: x @ w + (x * 2) @ w + x.T @ w, x)
    assert (side_by_side.matmuls, side_by_side.matmul_depth) == (3, 1)
    in_place = operation_profile(lambda x: (x @ w).add_(1.0) @ w, x)
    assert in_place.matmul_depth == 2


def test_gru_chain_grows_with_length_and_attention_chain_does_not():
    rows = operation_profiles([4, 8, 16], embed_dim=8)
    assert [r["gru_depth"] for r in rows] == [4, 8, 16]  # step t waits for step t - 1
    assert rows[1]["gru_matmuls"] - rows[0]["gru_matmuls"] == 4  # one recurrent product per step
    assert rows[2]["gru_matmuls"] - rows[1]["gru_matmuls"] == 8
    assert {r["attention_depth"] for r in rows} == {4}  # projections, Q K^T, weights x V, output projection
    assert {r["attention_matmuls"] for r in rows} == {rows[0]["attention_matmuls"]}
    assert {r["attention_ops"] for r in rows} == {rows[0]["attention_ops"]}


def test_sequential_vs_parallel_time_reports_positive_times():
    rows = sequential_vs_parallel_time([4, 8], 8, repeats=2)
    assert [r["seq_len"] for r in rows] == [4, 8]
    assert all(r["gru_ms"] > 0 and r["attention_ms"] > 0 for r in rows)
    assert [r["gru_sequential_steps"] for r in rows] == [4, 8]
    assert all(r["attention_sequential_steps"] == 1 for r in rows)


def test_layer_multiply_adds_follow_the_formulas_and_cross_at_one_and_a_half_d():
    from helpers.experiments.parallelism import layer_multiply_adds

    counts = layer_multiply_adds(10, 4)
    assert counts == {"gru": 6 * 10 * 16, "attention": 3 * 10 * 16 + 2 * 100 * 4,
                      "attention_projections": 3 * 10 * 16, "attention_scores": 2 * 100 * 4}
    assert layer_multiply_adds(96, 64)["gru"] == layer_multiply_adds(96, 64)["attention"]
    assert layer_multiply_adds(64, 64)["attention"] < layer_multiply_adds(64, 64)["gru"]
    assert layer_multiply_adds(128, 64)["attention"] > layer_multiply_adds(128, 64)["gru"]
    # the GRU's six weight matrices, (d, d) each
    gru = torch.nn.GRU(4, 4)
    assert sum(p.numel() for name, p in gru.named_parameters() if "weight" in name) == 6 * 16
    with pytest.raises(ValueError, match="seq_len"):
        layer_multiply_adds(0, 4)


def test_sequential_vs_parallel_time_reads_the_cpu_clock_and_keeps_the_fastest():
    rows = sequential_vs_parallel_time([4], 8, repeats=3, clock="cpu", statistic="min")
    assert rows[0]["gru_ms"] > 0 and rows[0]["attention_ms"] > 0
    with pytest.raises(ValueError, match="clock"):
        sequential_vs_parallel_time([4], 8, clock="sundial")
    with pytest.raises(ValueError, match="statistic"):
        sequential_vs_parallel_time([4], 8, statistic="mean")
