"""Tests of helpers.experiments.gradient_paths (chapter 1): gradients by distance against a
brute-force backward pass, and the geometric fit against closed forms."""

import pytest
import torch
from torch import nn

from helpers.experiments.gradient_paths import geometric_decay_rate, gradient_by_distance
from helpers.train import set_seed


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


def test_decay_rate_recovers_the_ratio_of_a_geometric_sequence():
    values = 3.0 * 0.6 ** torch.arange(10, dtype=torch.float64)
    assert geometric_decay_rate(values) == pytest.approx(0.6, rel=1e-9)
    assert geometric_decay_rate([5.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert geometric_decay_rate([1.0, 0.25], distances=[0, 2]) == pytest.approx(0.5)
    assert geometric_decay_rate([1.0, 0.0, 0.25], distances=[0, 1, 2]) == pytest.approx(0.5)  # zeros left out
    with pytest.raises(ValueError, match="two positive"):
        geometric_decay_rate([1.0, 0.0])


def test_gru_gradient_decays_with_distance_and_attention_does_not():
    grads = gradient_by_distance(seq_len=16, embed_dim=16, seeds=(0,))
    assert geometric_decay_rate(grads.rnn) < 0.8
    assert 0.9 < geometric_decay_rate(grads.attention[1:]) < 1.1
