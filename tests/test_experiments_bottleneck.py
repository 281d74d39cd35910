"""Tests of helpers.experiments.bottleneck (chapter 1) against the package's own reference loop,
closed forms and hand-built models whose answers are known."""

import math

import pytest
import torch
from torch import nn

from helpers.experiments import bottleneck as bn
from helpers.rnn import evaluate_seq2seq, gradient_by_distance
from helpers.tasks import FIRST_CONTENT_TOKEN, reverse_task

SMALL = dict(steps=12, batch_size=8, lr=1e-2, seed=3, num_eval=16)


@pytest.fixture(scope="module")
def small_sweep() -> bn.BottleneckResult:
    return bn.bottleneck_sweep([3, 5], [6, 8], curve_every=5, watch_length=4, watch_hidden=8, watch_every=4, **SMALL)


# --------------------------------------------------------------------------------------------
# bottleneck_sweep
# --------------------------------------------------------------------------------------------


def test_sweep_has_one_row_per_setting_and_is_deterministic(small_sweep):
    rows = small_sweep.rows
    assert [(r["hidden_dim"], r["attention"], r["seq_len"]) for r in rows] == [
        (h, a, n) for h in (6, 8) for a in (False, True) for n in (3, 5)
    ]
    assert all(0 <= r["sequence_accuracy"] <= r["token_accuracy"] <= 1 and r["train_seconds"] > 0 for r in rows)
    again = bn.bottleneck_sweep([3, 5], [6, 8], **SMALL)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "train_seconds"} for r in rows]  # noqa: E731
    assert strip(again.rows) == strip(rows)


def test_sweep_curve_ends_with_the_trained_models_accuracy(small_sweep):
    for (attention, hidden), curve in small_sweep.curves.items():
        assert curve["step"] == [0, 5, 10, 12]
        model = small_sweep.models[(attention, hidden)]
        final = evaluate_seq2seq(model, small_sweep.curve_length, num_samples=128, seed=SMALL["seed"] + 10_007 + 1)
        assert curve["token_accuracy"][-1] == pytest.approx(final["token_accuracy"])
        assert curve["sequence_accuracy"][-1] == pytest.approx(final["sequence_accuracy"])


def test_sweep_replay_captures_untrained_and_trained_alignments(small_sweep):
    result = small_sweep
    assert result.replay_steps == [0, 4, 8, 12]
    assert result.watch_src.shape == (1, 4) and result.watch_hidden == 8
    history = result.histories[(True, 8)]
    assert math.isnan(result.replay_losses[0])
    assert result.replay_losses[1:] == [history.loss[3], history.loss[7], history.loss[11]]
    for alignment in result.replay_alignments:
        assert alignment.shape == (4, 4)
        torch.testing.assert_close(alignment.sum(-1), torch.ones(4))
    model = result.models[(True, 8)].eval()
    with torch.no_grad():
        _, final = model(result.watch_src, result.watch_tgt)
    torch.testing.assert_close(result.replay_alignments[-1], final[0])
    assert not torch.allclose(result.replay_alignments[0], result.replay_alignments[-1])


def test_sweep_accessors_follow_the_rows(small_sweep):
    assert small_sweep.lengths == [3, 5] and small_sweep.hidden_sizes == [6, 8]
    row = next(r for r in small_sweep.rows if r["attention"] and r["hidden_dim"] == 6 and r["seq_len"] == 5)
    assert small_sweep.accuracy(True, 6)[1] == row["token_accuracy"]
    assert small_sweep.accuracy(True, 6, "sequence_accuracy")[1] == row["sequence_accuracy"]
    curves = small_sweep.by_hidden_size()
    assert list(curves) == ["6", "8"]
    assert list(curves["8"]) == [bn.MODEL_LABELS[False], bn.MODEL_LABELS[True]]
    with pytest.raises(KeyError):
        small_sweep.accuracy(True, 7)
    with pytest.raises(ValueError, match="metric"):
        small_sweep.accuracy(True, 6, "loss")


def test_sweep_rejects_bad_arguments():
    with pytest.raises(ValueError, match="train_lengths"):
        bn.bottleneck_sweep([], [8], steps=1)
    with pytest.raises(ValueError, match="task"):
        bn.bottleneck_sweep([3], [8], steps=1, task="shuffle")
    with pytest.raises(ValueError, match="watch_hidden"):
        bn.bottleneck_sweep([3], [8], steps=1, watch_length=3, watch_hidden=16)


# --------------------------------------------------------------------------------------------
# source_positions and alignment_mass
# --------------------------------------------------------------------------------------------


def test_source_positions_read_the_target_from_the_source():
    src = torch.tensor([[5, 3, 9, 3, 2], [4, 4, 7, 2, 8]])
    for task, target in (("copy", src), ("reverse", src.flip(1)), ("sort", src.sort(dim=1).values)):
        positions = bn.source_positions(task, src)
        assert torch.equal(src.gather(1, positions), target), task
    assert bn.source_positions("sort", src)[0].tolist() == [4, 1, 3, 0, 2]  # ties in source order
    with pytest.raises(ValueError, match="task"):
        bn.source_positions("shuffle", src)


def test_alignment_mass_is_one_for_the_perfect_alignment_and_one_over_s_for_uniform():
    length = 6
    positions = bn.source_positions("reverse", torch.zeros(1, length, dtype=torch.long))[0]
    perfect = torch.eye(length).flip(1)  # (T, S): the anti-diagonal
    assert bn.alignment_mass(perfect, positions) == pytest.approx(1.0)
    assert bn.alignment_mass(torch.eye(length), positions) == pytest.approx(0.0)
    uniform = torch.full((length, length), 1 / length)
    assert bn.alignment_mass(uniform, positions) == pytest.approx(1 / length)
    # window 1: three columns per row, two at the edges -> (2 + 3 * (L - 2) + 2) / (L * L)
    assert bn.alignment_mass(uniform, positions, window=1) == pytest.approx((4 + 3 * (length - 2)) / length**2)
    shifted = torch.roll(perfect, shifts=1, dims=1)  # one column to the right (wraps at the edge)
    assert bn.alignment_mass(shifted, positions) == pytest.approx(0.0)
    assert bn.alignment_mass(shifted, positions, window=1) == pytest.approx((length - 1) / length)


# --------------------------------------------------------------------------------------------
# occlusion_dependence
# --------------------------------------------------------------------------------------------


class PerfectReverser(nn.Module):
    """Logits that put (almost) all probability on the reversed source token."""

    vocab_size = 12

    def forward(self, src, tgt):
        return 30.0 * nn.functional.one_hot(src.flip(1), self.vocab_size).float(), None  # (B, T, V)


class SourceBlind(nn.Module):
    vocab_size = 12

    def forward(self, src, tgt):
        return nn.functional.one_hot(tgt, self.vocab_size).float()  # ignores src entirely


def test_occlusion_of_a_perfect_reverser_is_the_anti_diagonal():
    src, tgt = reverse_task(1, 7, 12, seed=0)
    dependence = bn.occlusion_dependence(PerfectReverser(), src, tgt)
    torch.testing.assert_close(dependence, torch.eye(7).flip(1), atol=1e-6, rtol=0)


def test_occlusion_of_a_model_that_ignores_the_source_is_zero():
    src, tgt = reverse_task(1, 5, 12, seed=1)
    torch.testing.assert_close(bn.occlusion_dependence(SourceBlind(), src, tgt), torch.zeros(5, 5))


def test_occlusion_replaces_every_token_by_another_content_token():
    # the largest content token wraps around to the first one: still a change, still a content token
    src = torch.tensor([[11, FIRST_CONTENT_TOKEN, 6]])
    dependence = bn.occlusion_dependence(PerfectReverser(), src, src.flip(1))
    assert torch.all(dependence.flip(1).diagonal() > 0.999)


def test_occlusion_rejects_a_batch():
    src, tgt = reverse_task(2, 4, 12, seed=0)
    with pytest.raises(ValueError, match="one sequence"):
        bn.occlusion_dependence(PerfectReverser(), src, tgt)


# --------------------------------------------------------------------------------------------
# geometric_decay_rate, and the chapter's claim about gradients by distance
# --------------------------------------------------------------------------------------------


def test_decay_rate_recovers_the_ratio_of_a_geometric_sequence():
    values = 3.0 * 0.6 ** torch.arange(10, dtype=torch.float64)
    assert bn.geometric_decay_rate(values) == pytest.approx(0.6, rel=1e-9)
    assert bn.geometric_decay_rate([5.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert bn.geometric_decay_rate([1.0, 0.25], distances=[0, 2]) == pytest.approx(0.5)
    assert bn.geometric_decay_rate([1.0, 0.0, 0.25], distances=[0, 1, 2]) == pytest.approx(0.5)  # zeros left out
    with pytest.raises(ValueError, match="two positive"):
        bn.geometric_decay_rate([1.0, 0.0])


def test_gru_gradient_decays_with_distance_and_attention_does_not():
    grads = gradient_by_distance(seq_len=16, dim=16, seeds=(0,))
    assert bn.geometric_decay_rate(grads.rnn) < 0.8
    assert 0.9 < bn.geometric_decay_rate(grads.attention[1:]) < 1.1


# --------------------------------------------------------------------------------------------
# operation_profile: matrix products and the longest chain of them
# --------------------------------------------------------------------------------------------


def test_profile_counts_a_chain_of_products_and_independent_products():
    x, w = torch.randn(3, 3), torch.randn(3, 3)

    def chain(x):
        for _ in range(5):
            x = torch.tanh(x @ w)
        return x

    profile = bn.operation_profile(chain, x)
    assert (profile.matmuls, profile.matmul_depth) == (5, 5)
    assert profile.op_names["aten.tanh"] == 5
    side_by_side = bn.operation_profile(lambda x: x @ w + (x * 2) @ w + x.T @ w, x)
    assert (side_by_side.matmuls, side_by_side.matmul_depth) == (3, 1)
    in_place = bn.operation_profile(lambda x: (x @ w).add_(1.0) @ w, x)
    assert in_place.matmul_depth == 2


def test_gru_chain_grows_with_length_and_attention_chain_does_not():
    rows = bn.operation_profiles([4, 8, 16], dim=8)
    assert [r["gru_depth"] for r in rows] == [4, 8, 16]  # step t waits for step t - 1
    assert rows[1]["gru_matmuls"] - rows[0]["gru_matmuls"] == 4  # one recurrent product per step
    assert rows[2]["gru_matmuls"] - rows[1]["gru_matmuls"] == 8
    assert {r["attention_depth"] for r in rows} == {4}  # projections, Q K^T, weights x V, output projection
    assert {r["attention_matmuls"] for r in rows} == {rows[0]["attention_matmuls"]}
    assert {r["attention_ops"] for r in rows} == {rows[0]["attention_ops"]}
