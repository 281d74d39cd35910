"""Tests of helpers.rnn: the GRU encoder-decoder with and without attention (chapter 1)."""

import pytest
import torch

from helpers.rnn import Seq2SeqGRU
from helpers.scores import AdditiveAttention
from helpers.tasks import reverse_task
from helpers.train import num_threads, set_seed


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny recurrent models run several times faster single-threaded on a shared CPU."""
    with num_threads(1):
        yield


def _model(attention: bool, hidden: int = 8, vocab: int = 9, embed: int = 6, seed: int = 0) -> Seq2SeqGRU:
    set_seed(seed)
    return Seq2SeqGRU(vocab, embed, hidden, attention=attention)


@pytest.mark.parametrize("attention", [False, True])
def test_shapes_of_teacher_forced_and_greedy_outputs(attention):
    model = _model(attention)
    src, tgt = reverse_task(4, 7, 9, seed=0)
    logits, alignment = model(src, tgt[:, :5])
    assert logits.shape == (4, 5, 9)
    greedy, greedy_alignment = model(src, max_new_tokens=3)
    assert greedy.shape == (4, 3, 9)
    assert model.generate(src).shape == (4, 7)
    if attention:
        assert alignment.shape == (4, 5, 7) and greedy_alignment.shape == (4, 3, 7)
    else:
        assert alignment is None and greedy_alignment is None


def test_alignment_rows_are_distributions_over_the_source():
    model = _model(True)
    src, tgt = reverse_task(5, 6, 9, seed=1)
    _, alignment = model(src, tgt)
    assert (alignment > 0).all()
    torch.testing.assert_close(alignment.sum(-1), torch.ones(5, 6))


def test_decoder_attention_step_equals_the_additive_attention_module():
    model = _model(True, hidden=8)
    assert isinstance(model.attention, AdditiveAttention)
    torch.manual_seed(2)
    query, states = torch.randn(3, 8), torch.randn(3, 5, 16)
    keys = model.attention.key_proj(states)
    context, weights = model._attend(query, keys, states)
    expected_context, expected_weights = model.attention(query[:, None], states, states)
    torch.testing.assert_close(weights, expected_weights[:, 0])
    torch.testing.assert_close(context, expected_context[:, 0])


@pytest.mark.parametrize("attention", [False, True])
def test_teacher_forced_logits_at_step_i_ignore_targets_from_step_i_on(attention):
    model = _model(attention)
    src, tgt = reverse_task(3, 6, 9, seed=3)
    changed = tgt.clone()
    changed[:, 3:] = (changed[:, 3:] + 1 - 2) % 7 + 2  # other content tokens from step 3 on
    logits, _ = model(src, tgt)
    logits_changed, _ = model(src, changed)
    torch.testing.assert_close(logits[:, :4], logits_changed[:, :4])  # step 3 reads tgt[:, 2] only
    assert not torch.allclose(logits[:, 4:], logits_changed[:, 4:])


@pytest.mark.parametrize("attention", [False, True])
def test_greedy_decoding_equals_teacher_forcing_on_its_own_predictions(attention):
    model = _model(attention)
    src, _ = reverse_task(4, 6, 9, seed=4)
    greedy_logits, greedy_alignment = model(src)
    predictions = greedy_logits.argmax(-1)
    forced_logits, forced_alignment = model(src, predictions)
    torch.testing.assert_close(forced_logits, greedy_logits)
    if attention:
        torch.testing.assert_close(forced_alignment, greedy_alignment)


def test_plain_decoder_sees_only_the_summary_while_attention_sees_every_state():
    src, tgt = reverse_task(2, 5, 9, seed=5)
    for attention in (False, True):
        model = _model(attention)
        base, _ = model(src, tgt)
        original = model.encode

        def scrambled(tokens, original=original):
            states, summary = original(tokens)
            return torch.randn_like(states), summary  # change every per-position state, keep the summary

        model.encode = scrambled
        changed, _ = model(src, tgt)
        if attention:
            assert not torch.allclose(base, changed)
        else:
            torch.testing.assert_close(base, changed)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: m(torch.tensor([[1.0, 2.0]])), TypeError, "source must be an int64 tensor"),
        (lambda m: m(torch.tensor([[1, 99]])), ValueError, r"source .*\[0, 9\)"),
        (lambda m: m(torch.tensor([[1, 2]]), torch.tensor([[1.0]])), TypeError, "target must be an int64 tensor"),
        (lambda m: m(torch.tensor([[1, 2]]), torch.tensor([[1], [2]])), ValueError, "batch size"),
        (lambda m: m(torch.tensor([[1, 2]]), max_new_tokens=0), ValueError, "max_new_tokens"),
        (lambda m: m(torch.tensor([[1, 2]]), torch.tensor([[3]]), max_new_tokens=2), ValueError, "max_new_tokens"),
        (lambda m: Seq2SeqGRU(9, 0, 4, attention=True), ValueError, "embed_dim"),
        (lambda m: Seq2SeqGRU(9, 4, 0, attention=True), ValueError, "hidden_size"),
        (lambda m: Seq2SeqGRU(9, 4, 4, attention="yes"), TypeError, "attention"),
    ],
)
def test_bad_inputs_raise_errors_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call(_model(True))
