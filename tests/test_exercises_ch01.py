"""Tests of helpers.exercises.ch01: each checker accepts the reference solution and names the mistake
in typical wrong answers, without raising."""


import pytest
import torch

from helpers.exercises import CheckResult, ch01
from helpers.experiments.bottleneck import BottleneckResult


def _stub(*args):
    raise NotImplementedError


def _rejects(result: CheckResult, *words: str) -> None:
    assert isinstance(result, CheckResult)
    assert not result.passed, result.message
    for word in words:
        assert word in result.message, (word, result.message)


# --------------------------------------------------------------------------------------------
# Exercise 1: additive scores
# --------------------------------------------------------------------------------------------


def additive_solution(query, keys, w_q, w_k, v):
    features = torch.tanh((query @ w_q.T)[:, None, :] + keys @ w_k.T)  # (B, 1, A) + (B, S, A) -> (B, S, A)
    return features @ v  # (B, S)


def test_additive_scores_accepts_the_reference_solution_and_einsum():
    assert ch01.check_additive_scores(additive_solution).passed
    einsum = lambda q, k, wq, wk, v: torch.einsum(  # noqa: E731
        "bsa,a->bs", torch.tanh(torch.einsum("ae,be->ba", wq, q)[:, None] + torch.einsum("af,bsf->bsa", wk, k)), v)
    assert ch01.check_additive_scores(einsum).passed


def test_additive_scores_names_the_missing_tanh_and_the_missing_v():
    _rejects(ch01.check_additive_scores(lambda q, k, wq, wk, v: ((q @ wq.T)[:, None] + k @ wk.T) @ v),
             "left out the tanh", "cancels in the softmax")
    _rejects(ch01.check_additive_scores(lambda q, k, wq, wk, v: torch.tanh((q @ wq.T)[:, None] + k @ wk.T)),
             "(B, S, A)", "dot product with v")


def test_additive_scores_names_softmax_sign_and_separate_tanh():
    _rejects(ch01.check_additive_scores(lambda *a: torch.softmax(additive_solution(*a), -1)), "softmax was applied")
    _rejects(ch01.check_additive_scores(lambda *a: -additive_solution(*a)), "wrong sign")
    _rejects(ch01.check_additive_scores(
        lambda q, k, wq, wk, v: (torch.tanh(q @ wq.T)[:, None] + torch.tanh(k @ wk.T)) @ v), "separately")
    _rejects(ch01.check_additive_scores(lambda q, k, wq, wk, v: torch.tanh(k @ wk.T) @ v), "ignore the decoder state")


def test_additive_scores_reports_transposed_weights_stubs_and_bad_returns():
    _rejects(ch01.check_additive_scores(lambda q, k, wq, wk, v: torch.tanh((q @ wq)[:, None] + k @ wk) @ v),
             "raised", "query @ w_q.T")
    _rejects(ch01.check_additive_scores(_stub), "stub")
    _rejects(ch01.check_additive_scores(lambda *a: None), "returned None")
    _rejects(ch01.check_additive_scores(lambda *a: additive_solution(*a)[..., None]), "shape", "(B, S)")
    _rejects(ch01.check_additive_scores(additive_solution(*ch01._additive_inputs())), "expected a function")


# --------------------------------------------------------------------------------------------
# Exercise 2: masked softmax over padding
# --------------------------------------------------------------------------------------------


def masked_solution(scores, lengths):
    real = torch.arange(scores.shape[-1])[None, :] < lengths[:, None]  # (B, S)
    weights = torch.softmax(scores.masked_fill(~real, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)


def test_masked_softmax_accepts_the_reference_solution_and_finfo_min():
    assert ch01.check_masked_softmax(masked_solution).passed

    def finfo_min(scores, lengths):
        real = torch.arange(scores.shape[-1])[None, :] < lengths[:, None]
        weights = torch.softmax(scores.masked_fill(~real, torch.finfo(scores.dtype).min), dim=-1)
        return weights * real.any(-1, keepdim=True)  # an empty row: zeros

    assert ch01.check_masked_softmax(finfo_min).passed


def test_masked_softmax_names_the_ignored_and_the_inverted_mask():
    _rejects(ch01.check_masked_softmax(lambda s, n: torch.softmax(s, -1)), "padded positions still get weight")

    def inverted(scores, lengths):
        real = torch.arange(scores.shape[-1])[None, :] < lengths[:, None]
        return torch.nan_to_num(torch.softmax(scores.masked_fill(real, float("-inf")), -1))

    _rejects(ch01.check_masked_softmax(inverted), "inverted")


def test_masked_softmax_names_masking_after_softmax_wrong_axis_and_off_by_one():
    def after(scores, lengths):
        return torch.softmax(scores, -1) * (torch.arange(scores.shape[-1])[None, :] < lengths[:, None])

    _rejects(ch01.check_masked_softmax(after), "after the softmax", "sum to 1")

    def wrong_axis(scores, lengths):
        real = torch.arange(scores.shape[-1])[None, :] < lengths[:, None]
        return torch.nan_to_num(torch.softmax(scores.masked_fill(~real, float("-inf")), dim=0))

    _rejects(ch01.check_masked_softmax(wrong_axis), "batch axis")

    def one_more(scores, lengths):
        real = torch.arange(scores.shape[-1])[None, :] <= lengths[:, None]
        return torch.softmax(scores.masked_fill(~real, float("-inf")), -1)

    _rejects(ch01.check_masked_softmax(one_more), "off by one")


def test_masked_softmax_names_the_nan_of_an_empty_sequence():
    def no_guard(scores, lengths):
        real = torch.arange(scores.shape[-1])[None, :] < lengths[:, None]
        return torch.softmax(scores.masked_fill(~real, float("-inf")), -1)

    _rejects(ch01.check_masked_softmax(no_guard), "length 0", "NaN")
    _rejects(ch01.check_masked_softmax(_stub), "stub")


# --------------------------------------------------------------------------------------------
# Exercise 3: the breaking length, read off a sweep
# --------------------------------------------------------------------------------------------


def _sweep() -> BottleneckResult:
    """A hand-written sweep: the numbers a real one gives, without the training."""
    accuracy = {  # (attention, H) -> token accuracy at lengths 5, 10, 15, 20
        (False, 16): [0.81, 0.43, 0.32, 0.23], (True, 16): [0.99, 0.99, 0.72, 0.45],
        (False, 64): [0.95, 0.65, 0.45, 0.33], (True, 64): [1.0, 0.97, 0.96, 0.94],
    }
    sequence = {(False, 16): [0.56, 0.02, 0.0, 0.0], (True, 16): [0.96, 0.9, 0.3, 0.0],
                (False, 64): [0.45, 0.12, 0.0, 0.0], (True, 64): [0.98, 0.93, 0.91, 0.83]}
    rows = [{"attention": a, "hidden_size": h, "seq_len": n, "token_accuracy": accuracy[(a, h)][i],
             "sequence_accuracy": sequence[(a, h)][i], "train_seconds": 1.0}
            for h in (16, 64) for a in (False, True) for i, n in enumerate([5, 10, 15, 20])]
    return BottleneckResult(rows=rows, curve_length=20, curves={}, histories={}, models={})


def test_breaking_length_accepts_the_first_length_below_half():
    sweep = _sweep()
    assert ch01.check_breaking_length(10, sweep, 16).passed
    assert ch01.check_breaking_length(15, sweep, 64).passed
    assert ch01.check_breaking_length(15.0, sweep, 64).passed
    assert ch01.check_breaking_length(20, sweep, 16, threshold=0.3).passed


def test_breaking_length_names_the_wrong_curve_and_the_wrong_metric():
    sweep = _sweep()
    _rejects(ch01.check_breaking_length(20, sweep, 16), "*with* attention")
    _rejects(ch01.check_breaking_length(5, sweep, 64), "whole-sequence accuracy")
    _rejects(ch01.check_breaking_length(10, sweep, 64), "still 0.65", "last length that works")
    _rejects(ch01.check_breaking_length(None, sweep, 16), "not quite")


def test_breaking_length_names_the_other_hidden_size_and_bad_answers():
    sweep = _sweep()
    _rejects(ch01.check_breaking_length(20, sweep, 16, threshold=0.4), "H = 64")
    _rejects(ch01.check_breaking_length(..., sweep, 16), "replace the ...")
    _rejects(ch01.check_breaking_length(12, sweep, 16), "not one of the evaluated lengths")
    _rejects(ch01.check_breaking_length("ten", sweep, 16), "an int")
    _rejects(ch01.check_breaking_length(10, sweep, 32), "hidden_size=32")


# --------------------------------------------------------------------------------------------
# Exercise 4: name the task from its alignment
# --------------------------------------------------------------------------------------------


def test_task_names_accepts_the_right_names_in_any_spelling():
    assert ch01.check_task_names({"A": "sort", "B": "copy", "C": "reverse"}).passed
    assert ch01.check_task_names({"a": " Sort", "b": "COPY", "c": "reverse "}).passed


def test_task_names_explains_each_kind_of_mix_up():
    _rejects(ch01.check_task_names({"A": "sort", "B": "reverse", "C": "copy"}), "top-left to bottom-right")
    _rejects(ch01.check_task_names({"A": "copy", "B": "sort", "C": "reverse"}), "A is not a straight line",
             "B is a straight line")
    _rejects(ch01.check_task_names({"A": "sort", "B": "copy"}), "missing ['C']")
    _rejects(ch01.check_task_names({"A": "sort", "B": "copy", "C": "shuffle"}), "one of")
    _rejects(ch01.check_task_names("A sort"), "dict")
    _rejects(ch01.check_task_names({"A": ..., "B": ..., "C": ...}), "replace each ...")


@pytest.mark.slow
def test_mystery_alignments_follow_their_tasks():
    from helpers.experiments.alignments import alignment_mass, source_positions

    mystery = ch01.mystery_alignments(steps=150)
    sources = [src for src, _ in mystery.values()]
    assert all(torch.equal(src, sources[0]) for src in sources) and len(set(sources[0].tolist())) == 8
    for label, task in ch01._MYSTERY_TASKS.items():
        src, alignment = mystery[label]
        assert alignment.shape == (8, 8)
        torch.testing.assert_close(alignment.sum(-1), torch.ones(8))
        own = alignment_mass(alignment, source_positions(task, src[None])[0], window=1)
        others = [alignment_mass(alignment, source_positions(t, src[None])[0], window=1)
                  for t in ("copy", "reverse", "sort") if t != task]
        assert own > max(others), (label, task, own, others)


# --------------------------------------------------------------------------------------------
# Exercises 1 and 2 are from scratch: an answer that calls the package's own version is rejected
# --------------------------------------------------------------------------------------------

import helpers.attention  # noqa: E402
from helpers.attention import masked_softmax  # noqa: E402
from helpers.scores import AdditiveAttention, additive_scores  # noqa: E402


def test_additive_scores_rejects_an_answer_that_calls_the_package_by_name():
    def delegating(query, keys, w_q, w_k, v):  # the notebook's `from helpers.scores import additive_scores`
        return additive_scores(query[:, None, :], keys, w_q, w_k, v)[:, 0, :]

    _rejects(ch01.check_additive_scores(delegating), "additive_scores", "yourself")

    def through_the_module(query, keys, w_q, w_k, v):
        return helpers.scores.additive_scores(query[:, None, :], keys, w_q, w_k, v)[:, 0, :]

    _rejects(ch01.check_additive_scores(through_the_module), "additive_scores", "yourself")

    def through_the_layer(query, keys, w_q, w_k, v):
        layer = AdditiveAttention(w_q.shape[1], w_k.shape[1], w_q.shape[0]).double()
        with torch.no_grad():
            layer.query_proj.weight.copy_(w_q)
            layer.key_proj.weight.copy_(w_k)
            layer.score_vector.copy_(v)
        return layer(query[:, None, :], keys, keys)[1][:, 0]  # weights, not scores, but it must not get that far

    _rejects(ch01.check_additive_scores(through_the_layer), "AdditiveAttention", "yourself")
    # the package is restored afterwards, and the honest answer still passes
    assert helpers.scores.additive_scores is additive_scores
    assert ch01.check_additive_scores(additive_solution).passed


def test_masked_softmax_rejects_an_answer_that_calls_the_package_by_name():
    def delegating(scores, lengths):
        return masked_softmax(scores, torch.arange(scores.shape[-1])[None, :] < lengths[:, None])

    _rejects(ch01.check_masked_softmax(delegating), "masked_softmax", "yourself")
    assert masked_softmax is helpers.attention.masked_softmax
    assert ch01.check_masked_softmax(masked_solution).passed


def test_masked_softmax_hint_agrees_with_chapter_0_on_empty_rows():
    def finfo_only(scores, lengths):  # a large negative score instead of -inf, and nothing more
        real = torch.arange(scores.shape[-1])[None, :] < lengths[:, None]
        return torch.softmax(scores.masked_fill(~real, torch.finfo(scores.dtype).min), dim=-1)

    _rejects(ch01.check_masked_softmax(finfo_only), "all-zero", "uniform weights over the padding", "chapter 0")
    _rejects(ch01.check_masked_softmax(lambda s, n: torch.softmax(s, -1)), "-inf", "chapter 0")


# --------------------------------------------------------------------------------------------
# Exercise 5: a prediction about the gradient by distance
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def grads():
    from helpers.experiments.gradient_paths import gradient_by_distance

    return gradient_by_distance(seq_len=32, embed_dim=32)


def test_gradient_prediction_accepts_what_the_run_measures(grads):
    result = ch01.check_gradient_prediction({"gru": "falls", "attention": "flat", "gru_ratio": ">1000"}, grads)
    assert result.passed, result.message
    assert "measured" in result.message


def test_gradient_prediction_names_the_wrong_part(grads):
    _rejects(ch01.check_gradient_prediction({"gru": "flat", "attention": "flat", "gru_ratio": ">1000"}, grads),
             "gru", "Jacobian")
    _rejects(ch01.check_gradient_prediction({"gru": "falls", "attention": "falls", "gru_ratio": ">1000"}, grads),
             "attention", "one weighted sum")
    _rejects(ch01.check_gradient_prediction({"gru": "falls", "attention": "flat", "gru_ratio": "<10"}, grads),
             "gru_ratio", "compounds")
    _rejects(ch01.check_gradient_prediction({"gru": ..., "attention": ..., "gru_ratio": ...}, grads), "replace")
    _rejects(ch01.check_gradient_prediction({"gru": "down"}, grads), "lacks")
    _rejects(ch01.check_gradient_prediction({"gru": "down", "attention": "flat", "gru_ratio": "<10"}, grads),
             "must be one of")
    _rejects(ch01.check_gradient_prediction({"gru": "falls", "attention": "flat", "gru_ratio": ">1000"}, None),
             "could not read")


# --------------------------------------------------------------------------------------------
# Exercise 6: the design of a control experiment
# --------------------------------------------------------------------------------------------


def _matched_plain_hidden(attention_hidden):
    target = ch01.parameter_count(attention_hidden, attention=True)
    return next(h for h in range(attention_hidden, 4 * attention_hidden)
                if ch01.parameter_count(h, attention=False) >= target)


def test_control_design_accepts_a_parameter_matched_design():
    plain = _matched_plain_hidden(16)
    assert plain > 16
    design = dict(attention_hidden=16, plain_hidden=plain, seeds=[0, 1, 2], lengths=range(4, 17), steps=300)
    result = ch01.check_control_design(design)
    assert result.passed, result.message


def test_control_design_names_what_makes_it_unfair_or_weak():
    plain = _matched_plain_hidden(16)
    good = dict(attention_hidden=16, plain_hidden=plain, seeds=[0, 1, 2], lengths=range(4, 17), steps=300)
    _rejects(ch01.check_control_design(dict(good, plain_hidden=16)), "same hidden size")
    _rejects(ch01.check_control_design(dict(good, plain_hidden=plain - 1)), "fewer parameters")
    _rejects(ch01.check_control_design(dict(good, plain_hidden=4 * plain)), "1.5 times")
    _rejects(ch01.check_control_design(dict(good, seeds=[0])), "at least 3 seeds")
    _rejects(ch01.check_control_design(dict(good, lengths=[20])), "at least 3 distinct")
    _rejects(ch01.check_control_design(dict(good, steps=...)), "replace")
    _rejects(ch01.check_control_design(dict(good, steps=0)), "positive int")
    _rejects(ch01.check_control_design({"seeds": [0, 1, 2]}), "lacks")
    _rejects(ch01.check_control_design([16, 20]), "dict")
