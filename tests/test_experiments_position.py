"""Chapter 6.5 (position): the T5 option of the tiny models and the experiments of the page."""

from __future__ import annotations

import pytest
import torch

from helpers.experiments import position as pos
from helpers.figures import position as fig
from helpers.models import TinyConfig, TinyEncoder, TinyGPT
from helpers.positional import T5RelativeBias

TOL = dict(atol=1e-5, rtol=1e-5)


def t5_gpt() -> TinyGPT:
    torch.manual_seed(0)
    model = TinyGPT(TinyConfig(vocab_size=11, embed_dim=32, num_heads=4, positional="t5")).eval()
    with torch.no_grad():  # larger weights than the 0.02 init, so that outputs vary with the input
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.3)
    return model


def test_t5_gpt_is_causal_and_its_bias_is_a_trained_parameter() -> None:
    model = t5_gpt()
    assert isinstance(model.stack.relative_bias, T5RelativeBias) and not model.stack.relative_bias.bidirectional
    tokens = torch.randint(0, 11, (2, 8), generator=torch.Generator().manual_seed(1))
    changed = tokens.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % 11
    torch.testing.assert_close(model(tokens).output[:, :5], model(changed).output[:, :5], atol=0, rtol=0)
    model(tokens).output.sum().backward()
    assert model.stack.relative_bias.relative_attention_bias.weight.grad.abs().sum() > 0


def test_t5_gpt_kv_cache_logits_equal_full_forward_and_generation_matches() -> None:
    model = t5_gpt()
    tokens = torch.randint(0, 11, (2, 9), generator=torch.Generator().manual_seed(2))
    full = model(tokens).output
    caches = model.new_kv_caches()
    prefill = model(tokens[:, :4], kv_caches=caches).output
    steps = [model(tokens[:, t:t + 1], kv_caches=caches).output for t in range(4, 9)]
    torch.testing.assert_close(torch.cat([prefill, *steps], dim=1), full, **TOL)
    prompt = tokens[:, :3]
    torch.testing.assert_close(model.generate(prompt, 10, use_cache=True), model.generate(prompt, 10, use_cache=False),
                               atol=0, rtol=0)


def test_t5_encoder_is_bidirectional_and_sees_order() -> None:
    torch.manual_seed(0)
    encoder = TinyEncoder(TinyConfig(vocab_size=11, embed_dim=32, positional="t5")).eval()
    assert encoder.stack.relative_bias.bidirectional
    with torch.no_grad():
        encoder.stack.relative_bias.relative_attention_bias.weight.normal_(0.0, 2.0)
    tokens = torch.randint(0, 11, (1, 8), generator=torch.Generator().manual_seed(3))
    perm = torch.randperm(8, generator=torch.Generator().manual_seed(4))
    gap = (encoder(tokens).output[:, perm] - encoder(tokens[:, perm]).output).abs().max()
    assert gap > 1e-2  # a relative bias breaks permutation equivariance


def test_attention_without_positions_is_permutation_equivariant_and_positions_break_it() -> None:
    gaps = pos.permutation_gaps(seed=1)
    assert gaps["attention layer"] < 1e-5 and gaps["encoder without positions"] < 1e-5
    assert gaps["encoder with learned positions"] > 0.1 and gaps["causal attention layer"] > 0.1
    assert "attention layer" in fig.gaps_table(gaps)


def test_rope_score_depends_only_on_the_offset_and_decays() -> None:
    assert pos.rope_offset_gap(head_dim=32, max_position=128) < 1e-4
    offsets, with_rope, without = pos.rope_scores_by_offset(head_dim=32, max_offset=128, num_pairs=64)
    assert len(offsets) == len(with_rope) == len(without)
    assert abs(with_rope[0] - without[0]) < 1e-4 and with_rope[-1] < 0.6 * with_rope[0]


def test_recurrence_sequences_follow_their_rule() -> None:
    x = pos.recurrence_sequences(5, 20, 8, seed=0, lags=(1, 3))
    assert torch.equal(x[:, 3:], (x[:, 2:-1] + x[:, :-3]) % 8)
    y = pos.recurrence_sequences(5, 20, 8, seed=0, lags=(3,))
    assert torch.equal(y[:, 3:], y[:, :-3])
    assert torch.equal(y, pos.recurrence_sequences(5, 20, 8, seed=0, lags=(3,)))  # seeded


def test_extrapolation_runs_record_one_accuracy_per_position() -> None:
    runs = pos.extrapolation_runs(("alibi", "learned"), (0,), train_len=8, test_len=16, steps=5, num_test=8)
    for name in ("alibi", "learned"):
        (run,) = runs[name]
        assert len(run.per_position) == 15 and all(0.0 <= a <= 1.0 for a in run.per_position)
        assert 0.0 <= run.accuracy(3, 8) <= 1.0
    assert "positions 3–7" in fig.extrapolation_table(runs, [(3, 8), (8, 16)])
    assert len(fig.extrapolation_figure(runs, 8).data) == 4


def test_order_task_runs_return_one_result_per_seed() -> None:
    runs = pos.order_task_runs(("none",), (0, 1), steps=3)
    assert [r.seed for r in runs["none"]] == [0, 1] and all(0 <= r.accuracy <= 1 for r in runs["none"])
    assert "none" in fig.order_table(runs)
    assert len(fig.relative_bias_figure().data) == 9


def test_extrapolation_batch_is_the_recurrence_shifted_by_one_with_the_random_start_masked() -> None:
    x = pos.recurrence_sequences(4, 12, 8, seed=5, lags=(1, 3))
    inputs, targets = pos.extrapolation_batch(4, 12, 8, seed=5, lags=(1, 3))
    assert torch.equal(inputs, x[:, :-1])
    assert bool((targets[:, :2] == -100).all()) and torch.equal(targets[:, 2:], x[:, 3:])


def test_windowed_predictions_see_only_the_last_window_of_tokens() -> None:
    torch.manual_seed(0)
    model = TinyGPT(TinyConfig(vocab_size=8, embed_dim=16, num_heads=2, num_layers=2, positional="rope")).eval()
    inputs = torch.randint(0, 8, (3, 12))
    with torch.no_grad():
        full = model(inputs).output.argmax(-1)  # (B, T)
        # a window as long as the sequence is the ordinary forward pass
        assert torch.equal(pos.windowed_predictions(model, inputs, 12), full)
        windowed = pos.windowed_predictions(model, inputs, 5)
        assert torch.equal(windowed[:, :5], full[:, :5])  # the first positions see their whole prefix
        for t in range(5, 12):  # brute force: run the window ending at t on its own
            alone = model(inputs[:, t - 4:t + 1]).output[:, -1].argmax(-1)
            assert torch.equal(windowed[:, t], alone)
        # changing a token outside every later window changes nothing there
        changed = inputs.clone()
        changed[:, 0] = (changed[:, 0] + 1) % 8
        assert torch.equal(pos.windowed_predictions(model, changed, 5)[:, 5:], windowed[:, 5:])
    try:
        pos.windowed_predictions(model, inputs, 0)
    except ValueError:
        pass
    else:
        raise AssertionError("window=0 accepted")


def test_extrapolation_runs_evaluate_the_windowed_encodings_only() -> None:
    runs = pos.extrapolation_runs(("none", "rope"), (0,), train_len=8, test_len=16, steps=2, num_test=4,
                                  windowed=("rope",))
    assert runs["none"][0].windowed_per_position is None
    rope = runs["rope"][0]
    assert len(rope.windowed_per_position) == len(rope.per_position) == 15
    assert rope.windowed_per_position[:7] == rope.per_position[:7]  # positions inside the window: the same


def test_the_set_function_ceiling_is_the_mean_share_of_the_commonest_other_token() -> None:
    from collections import Counter

    from helpers.tasks import reverse_task

    tokens, targets = reverse_task(64, 8, 8, seed=7)
    expected = []
    for row in tokens.tolist():
        for i in range(len(row)):
            others = Counter(row[:i] + row[i + 1:])
            expected.append(max(others.values()) / (len(row) - 1))
    assert pos.set_function_ceiling(tokens) == pytest.approx(sum(expected) / len(expected), abs=1e-12)
    # guessing the commonest other token reaches the ceiling on average (the reversal's target is one of them)
    many, many_targets = reverse_task(4000, 8, 8, seed=8)
    counts = torch.nn.functional.one_hot(many).sum(1)  # (N, V)
    others = counts[:, None, :] - torch.nn.functional.one_hot(many, counts.size(-1))  # (N, L, V)
    guess = others.argmax(-1)  # (N, L)
    assert (guess == many_targets).float().mean().item() == pytest.approx(pos.set_function_ceiling(many), abs=0.01)
    with pytest.raises(ValueError, match="tokens"):
        pos.set_function_ceiling(torch.zeros(4, dtype=torch.long))
