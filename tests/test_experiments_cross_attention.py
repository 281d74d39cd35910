"""Tests of helpers.experiments.cross_attention (chapter 5.1): shapes, alignment mass, reversal."""

import torch

from helpers.experiments import cross_attention as ca


def test_qkv_shapes_give_l_by_s_weights_for_cross_attention():
    rows = ca.qkv_shapes(target_len=3, source_len=5, embed_dim=8, num_heads=2)
    assert [r[3] for r in rows] == ["(1, 2, 5, 5)", "(1, 2, 3, 3)", "(1, 2, 3, 5)"]
    assert rows[2][4] == "(1, 3, 8)"  # one output per query


def test_alignment_mass_is_one_on_the_anti_diagonal_and_one_over_s_when_uniform():
    ideal = torch.eye(4).flip(1)
    assert ca.alignment_mass(ideal).item() == 1.0
    assert abs(ca.alignment_mass(torch.full((2, 4, 4), 0.25))[0].item() - 0.25) < 1e-7


def test_a_short_reversal_run_returns_maps_of_the_right_shapes():
    run = ca.train_reversal(seed=0, seq_len=5, steps=30, embed_dim=16)
    assert run.cross.shape == (2, 2, 5, 5) and run.encoder_self.shape == (2, 2, 5, 5)
    assert run.mass.shape == (2, 2) and 0 <= run.token_accuracy <= 1
    torch.testing.assert_close(run.cross.sum(-1), torch.ones(2, 2, 5))
