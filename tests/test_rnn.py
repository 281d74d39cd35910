"""Tests of helpers.rnn: the GRU encoder-decoder with and without attention (chapter 1)."""

import pytest
import torch
from torch import nn

from helpers.attention import AdditiveAttention
from helpers.rnn import (
    AlignmentRecorder,
    Seq2SeqGRU,
    evaluate_seq2seq,
    gradient_by_distance,
    sequential_vs_parallel_time,
    train_seq2seq,
)
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
    greedy, greedy_alignment = model(src, max_len=3)
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


def test_evaluate_counts_tokens_and_whole_sequences_by_brute_force():
    class Oracle(Seq2SeqGRU):
        """Reverses the source but gets the first token of every third sequence wrong."""

        def generate(self, src, max_len=None):
            out = src.flip(1).clone()
            out[::3, 0] = (out[::3, 0] - 2 + 1) % (self.vocab_size - 2) + 2
            return out

    model = Oracle(9, 4, 4, attention=False)
    metrics = evaluate_seq2seq(model, 6, num_samples=30, seed=7)
    assert metrics["sequence_accuracy"] == pytest.approx(20 / 30)
    assert metrics["token_accuracy"] == pytest.approx(1 - 10 / (30 * 6))


def test_alignment_recorder_snapshots_at_its_period():
    model = _model(True)
    src, tgt = reverse_task(2, 5, 9, seed=8)
    recorder = AlignmentRecorder(src, tgt, every=3)
    train_seq2seq(model, lengths=[5], steps=7, batch_size=4, callback=recorder)
    assert recorder.steps == [0, 3, 6]
    assert all(a.shape == (2, 5, 5) for a in recorder.alignments)
    assert not torch.allclose(recorder.alignments[0], recorder.alignments[-1])
    with pytest.raises(ValueError, match="attention"):
        train_seq2seq(_model(False), lengths=[5], steps=1, batch_size=4, callback=recorder)


def test_training_is_deterministic_for_a_seed():
    losses = [train_seq2seq(_model(True), lengths=[4, 6], steps=4, batch_size=4, seed=3).loss for _ in range(2)]
    assert losses[0] == losses[1]


@pytest.mark.slow
def test_attention_learns_reversal_at_length_10_and_aligns_anti_diagonally():
    model = _model(True, hidden=32, vocab=12, embed=16)
    train_seq2seq(model, lengths=[10], steps=200, seed=0)
    metrics = evaluate_seq2seq(model, 10)
    assert metrics["sequence_accuracy"] > 0.9
    src, tgt = reverse_task(64, 10, 12, seed=99)
    with torch.no_grad():
        _, alignment = model(src, tgt)
    # output step i should look at source position 9 - i; the bidirectional states next to it
    # carry that token too, so the weight sits on a band of width 3 around the anti-diagonal
    offset = torch.arange(10)[None, :] - torch.arange(9, -1, -1)[:, None]  # (T, S): j - (9 - i)
    band = offset.abs() <= 1
    assert (alignment * band).sum(-1).mean() > 0.75
    peak_offset = offset.gather(1, alignment.argmax(-1).T).T  # (B, T)
    assert (peak_offset.abs() <= 1).float().mean() > 0.95


@pytest.mark.slow
def test_without_attention_hidden_16_fails_at_length_30_where_attention_does_not():
    results = {}
    for attention in (False, True):
        model = _model(attention, hidden=16, vocab=12, embed=16)
        train_seq2seq(model, lengths=[5, 10, 15, 20, 25, 30], steps=400, seed=0)
        results[attention] = evaluate_seq2seq(model, 30, num_samples=128)
    # 10 content tokens: chance is 0.1; measured 0.18 without and 0.49 with attention
    assert results[False]["token_accuracy"] < 0.3
    assert results[True]["token_accuracy"] > results[False]["token_accuracy"] + 0.2


def test_gradient_by_distance_matches_autograd_and_decays_only_for_the_rnn():
    result = gradient_by_distance(12, 8, seeds=(0,))
    # brute force for the GRU: rebuild it with the same seed, one backward pass per output unit
    set_seed(0)
    gru = nn.GRU(8, 8, batch_first=True)
    for _ in range(3):
        nn.Linear(8, 8, bias=False)
    x = torch.randn(12, 8, requires_grad=True)
    last = gru(x[None])[0][0, -1]
    squares = torch.zeros(12)
    for unit in range(8):
        (grad,) = torch.autograd.grad(last[unit], x, retain_graph=True)
        squares += grad.pow(2).sum(-1)
    torch.testing.assert_close(result.rnn, squares.sqrt().flip(0))
    assert result.distance.tolist() == list(range(12))

    result = gradient_by_distance(24, 16, seeds=(0, 1))
    assert result.rnn[-1] < 1e-3 * result.rnn[0]
    assert all(a >= b for a, b in zip(result.rnn[:8], result.rnn[1:9]))
    far = result.attention[1:]  # distance 0 also gets the query path
    assert far.min() > 0.3 * far.max() and result.attention[-1] > 100 * result.rnn[-1]


def test_sequential_vs_parallel_time_reports_positive_times():
    rows = sequential_vs_parallel_time([4, 8], 8, repeats=2)
    assert [r["seq_len"] for r in rows] == [4, 8]
    assert all(r["gru_ms"] > 0 and r["attention_ms"] > 0 for r in rows)
    assert [r["gru_sequential_steps"] for r in rows] == [4, 8]
    assert all(r["attention_sequential_steps"] == 1 for r in rows)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: m(torch.tensor([[1.0, 2.0]])), TypeError, "src"),
        (lambda m: m(torch.tensor([[1, 99]])), ValueError, r"src .*\[0, 9\)"),
        (lambda m: m(torch.tensor([[1, 2]]), torch.tensor([[1], [2]])), ValueError, "batch size"),
        (lambda m: m(torch.tensor([[1, 2]]), max_len=0), ValueError, "max_len"),
        (lambda m: m(torch.tensor([[1, 2]]), torch.tensor([[3]]), max_len=2), ValueError, "max_len"),
        (lambda m: evaluate_seq2seq(m, 5, task="shuffle"), ValueError, "task"),
        (lambda m: train_seq2seq(m, lengths=[0], steps=1), ValueError, "lengths"),
        (lambda m: Seq2SeqGRU(9, 0, 4, attention=True), ValueError, "embed_dim"),
        (lambda m: Seq2SeqGRU(9, 4, 4, attention="yes"), TypeError, "attention"),
    ],
)
def test_bad_inputs_raise_errors_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call(_model(True))
