"""Tests of helpers.experiments.causal_masking (chapter 5.2): perturbation, Jacobian, mask values, padding."""

import math

import torch

from helpers.experiments import causal_masking as cm
from helpers.models import TinyConfig, TinyGPT


def test_future_perturbation_is_exactly_zero_for_a_causal_model_and_not_without_the_mask():
    torch.manual_seed(0)
    model = TinyGPT(TinyConfig(vocab_size=8, max_positions=10, embed_dim=16, num_heads=2)).eval()
    tokens = torch.randint(0, 8, (3, 10))
    assert cm.future_perturbation(model, tokens, 4)["past"] == 0.0
    model.stack.is_causal = False
    assert cm.future_perturbation(model, tokens, 4)["past"] > 0.0


def test_block_jacobian_is_lower_triangular_only_when_causal():
    upper = torch.ones(6, 6, dtype=torch.bool).triu(1)
    causal = cm.block_jacobian(6, 8, is_causal=True)
    full = cm.block_jacobian(6, 8, is_causal=False)
    assert causal.shape == (6, 6) and causal[upper].max() == 0 and causal[~upper].min() > 0
    assert full[upper].min() > 0


def test_markov_sequences_follow_their_chain_at_the_stated_rate_and_the_entropy_is_right():
    tokens, successor = cm.markov_sequences(2000, 12, 8, follow=0.5, seed=0)
    assert tokens.shape == (2000, 12) and sorted(successor.tolist()) == list(range(8))
    rate = (tokens[:, 1:] == successor[tokens[:, :-1]]).float().mean().item()
    assert abs(rate - (0.5 + 0.5 / 8)) < 0.02
    assert math.isclose(cm.chain_entropy(4, 0.0), math.log(4))  # uniform
    assert cm.chain_entropy(4, 1.0) == 0.0  # deterministic


def test_an_unmasked_decoder_beats_the_floor_in_training_and_fails_to_generate():
    masked = cm.train_chain_decoder(True, seed=0, steps=150)
    unmasked = cm.train_chain_decoder(False, seed=0, steps=150)
    assert unmasked.final_loss < 0.6 * unmasked.floor < masked.final_loss
    assert masked.generation_accuracy > unmasked.generation_accuracy + 0.3


def test_mask_value_table_shows_the_float16_overflow_and_the_nan_rows():
    rows = {(r["method"], r["dtype"]): r for r in cm.mask_value_table()}
    assert len(rows) == 12 and all(r["partial_ok"] for r in rows.values())
    assert rows[("additive -1e9", "float16")]["fill"] == "-inf" and rows[("additive -1e9", "float16")]["full"] == "NaN"
    assert rows[("additive -inf", "float32")]["full"] == "NaN"
    assert rows[("finfo.min", "bfloat16")]["full"].startswith("uniform")


def test_padding_on_the_key_axis_is_invisible_and_on_the_query_axis_leaks():
    result = cm.padding_broadcast()
    assert result.real_change["keys masked (right)"] == 0 and result.loss_change["keys masked (right)"] == 0
    assert result.real_change["queries masked (bug)"] > 0 and result.loss_change["queries masked (bug)"] > 0
