"""Tests of helpers.experiments.seq2seq_training: training and scoring chapter 1's GRU
encoder-decoders (brute-force counts, the callback's period, determinism, and what training buys)."""

import pytest
import torch

from helpers.experiments.seq2seq_training import AlignmentRecorder, evaluate_seq2seq, train_seq2seq
from helpers.rnn import Seq2SeqGRU
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


def test_evaluate_counts_tokens_and_whole_sequences_by_brute_force():
    class Oracle(Seq2SeqGRU):
        """Reverses the source but gets the first token of every third sequence wrong."""

        def generate(self, source, max_new_tokens=None):
            out = source.flip(1).clone()
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


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: evaluate_seq2seq(m, 5, task="shuffle"), ValueError, "task"),
        (lambda m: train_seq2seq(m, lengths=[0], steps=1), ValueError, "lengths"),
    ],
)
def test_bad_inputs_raise_errors_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call(_model(True))
