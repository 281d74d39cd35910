"""Tests of helpers.experiments.alignments (chapter 1): alignment scores against closed forms, and
occlusion against hand-built models whose dependence is known."""

import pytest
import torch
from torch import nn

from helpers.experiments.alignments import alignment_mass, occlusion_dependence, source_positions
from helpers.tasks import FIRST_CONTENT_TOKEN, reverse_task


def test_source_positions_read_the_target_from_the_source():
    src = torch.tensor([[5, 3, 9, 3, 2], [4, 4, 7, 2, 8]])
    for task, target in (("copy", src), ("reverse", src.flip(1)), ("sort", src.sort(dim=1).values)):
        positions = source_positions(task, src)
        assert torch.equal(src.gather(1, positions), target), task
    assert source_positions("sort", src)[0].tolist() == [4, 1, 3, 0, 2]  # ties in source order
    with pytest.raises(ValueError, match="task"):
        source_positions("shuffle", src)


def test_alignment_mass_is_one_for_the_perfect_alignment_and_one_over_s_for_uniform():
    length = 6
    positions = source_positions("reverse", torch.zeros(1, length, dtype=torch.long))[0]
    perfect = torch.eye(length).flip(1)  # (T, S): the anti-diagonal
    assert alignment_mass(perfect, positions) == pytest.approx(1.0)
    assert alignment_mass(torch.eye(length), positions) == pytest.approx(0.0)
    uniform = torch.full((length, length), 1 / length)
    assert alignment_mass(uniform, positions) == pytest.approx(1 / length)
    # window 1: three columns per row, two at the edges -> (2 + 3 * (L - 2) + 2) / (L * L)
    assert alignment_mass(uniform, positions, window=1) == pytest.approx((4 + 3 * (length - 2)) / length**2)
    shifted = torch.roll(perfect, shifts=1, dims=1)  # one column to the right (wraps at the edge)
    assert alignment_mass(shifted, positions) == pytest.approx(0.0)
    assert alignment_mass(shifted, positions, window=1) == pytest.approx((length - 1) / length)


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
    dependence = occlusion_dependence(PerfectReverser(), src, tgt)
    torch.testing.assert_close(dependence, torch.eye(7).flip(1), atol=1e-6, rtol=0)


def test_occlusion_of_a_model_that_ignores_the_source_is_zero():
    src, tgt = reverse_task(1, 5, 12, seed=1)
    torch.testing.assert_close(occlusion_dependence(SourceBlind(), src, tgt), torch.zeros(5, 5))


def test_occlusion_replaces_every_token_by_another_content_token():
    # the largest content token wraps around to the first one: still a change, still a content token
    src = torch.tensor([[11, FIRST_CONTENT_TOKEN, 6]])
    dependence = occlusion_dependence(PerfectReverser(), src, src.flip(1))
    assert torch.all(dependence.flip(1).diagonal() > 0.999)


def test_occlusion_rejects_a_batch():
    src, tgt = reverse_task(2, 4, 12, seed=0)
    with pytest.raises(ValueError, match="one sequence"):
        occlusion_dependence(PerfectReverser(), src, tgt)


class EchoPrevious(nn.Module):
    """Outputs the previous decoder input: under teacher forcing it echoes tgt, under greedy decoding
    its own previous output; its first output is the first source token."""

    vocab_size = 12

    def forward(self, src, tgt=None, *, max_new_tokens=None):
        steps = tgt.shape[1] if tgt is not None else max_new_tokens
        tokens, previous = [], src[:, 0]
        for i in range(steps):
            token = src[:, 0] if i == 0 else (tgt[:, i - 1] if tgt is not None else previous)
            tokens.append(token)
            previous = token
        return 30.0 * nn.functional.one_hot(torch.stack(tokens, 1), self.vocab_size).float(), None  # (B, T, V)


def test_greedy_occlusion_follows_the_models_own_outputs_and_teacher_forcing_does_not():
    src, tgt = reverse_task(1, 5, 12, seed=2)
    # teacher-forced: the outputs after step 0 read tgt, whatever the source: only (0, 0) changes
    forced = occlusion_dependence(EchoPrevious(), src, tgt)
    expected = torch.zeros(5, 5)
    expected[0, 0] = 1.0
    torch.testing.assert_close(forced, expected, atol=1e-6, rtol=0)
    # greedy: the model reads its own outputs, so replacing source token 0 changes every output
    greedy = occlusion_dependence(EchoPrevious(), src, tgt, decoding="greedy")
    expected[:, 0] = 1.0
    torch.testing.assert_close(greedy, expected, atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="decoding"):
        occlusion_dependence(EchoPrevious(), src, tgt, decoding="beam")


def test_matched_teacher_forcing_reads_the_target_of_each_occluded_source():
    src, tgt = reverse_task(1, 5, 12, seed=2)
    # step i >= 1 echoes the matched target's token i - 1, the occluded source's token 4 - (i - 1) = 5 - i;
    # step 0 echoes source token 0: one change per output, on the source token it reads
    matched = occlusion_dependence(EchoPrevious(), src, tgt, decoding="teacher_forced_matched",
                                   target_of=lambda s: s.flip(1))
    expected = torch.zeros(5, 5)
    expected[0, 0] = 1.0
    for i in range(1, 5):
        expected[i, 5 - i] = 1.0
    torch.testing.assert_close(matched, expected, atol=1e-6, rtol=0)


def test_matched_teacher_forcing_needs_the_tasks_target_and_only_it():
    src, tgt = reverse_task(1, 5, 12, seed=2)
    with pytest.raises(ValueError, match="target_of is needed"):
        occlusion_dependence(EchoPrevious(), src, tgt, decoding="teacher_forced_matched")
    with pytest.raises(ValueError, match="target_of is needed"):
        occlusion_dependence(EchoPrevious(), src, tgt, target_of=lambda s: s.flip(1))
    with pytest.raises(ValueError, match="must equal tgt"):
        occlusion_dependence(EchoPrevious(), src, tgt, decoding="teacher_forced_matched", target_of=lambda s: s)


# --------------------------------------------------------------------------------------------
# alignment_by_length
# --------------------------------------------------------------------------------------------


class FixedAttention(nn.Module):
    """Greedy 'decoding' whose alignment is the exact reversal (or uniform), to test the scoring."""

    vocab_size = 12

    def __init__(self, perfect: bool) -> None:
        super().__init__()
        self.perfect = perfect

    def forward(self, src, tgt=None, *, max_new_tokens=None):
        batch, length = src.shape
        if self.perfect:
            alignment = torch.eye(length).flip(1).expand(batch, length, length)
        else:
            alignment = torch.full((batch, max_new_tokens, length), 1.0 / length)
        return torch.zeros(batch, max_new_tokens, self.vocab_size), alignment


def test_alignment_by_length_is_one_for_a_perfect_reverser_and_falls_for_uniform_weights():
    from helpers.experiments.alignments import alignment_by_length

    assert alignment_by_length(FixedAttention(True), [3, 6, 9], num_samples=4) == pytest.approx([1.0, 1.0, 1.0])
    uniform = alignment_by_length(FixedAttention(False), [4, 8], num_samples=4, window=0)
    assert uniform == pytest.approx([1 / 4, 1 / 8])
    with pytest.raises(ValueError, match="lengths"):
        alignment_by_length(FixedAttention(True), [], num_samples=4)


def test_uniform_alignment_mass_is_what_uniform_weights_score_and_three_over_s_inside():
    from helpers.experiments.alignments import alignment_by_length, uniform_alignment_mass

    assert uniform_alignment_mass(8) == pytest.approx(1 / 8)
    assert uniform_alignment_mass(5, window=1) == pytest.approx(13 / 25)  # 3 positions, 2 at each end
    assert uniform_alignment_mass(1, window=3) == pytest.approx(1.0)
    measured = alignment_by_length(FixedAttention(False), [4, 9], num_samples=3, window=1)
    assert measured == pytest.approx([uniform_alignment_mass(4, window=1), uniform_alignment_mass(9, window=1)])
    with pytest.raises(ValueError, match="length"):
        uniform_alignment_mass(0)


def test_alignment_by_length_teacher_forced_reads_the_true_target():
    from helpers.experiments.alignments import alignment_by_length

    calls = []

    class Recorder(FixedAttention):
        def forward(self, src, tgt=None, *, max_new_tokens=None):
            calls.append(tgt is not None and max_new_tokens is None)
            return super().forward(src, tgt, max_new_tokens=src.shape[1])

    masses = alignment_by_length(Recorder(True), [3, 5], num_samples=2, decoding="teacher_forced")
    assert masses == pytest.approx([1, 1])
    assert calls == [True, True]
    with pytest.raises(ValueError, match="decoding"):
        alignment_by_length(Recorder(True), [3], num_samples=2, decoding="beam")
