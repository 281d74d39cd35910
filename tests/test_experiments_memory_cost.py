"""Chapter 6.3 (memory): layer memory against n, checkpointing, the online softmax, mixed precision."""

from __future__ import annotations

import plotly.graph_objects as go

from helpers.experiments import memory_cost as mem
from helpers.figures import memory_cost as fig


def test_attention_layer_memory_is_quadratic_and_a_fixed_multiple_of_the_score_matrix() -> None:
    result = mem.attention_layer_memory((128, 256))
    assert result["score_matrix_bytes"] == [4 * 128 * 128 * 4.0, 4 * 256 * 256 * 4.0]
    growth = result["forward_peak"][1] / result["forward_peak"][0]
    assert 3.2 < growth < 4.4
    assert all(p > s for p, s in zip(result["forward_peak"], result["score_matrix_bytes"]))  # at least the scores
    assert all(p > 0 for p in result["backward_peak"])
    assert isinstance(fig.layer_memory_figure(result), go.Figure)


def test_checkpointing_keeps_gradients_and_saves_memory() -> None:
    result = mem.checkpointing_trade(num_layers=4, seq_len=64, batch=4, repeats=1)
    assert result["max_grad_gap"] < 1e-6
    assert result["checkpointed_bytes"] < result["plain_bytes"] / 1.5
    assert "| every block checkpointed |" in fig.checkpoint_table(result)


def test_online_softmax_is_exact() -> None:
    result = mem.chunked_exactness(n=200, head_dim=16, chunk_size=64)
    assert result["float32"] < 1e-5 and result["float64"] < 1e-12


def test_chunked_memory_grows_linearly_and_materialised_quadratically() -> None:
    result = mem.chunked_memory((512, 1024), head_dim=16, num_heads=2, chunk_size=128)
    assert 3.6 < result["materialised_bytes"][1] / result["materialised_bytes"][0] < 4.4
    assert 1.8 < result["chunked_bytes"][1] / result["chunked_bytes"][0] < 2.2
    assert result["chunked_bytes"][1] < result["materialised_bytes"][1]
    assert isinstance(fig.chunked_memory_figure(result), go.Figure)
    assert fig.chunked_time_table(result).count("\n") == 3


def test_precision_memory_halves_inputs_and_keeps_softmax_in_float32() -> None:
    result = mem.precision_memory(n=128, head_dim=16, num_heads=2)
    assert result["qkv_bytes_float32"] == 3 * 2 * 128 * 16 * 4
    assert result["qkv_bytes_bfloat16"] * 2 == result["qkv_bytes_float32"]
    assert result["weights_itemsize_bfloat16"] == 4
    assert 0 < result["max_error_bfloat16"] < 0.05


def test_growth_exponent_recovers_powers_and_rejects_bad_input() -> None:
    import pytest
    n = [100.0, 200.0, 400.0, 800.0]
    assert abs(mem.growth_exponent(n, [3 * x for x in n]) - 1) < 1e-12
    assert abs(mem.growth_exponent(n, [x * x + 5 * x for x in n]) - 1.98) < 0.03  # closed form of the fit, near 2
    with pytest.raises(ValueError, match="lengths"):
        mem.growth_exponent([1.0], [1.0])


def test_training_memory_recomputing_is_linear_the_others_quadratic() -> None:
    result = mem.training_memory((256, 512, 1024), head_dim=16, num_heads=2, block_size=64)
    assert result["score_matrix_bytes"] == [2 * n * n * 4.0 for n in (256, 512, 1024)]
    assert 1.9 < mem.growth_exponent(result["n"], result["materialised_bytes"]) < 2.1
    assert mem.growth_exponent(result["n"], result["online_bytes"]) > 1.6
    assert 0.9 < mem.growth_exponent(result["n"], result["recomputing_bytes"]) < 1.1
    assert result["recomputing_bytes"][-1] < result["online_bytes"][-1] / 4
    assert isinstance(fig.training_memory_figure(result), go.Figure)


def test_recomputing_gradients_equal_dense_ones() -> None:
    import torch
    result = mem.recomputing_gradients(n=40, head_dim=8, num_heads=4, num_kv_heads=2, block_size=16)
    assert result["dense"][2].shape == (1, 2, 40, 8)  # dK has the key/value heads' shape
    for ours, dense in zip(result["recomputing"], result["dense"]):
        torch.testing.assert_close(ours, dense, rtol=1e-10, atol=1e-12)


def test_softmax_precision_breaks_at_the_logits_and_the_sum_not_the_exponentials() -> None:
    result = mem.softmax_precision(n=600, head_dim=64)
    assert result["max_exp"] == 1.0 and result["score_range"] > 500
    assert result["logit_true"] == 40 * 40 * 64 > 65504
    assert result["float16_logit_inf"] == 1.0 and result["float16_output_nan"] == 1.0
    assert result["bfloat16_sum"] == 256.0 and result["float32_sum"] == 600.0
