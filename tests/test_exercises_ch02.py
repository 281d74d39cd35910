"""Tests of helpers.exercises.ch02: each checker accepts the reference solution and names the mistake
in typical wrong answers, without raising."""

import math

import pytest
import torch

import helpers.scores as scores
from helpers.exercises import CheckResult, ch02
from helpers.experiments import score_cost, score_learning
from helpers.scores import cosine_scores, dot_scores, neg_euclidean_scores


def _stub(*args):
    raise NotImplementedError


def _rejects(result: CheckResult, *words: str) -> None:
    assert isinstance(result, CheckResult)
    assert not result.passed, result.message
    for word in words:
        assert word in result.message, (word, result.message)


# --------------------------------------------------------------------------------------------
# Exercise 1: dot-product scores
# --------------------------------------------------------------------------------------------


def test_dot_scores_accepts_one_batched_matmul():
    assert ch02.check_dot_scores(lambda q, k: q @ k.transpose(-2, -1)).passed
    assert ch02.check_dot_scores(lambda q, k: torch.matmul(q, k.mT)).passed
    assert ch02.check_dot_scores(lambda q, k: torch.einsum("...le,...se->...ls", q, k)).passed


def test_dot_scores_names_the_transpose_mistakes():
    _rejects(ch02.check_dot_scores(lambda q, k: q @ k.T), "transpose(-2, -1)")
    _rejects(ch02.check_dot_scores(lambda q, k: k @ q.transpose(-2, -1)), "K Qᵀ", "Rows must be queries")
    _rejects(ch02.check_dot_scores(lambda q, k: q @ k.transpose(2, 3)), "plain (L, E)")


def test_dot_scores_names_scale_and_batch_mistakes():
    _rejects(ch02.check_dot_scores(lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))), "√E")
    _rejects(ch02.check_dot_scores(lambda q, k: q @ k.flip(0).transpose(-2, -1)), "another batch element")
    _rejects(ch02.check_dot_scores(lambda q, k: (q * 2) @ k.transpose(-2, -1)), "largest error")


def test_dot_scores_reports_stubs_and_non_tensors_without_raising():
    _rejects(ch02.check_dot_scores(_stub), "stub")
    _rejects(ch02.check_dot_scores(lambda q, k: None), "returned None")
    _rejects(ch02.check_dot_scores(lambda q, k: (q @ k.transpose(-2, -1)).tolist()), "torch.Tensor")
    _rejects(ch02.check_dot_scores("q @ k.T"), "expected a function")


# --------------------------------------------------------------------------------------------
# Exercise 2: FLOPs of Q K^T
# --------------------------------------------------------------------------------------------


def test_dot_flops_accepts_both_counts():
    assert ch02.check_dot_flops(lambda L, S, E: 2 * L * S * E).passed
    assert ch02.check_dot_flops(lambda L, S, E: L * S * (2 * E - 1)).passed


def test_dot_flops_names_the_mistake():
    _rejects(ch02.check_dot_flops(lambda L, S, E: L * S * E), "multiplications only")
    _rejects(ch02.check_dot_flops(lambda L, S, E: L * S), "counts the scores")
    _rejects(ch02.check_dot_flops(lambda L, S, E: 2 * L * L * E), "L and S are different")
    _rejects(ch02.check_dot_flops(lambda L, S, E: 2 * L * S * E * E), "E²")
    _rejects(ch02.check_dot_flops(_stub), "stub")
    _rejects(ch02.check_dot_flops(lambda L, S, E: "2LSE"), "return a number")


# --------------------------------------------------------------------------------------------
# Exercise 3: Euclidean distance as a score
# --------------------------------------------------------------------------------------------


def test_euclidean_accepts_the_negated_squared_distance_and_softmax_equivalents():
    assert ch02.check_euclidean_scores(lambda q, k: -torch.cdist(q, k) ** 2).passed
    result = ch02.check_euclidean_scores(lambda q, k: 2 * q @ k.T - (k * k).sum(-1))
    assert result.passed and "constant for each query" in result.message


def test_euclidean_names_sign_square_and_blow_up():
    _rejects(ch02.check_euclidean_scores(lambda q, k: torch.cdist(q, k) ** 2), "sign", "FARTHEST")
    _rejects(ch02.check_euclidean_scores(lambda q, k: torch.cdist(q, k)), "sign")
    _rejects(ch02.check_euclidean_scores(lambda q, k: -torch.cdist(q, k)), "squared distances")
    _rejects(ch02.check_euclidean_scores(lambda q, k: 1 / torch.cdist(q, k)), "inf or NaN")
    _rejects(ch02.check_euclidean_scores(lambda q, k: -torch.cdist(k, q) ** 2), "(S, L)")
    _rejects(ch02.check_euclidean_scores(_stub), "stub")


# --------------------------------------------------------------------------------------------
# Exercise 4: vectorised cosine
# --------------------------------------------------------------------------------------------


def _cosine(q, k, eps=1e-8):
    q_unit = q / q.norm(dim=-1, keepdim=True).clamp_min(eps)
    k_unit = k / k.norm(dim=-1, keepdim=True).clamp_min(eps)
    return q_unit @ k_unit.transpose(-2, -1)


def test_looped_reference_equals_the_helper():
    q, k = torch.randn(4, 3), torch.randn(5, 3)
    q[1] = 0
    from helpers.scores import cosine_scores

    torch.testing.assert_close(ch02.looped_cosine_scores(q, k), cosine_scores(q, k))


def test_vectorised_cosine_accepts_the_vectorised_form():
    result = ch02.check_vectorised_cosine(_cosine)
    assert result.passed and "faster" in result.message


def test_vectorised_cosine_names_the_missing_normalisation():
    _rejects(ch02.check_vectorised_cosine(lambda q, k: q @ k.T), "plain dot products")
    _rejects(ch02.check_vectorised_cosine(lambda q, k: (q / q.norm(dim=-1, keepdim=True)) @ k.T),
             "normalised the queries but not the keys")
    _rejects(ch02.check_vectorised_cosine(lambda q, k: q @ (k / k.norm(dim=-1, keepdim=True)).T),
             "normalised the keys but not the queries")
    _rejects(ch02.check_vectorised_cosine(
        lambda q, k: (q @ k.T) / ((q * q).sum(-1, keepdim=True) * (k * k).sum(-1))), "squared norms")


def test_vectorised_cosine_names_nan_and_loops():
    unclamped = lambda q, k: (q / q.norm(dim=-1, keepdim=True)) @ (k / k.norm(dim=-1, keepdim=True)).T  # noqa: E731
    _rejects(ch02.check_vectorised_cosine(unclamped), "NaN", "clamp")
    _rejects(ch02.check_vectorised_cosine(ch02.looped_cosine_scores, speed_size=32), "still looping")
    _rejects(ch02.check_vectorised_cosine(lambda q, k: _cosine(k, q)), "(S, L)")


# --------------------------------------------------------------------------------------------
# Exercise 5: why additive is slower
# --------------------------------------------------------------------------------------------


def test_why_additive_accepts_b_in_any_spelling():
    for answer in ("b", "B", " (b) "):
        assert ch02.check_why_additive_is_slower(answer).passed


def test_why_additive_explains_each_wrong_option():
    _rejects(ch02.check_why_additive_is_slower("a"), "do not depend on L or S")
    _rejects(ch02.check_why_additive_is_slower("c"), "no Python loop")
    _rejects(ch02.check_why_additive_is_slower("d"), "(L, S, A) tensor")
    _rejects(ch02.check_why_additive_is_slower("?"), "one letter")
    _rejects(ch02.check_why_additive_is_slower(2), "one letter")
    assert set(ch02.ADDITIVE_OPTIONS) == {"a", "b", "c", "d"}


# --------------------------------------------------------------------------------------------
# Every checker rejects an answer that delegates to the package's own implementation
# --------------------------------------------------------------------------------------------


def test_checkers_reject_answers_that_call_the_package_and_name_the_function():
    # the answers use module-level names, as a lab's top-level cells do
    _rejects(ch02.check_dot_scores(lambda q, k: dot_scores(q, k)), "helpers.dot_scores", "yourself")
    _rejects(ch02.check_dot_scores(lambda q, k: scores.scaled_dot_scores(q, k) * math.sqrt(q.size(-1))),
             "scaled_dot_scores")
    _rejects(ch02.check_dot_flops(lambda L, S, E: score_cost.score_flops("dot", L, S, E)["flops"]), "score_flops")
    _rejects(ch02.check_euclidean_scores(lambda q, k: neg_euclidean_scores(q, k)), "neg_euclidean_scores")
    _rejects(ch02.check_euclidean_scores(lambda q, k: scores.neg_euclidean_scores(q, k)), "neg_euclidean_scores")
    _rejects(ch02.check_vectorised_cosine(lambda q, k: cosine_scores(q, k)), "cosine_scores")
    _rejects(ch02.check_cosine_bound(lambda S: score_learning.cosine_weight_bound(S)), "cosine_weight_bound")
    # the package is restored afterwards
    assert ch02.check_dot_scores(lambda q, k: q @ k.transpose(-2, -1)).passed
    torch.testing.assert_close(dot_scores(torch.eye(2), torch.eye(2)), torch.eye(2))


# --------------------------------------------------------------------------------------------
# Exercise 6: the cosine's bound, predicted
# --------------------------------------------------------------------------------------------


def test_cosine_bound_accepts_the_closed_form_and_names_the_mistakes():
    e = math.e
    assert ch02.check_cosine_bound(lambda S: e / (e + (S - 1) / e)).passed
    assert ch02.check_cosine_bound(lambda S: torch.tensor(e * e / (e * e + S - 1))).passed
    _rejects(ch02.check_cosine_bound(lambda S: e / (e + S - 1)), "perpendicular", "−1")
    _rejects(ch02.check_cosine_bound(lambda S: e / (e + S / e)), "S − 1 others")
    _rejects(ch02.check_cosine_bound(lambda S: 1.0), "does not get all the weight")
    _rejects(ch02.check_cosine_bound(lambda S: 1 / S), "equal scores")
    _rejects(ch02.check_cosine_bound(lambda S: "24%"), "return a number")
    _rejects(ch02.check_cosine_bound(_stub), "stub")


# --------------------------------------------------------------------------------------------
# Exercise 7: the temperature ablation, designed
# --------------------------------------------------------------------------------------------


def test_temperature_ablation_rejects_designs_that_cannot_answer_without_training():
    from dataclasses import replace

    plain = score_learning.score_config("cosine")
    _rejects(ch02.check_temperature_ablation(None), "RecallConfig")
    _rejects(ch02.check_temperature_ablation(plain), "plain-cosine run")
    _rejects(ch02.check_temperature_ablation(score_learning.score_config("dot")), "keep it")
    _rejects(ch02.check_temperature_ablation(score_learning.score_config("cosine_learned_scale")), "Fix the factor")
    _rejects(ch02.check_temperature_ablation(replace(plain, scale=4.0, steps=400)), "changes steps")
    _rejects(ch02.check_temperature_ablation(replace(plain, num_pairs=4)), "changes num_pairs")
    _rejects(ch02.check_temperature_ablation(replace(plain, scale=2.0)), "70.4%", "too low")


@pytest.mark.slow
def test_temperature_ablation_trains_a_clean_design_and_accepts_it_when_it_learns():
    from dataclasses import replace

    result = ch02.check_temperature_ablation(replace(score_learning.score_config("cosine"), scale=4.0))
    assert result.passed, result.message
