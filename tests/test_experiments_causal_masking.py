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
    assert unmasked.test_loss < 0.6 * unmasked.floor < masked.test_loss  # held out too: it copies, and cannot peek
    assert masked.test_loss > 0.95 * masked.floor  # an honest model does not beat the floor on held-out data


def test_mask_value_table_shows_the_float16_overflow_and_the_nan_rows():
    rows = {(r["method"], r["dtype"]): r for r in cm.mask_value_table()}
    assert len(rows) == 18 and all(r["partial_ok"] for r in rows.values())
    assert rows[("additive -1e9", "float16")]["fill"] == "-inf" and rows[("additive -1e9", "float16")]["full"] == "NaN"
    assert rows[("additive -inf", "float32")]["full"] == "NaN"
    assert rows[("finfo.min added", "bfloat16")]["full"].startswith("uniform")


def test_adding_finfo_min_overflows_in_float16_and_masked_fill_does_not():
    # float16: -65504 - 16 = -65520 is the rounding midpoint to inf (ties to even): -inf from -16 down
    assert cm.float16_overflow_score() == -16.0
    low = torch.finfo(torch.float16).min
    assert torch.isneginf(torch.tensor(-16.0, dtype=torch.float16) + low)
    assert torch.tensor(-15.0, dtype=torch.float16) + low == low
    rows = {(r["method"], r["dtype"]): r for r in cm.mask_value_table()}
    added = rows[("finfo.min added", "float16")]
    assert added["full"].startswith("uniform")  # the all-positive row hides the problem
    assert added["full_negative"] == "NaN"  # [-20, -30, -25, -17]: every score -> -inf
    assert added["full_one_positive"] == "one-hot (key 2)"  # only the score 5 stays finite
    # two added masks: finfo.min + finfo.min = -inf in every dtype
    assert all(rows[("finfo.min added, two masks", d)]["full"] == "NaN" for d in ("float32", "float16", "bfloat16"))
    # writing finfo.min over the scores is uniform on every fully masked row, in every dtype
    for d in ("float32", "float16", "bfloat16"):
        r = rows[("finfo.min by masked_fill", d)]
        assert r["full"] == r["full_negative"] == r["full_one_positive"] == "uniform (1/4 each)"
    # the reference: softmax of the hand-built float16 row equals the one-hot vector exactly
    w = torch.softmax(torch.tensor([-20.0, -30.0, 5.0, -17.0], dtype=torch.float16) + low, dim=-1)
    assert w.tolist() == [0.0, 0.0, 1.0, 0.0]


def test_package_attention_in_float16_has_no_nan_on_fully_masked_negative_rows():
    # the package masks with -inf by masked_fill in float32 and returns zeros for an empty row
    from helpers.attention import scaled_dot_product_attention
    q = torch.full((1, 1, 2, 4), 3.0, dtype=torch.float16)
    k = -torch.ones(1, 1, 4, 4, dtype=torch.float16)  # scores -6 for every pair: negative rows
    v = torch.randn(1, 1, 4, 4).half()
    keep = torch.tensor([[True, True, False, False], [False, False, False, False]])  # row 2: every key masked
    out = scaled_dot_product_attention(q, k, v, attn_mask=keep)
    assert out.dtype == torch.float16 and not torch.isnan(out).any()
    assert (out[0, 0, 1] == 0).all()
    torch.testing.assert_close(out[0, 0, 0], v[0, 0, :2].float().mean(0).half(), rtol=1e-3, atol=1e-3)


def test_padding_on_the_key_axis_is_invisible_and_on_the_query_axis_leaks():
    result = cm.padding_broadcast()
    assert result.real_change["keys masked (right)"] == 0 and result.loss_change["keys masked (right)"] == 0
    assert result.real_change["queries masked (bug)"] > 0 and result.loss_change["queries masked (bug)"] > 0
