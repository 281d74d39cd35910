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
