"""Tests of helpers.exercises.ch01: each checker accepts the reference solution (and honest answers in
another style) and names the mistake in typical wrong answers, without raising; answers that delegate
to the package (by any route), fabricated results and predictions made after the fact are refused."""

import copy

import pytest
import torch

from exercise_routes import delegating_routes
from helpers.exercises import CheckResult, ch01
from helpers.exercises.bottleneck import additive, breaking_length, task_names
from helpers.exercises.bottleneck import masked_softmax as masked_softmax_module
from helpers.exercises.cases import Case
from helpers.exercises.predictions import _forget as forget
from helpers.exercises.predictions import predict
from helpers.experiments.bottleneck import BottleneckResult
from helpers.experiments.mystery_alignments import TASKS


@pytest.fixture(autouse=True)
def _no_predictions():
    forget()
    yield
    forget()


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


def test_additive_scores_accepts_the_reference_solution_einsum_and_loops():
    assert ch01.check_additive_scores(additive_solution).passed
    einsum = lambda q, k, wq, wk, v: torch.einsum(  # noqa: E731
        "bsa,a->bs", torch.tanh(torch.einsum("ae,be->ba", wq, q)[:, None] + torch.einsum("af,bsf->bsa", wk, k)), v)
    assert ch01.check_additive_scores(einsum).passed

    def loops(query, keys, w_q, w_k, v):
        return torch.stack([torch.stack([torch.dot(v, torch.tanh(w_q @ query[b] + w_k @ keys[b, j]))
                                         for j in range(keys.shape[1])]) for b in range(keys.shape[0])])

    assert ch01.check_additive_scores(loops).passed


def test_additive_scores_draws_fresh_inputs_and_refuses_a_table_of_answers():
    seen = []
    for _ in range(4):
        ch01.check_additive_scores(lambda *inputs: seen.append(tuple(inputs[1].shape)) or additive_solution(*inputs))
    assert len(set(seen)) > 2  # named sizes, and a fresh one at every call
    fixed = additive.additive_inputs(Case("fixed", additive.CASES[0][1], torch.Generator().manual_seed(0)))
    table = additive_solution(*fixed)  # the answer for inputs seen once
    _rejects(ch01.check_additive_scores(lambda *a: table), "shape")
    answers = []

    def memorised(*inputs):  # right once, then the same tensor whatever it is given
        if not answers:
            answers.append(additive_solution(*inputs))
        return answers[0]

    _rejects(ch01.check_additive_scores(memorised), "same scores for two different sets of inputs")


def _additive_through(f, q, k, wq, wk, v):
    return f(q[:, None, :], k, wq, wk, v)[:, 0, :]


@pytest.mark.parametrize("route", ["default argument", "closure", "partial", "dict"])
def test_additive_scores_refuses_every_route_to_the_package(route):
    answer = delegating_routes(additive_scores, _additive_through)[route]
    _rejects(ch01.check_additive_scores(answer), "helpers.additive_scores", "yourself")
    assert ch01.check_additive_scores(additive_solution).passed


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
    inputs = additive.additive_inputs(Case("fixed", additive.CASES[2][1], torch.Generator().manual_seed(0)))
    _rejects(ch01.check_additive_scores(additive_solution(*inputs)), "expected a function")
    # the query's weight applied to the keys and the other way round: the sizes differ, so it cannot multiply
    _rejects(ch01.check_additive_scores(lambda q, k, wq, wk, v: torch.tanh((q @ wk.T)[:, None] + k @ wq.T) @ v),
             "raised", "query @ w_q.T")


# --------------------------------------------------------------------------------------------
# Exercise 2: masked softmax over padding
# --------------------------------------------------------------------------------------------


def masked_solution(scores, lengths):
    real = torch.arange(scores.shape[-1])[None, :] < lengths[:, None]  # (B, S)
    weights = torch.softmax(scores.masked_fill(~real, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)


def test_masked_softmax_accepts_the_reference_solution_finfo_min_and_loops():
    assert ch01.check_masked_softmax(masked_solution).passed

    def loops(scores, lengths):  # one row at a time, with the maximum subtracted by hand
        out = torch.zeros_like(scores)
        for b in range(scores.shape[0]):
            n = int(lengths[b])
            if n:
                e = torch.exp(scores[b, :n] - scores[b, :n].max())
                out[b, :n] = e / e.sum()
        return out

    assert ch01.check_masked_softmax(loops).passed

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


def _real(scores, lengths):
    return torch.arange(scores.shape[-1])[None, :] < lengths[:, None]


def test_masked_softmax_refuses_a_finite_fill_that_leaves_the_padding_a_tiny_weight():
    def fill_30(scores, lengths):
        real = _real(scores, lengths)
        return torch.softmax(scores.masked_fill(~real, -30.0), dim=-1) * real.any(-1, keepdim=True)

    _rejects(ch01.check_masked_softmax(fill_30), "tiny, but not 0", "-inf")


def test_masked_softmax_names_a_softmax_without_the_maximum_subtracted():
    def naive(scores, lengths):  # exp(1000) = inf, and inf / inf = NaN
        e = torch.exp(scores.masked_fill(~_real(scores, lengths), float("-inf")))
        return torch.nan_to_num(e / e.sum(-1, keepdim=True))

    _rejects(ch01.check_masked_softmax(naive), "overflows to inf", "Subtract each row's largest")

    def naive_with_nan(scores, lengths):
        e = torch.exp(scores.masked_fill(~_real(scores, lengths), float("-inf")))
        return e / e.sum(-1, keepdim=True)

    _rejects(ch01.check_masked_softmax(naive_with_nan), "overflows to inf")


def test_masked_softmax_names_a_renormalisation_after_the_softmax():
    def renormalised(scores, lengths):  # right on paper; the padded +1000 takes all the weight first
        w = torch.softmax(scores, -1) * _real(scores, lengths)
        return torch.nan_to_num(w / w.sum(-1, keepdim=True))

    _rejects(ch01.check_masked_softmax(renormalised), "a padded position holds the largest score", "before the softmax")


def test_masked_softmax_draws_fresh_inputs_with_large_scores():
    seen = []
    for _ in range(4):
        ch01.check_masked_softmax(lambda s, n: seen.append(tuple(s.shape)) or masked_solution(s, n))
    assert len(set(seen)) > 3  # named sizes, and a fresh one at every call
    case = lambda kind: Case(kind, dict(kind=kind, batch=6, width=8), torch.Generator().manual_seed(5))  # noqa: E731
    scores, lengths = masked_softmax_module.padded_inputs(case("large"))
    real = _real(scores, lengths)
    assert (scores[real] == ch01.LARGE_SCORE).any() and (scores[real] == -ch01.LARGE_SCORE).any()
    assert (scores[~real] == ch01.LARGE_SCORE).all() and (lengths == scores.shape[1]).any() and (lengths == 1).any()
    assert (masked_softmax_module.padded_inputs(case("empty"))[1] == 0).sum() == 1


@pytest.mark.parametrize("route", ["default argument", "closure", "partial", "dict"])
def test_masked_softmax_refuses_every_route_to_the_package(route):
    answer = delegating_routes(masked_softmax, lambda f, s, n: f(s, _real(s, n)))[route]
    _rejects(ch01.check_masked_softmax(answer), "masked_softmax", "yourself")


def test_masked_softmax_refuses_a_delegation_made_only_for_the_empty_sequence():
    def sly(scores, lengths):  # honest, except where a length is 0
        if (lengths == 0).any():
            return masked_softmax(scores, _real(scores, lengths))
        return masked_solution(scores, lengths)

    _rejects(ch01.check_masked_softmax(sly), "masked_softmax", "yourself")


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


def _read(answer, sweep, hidden, threshold=0.5):
    """The reading of a sweep alone (what check_breaking_length judges once the sweep is verified)."""
    return breaking_length.reading_verdict(answer, sweep, hidden, threshold)


def test_breaking_length_reading_accepts_the_first_length_below_half():
    sweep = _sweep()
    assert _read(10, sweep, 16).passed
    assert _read(15, sweep, 64).passed
    assert _read(20, sweep, 16, threshold=0.3).passed


def test_breaking_length_names_the_wrong_curve_and_the_wrong_metric():
    sweep = _sweep()
    _rejects(_read(20, sweep, 16), "*with* attention")
    _rejects(_read(5, sweep, 64), "whole-sequence accuracy")
    _rejects(_read(10, sweep, 64), "still 0.65", "last length that works")
    _rejects(_read(None, sweep, 16), "not quite")
    _rejects(_read(20, sweep, 16, threshold=0.4), "H = 64")
    _rejects(_read(12, sweep, 16), "not one of the evaluated lengths")


@pytest.fixture(scope="module")
def real_sweep():
    """The smallest real sweep: two seeds of the model without attention, briefly trained."""
    from helpers.experiments.bottleneck import bottleneck_sweep

    return bottleneck_sweep(range(3, 9), [8], steps=20, eval_lengths=[3, 5, 8], seeds=[0, 1], attention=(False,),
                            num_eval=128, curve_every=20, curve_samples=16)


def _breaking(sweep, hidden=8):
    return next((n for n, a in zip(sweep.lengths, sweep.accuracy(False, hidden)) if a < 0.5), None)


def test_breaking_length_accepts_the_reading_of_a_real_sweep_and_compares_the_prediction(real_sweep):
    expected = _breaking(real_sweep)
    predict(ch01.BREAKING_PREDICTION, 100)
    result = ch01.check_breaking_length(expected, real_sweep, 8)
    assert result.passed, result.message
    assert "too late" in result.message or expected is None
    forget()
    predict(ch01.BREAKING_PREDICTION, expected if expected is not None else "never")
    result = ch01.check_breaking_length(float(expected) if expected is not None else None, real_sweep, 8)
    assert result.passed and "agrees with the sweep" in result.message, result.message


def test_breaking_length_requires_a_prediction_made_before_the_result(real_sweep):
    expected = _breaking(real_sweep)
    _rejects(ch01.check_breaking_length(expected, real_sweep, 8), "no prediction recorded")
    predict(ch01.BREAKING_PREDICTION, ...)
    _rejects(ch01.check_breaking_length(expected, real_sweep, 8), "still ...")
    predict(ch01.BREAKING_PREDICTION, "soon")
    _rejects(ch01.check_breaking_length(expected, real_sweep, 8), "a length (a positive int)")
    predict(ch01.BREAKING_PREDICTION, 4)
    wrong = next(n for n in real_sweep.lengths if n != expected)
    verdict = ch01.check_breaking_length(wrong, real_sweep, 8)  # a wrong reading reveals nothing
    assert not verdict.passed and "prediction" not in verdict.message
    assert ch01.check_breaking_length(expected, real_sweep, 8).passed
    predict(ch01.BREAKING_PREDICTION, expected)  # after the result was shown
    _rejects(ch01.check_breaking_length(expected, real_sweep, 8), "recorded after")


def test_breaking_length_refuses_a_result_that_training_did_not_produce(real_sweep):
    predict(ch01.BREAKING_PREDICTION, 5)
    expected = _breaking(real_sweep)
    # a hand-written result: rows without models
    _rejects(ch01.check_breaking_length(10, _sweep(), 16), "no trained model")
    # the rows edited so that another length is the answer
    edited = copy.copy(real_sweep)
    edited.rows = [dict(r, token_accuracy=0.9 if r["seq_len"] < 8 else 0.1) for r in real_sweep.rows]
    _rejects(ch01.check_breaking_length(8, edited, 8), "tested again on fresh sequences")
    # models that were never trained, with their rows
    from helpers.rnn import Seq2SeqGRU
    from helpers.train import set_seed

    untrained = copy.copy(real_sweep)
    untrained.models_by_seed = {}
    for key in real_sweep.models_by_seed:
        set_seed(key[2])
        untrained.models_by_seed[key] = Seq2SeqGRU(12, 16, 8, attention=False)
    _rejects(ch01.check_breaking_length(expected, untrained, 8), "never trained")
    assert ch01.check_breaking_length(expected, real_sweep, 8).passed


def test_breaking_length_names_bad_answers():
    predict(ch01.BREAKING_PREDICTION, 5)
    sweep = _sweep()
    _rejects(ch01.check_breaking_length(..., sweep, 16), "replace the ...")
    _rejects(ch01.check_breaking_length("ten", sweep, 16), "an int")
    _rejects(ch01.check_breaking_length(10, sweep, 32), "hidden_size=32")
    _rejects(ch01.check_breaking_length(10, None, 16), "could not read")


# --------------------------------------------------------------------------------------------
# Exercise 4: name the task from its alignment
# --------------------------------------------------------------------------------------------


def ideal_alignment(task: str, src: torch.Tensor) -> torch.Tensor:
    """The alignment of a perfect model of ``task`` on ``src``: one-hot where it reads, ``(T, S)``."""
    from helpers.experiments.alignments import source_positions

    return torch.nn.functional.one_hot(source_positions(task, src[None])[0], len(src)).float()


def show(assignment: dict[str, str], src: torch.Tensor | None = None) -> None:
    """Put ideal alignments of ``assignment``'s tasks where mystery_alignments puts what it shows."""
    src = torch.tensor([7, 3, 9, 4, 11, 5, 2, 8]) if src is None else src
    task_names._SHOWN["shown"] = {label: (src, ideal_alignment(task, src)) for label, task in assignment.items()}


@pytest.fixture
def fixed_mystery():
    """The labels' tasks as mystery_alignments(shuffle=False) leaves them, shown by ideal alignments."""
    show(task_names.UNSHUFFLED)
    yield dict(task_names.UNSHUFFLED)
    task_names._SHOWN.clear()


def test_task_names_accepts_the_right_names_in_any_spelling(fixed_mystery):
    assert ch01.check_task_names({"A": "sort", "B": "copy", "C": "reverse"}).passed
    assert ch01.check_task_names({"a": " Sort", "b": "COPY", "c": "reverse "}).passed


def test_task_names_explains_each_kind_of_mix_up(fixed_mystery):
    _rejects(ch01.check_task_names({"A": "sort", "B": "reverse", "C": "copy"}), "top-left to bottom-right")
    _rejects(ch01.check_task_names({"A": "copy", "B": "sort", "C": "reverse"}), "A is not a straight line",
             "B is a straight line")
    _rejects(ch01.check_task_names({"A": "sort", "B": "copy"}), "missing ['C']")
    _rejects(ch01.check_task_names({"A": "sort", "B": "copy", "C": "shuffle"}), "one of")
    _rejects(ch01.check_task_names("A sort"), "dict")
    _rejects(ch01.check_task_names({"A": ..., "B": ..., "C": ...}), "replace each ...")


def test_task_names_are_read_from_the_alignments_shown_whatever_the_source():
    # sources on which the three tasks read from different places (a sorted or reversed source would
    # make sort read like copy or reverse: mystery_alignments draws a shuffled one)
    for src in (torch.tensor([7, 3, 9, 4, 11, 5, 2, 8]), torch.tensor([10, 2, 6, 11, 3, 8, 5, 9, 4]),
                torch.tensor([9, 4, 2, 11, 6, 8])):
        for assignment in ({"A": "copy", "B": "reverse", "C": "sort"}, {"A": "reverse", "B": "sort", "C": "copy"}):
            show(assignment, src)
            assert ch01.check_task_names(assignment).passed, (src, assignment)
            swapped = {"A": assignment["B"], "B": assignment["A"], "C": assignment["C"]}
            _rejects(ch01.check_task_names(swapped))
    task_names._SHOWN.clear()


@pytest.mark.slow
def test_task_names_refuses_names_before_the_models_ran_and_a_copied_table_of_names():
    task_names._SHOWN.clear()
    _rejects(ch01.check_task_names({"A": "sort", "B": "copy", "C": "reverse"}), "mystery_alignments()")
    drawn = {}
    for _ in range(8):  # trained once (the models are kept), shuffled at every call
        shown = ch01.mystery_alignments(steps=150)
        names = tuple(ch01.task_shown_by(src, alignment) for src, alignment in shown.values())
        drawn[names] = {label: ch01.task_shown_by(*shown[label]) for label in ch01.MYSTERY_LABELS}
    assert len(drawn) > 1  # the tasks behind the labels change from call to call
    truth = drawn[names]  # this draw's names, read from its alignments as the reader would
    assert ch01.check_task_names(truth).passed
    for earlier in drawn.values():  # the names of an earlier draw
        if earlier != truth:
            _rejects(ch01.check_task_names(earlier))
    task_names._SHOWN.clear()


@pytest.mark.slow
def test_the_checker_keeps_no_name_of_a_task_for_an_answer_to_read():
    shown = ch01.mystery_alignments(steps=150)
    names = set(TASKS)

    def strings(obj):  # every string reachable from the module's state
        if isinstance(obj, str):
            yield obj
        elif isinstance(obj, dict):
            for key, value in obj.items():
                yield from strings(key)
                yield from strings(value)
        elif isinstance(obj, (list, tuple)):
            for item in obj:
                yield from strings(item)

    assert set(task_names._SHOWN) == {"shown"}
    assert not names & set(strings(task_names._SHOWN))  # labels and tensors, no task's name
    for label, (src, alignment) in task_names._SHOWN["shown"].items():
        torch.testing.assert_close(alignment, shown[label][1])  # what the figure shows, nothing more
    task_names._SHOWN.clear()


def test_mystery_alignments_refuses_settings_whose_alignments_show_no_task():
    with pytest.raises(RuntimeError, match="train longer"):
        ch01.mystery_alignments(seq_len=3, hidden_size=4, steps=1)


@pytest.mark.slow
def test_mystery_alignments_follow_their_tasks():
    from helpers.experiments.alignments import alignment_mass, source_positions

    mystery = ch01.mystery_alignments(steps=150, shuffle=False)
    sources = [src for src, _ in mystery.values()]
    assert all(torch.equal(src, sources[0]) for src in sources) and len(set(sources[0].tolist())) == 8
    for label, task in task_names.UNSHUFFLED.items():
        src, alignment = mystery[label]
        assert alignment.shape == (8, 8)
        torch.testing.assert_close(alignment.sum(-1), torch.ones(8))
        own = alignment_mass(alignment, source_positions(task, src[None])[0], window=1)
        others = [alignment_mass(alignment, source_positions(t, src[None])[0], window=1)
                  for t in ("copy", "reverse", "sort") if t != task]
        assert own > max(others), (label, task, own, others)
        assert ch01.task_shown_by(src, alignment) == task


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


RIGHT = {"gru": "falls", "attention": "flat", "gru_ratio": ">1000"}


def test_gradient_prediction_runs_the_measurement_and_accepts_a_right_prediction():
    predict(ch01.GRADIENT_PREDICTION, RIGHT)
    result = ch01.check_gradient_prediction()
    assert result.passed, result.message
    assert "measured" in result.message


def test_gradient_prediction_refuses_a_missing_or_a_late_prediction_and_anything_handed_in():
    from helpers.exercises.predictions import recorded
    from helpers.experiments.gradient_paths import gradient_by_distance

    _rejects(ch01.check_gradient_prediction(), "no prediction recorded")
    assert "measured" not in ch01.check_gradient_prediction().message  # nothing shown before a prediction
    predict(ch01.GRADIENT_PREDICTION, {"gru": ..., "attention": ..., "gru_ratio": ...})
    _rejects(ch01.check_gradient_prediction(), "replace")
    assert not recorded(ch01.GRADIENT_PREDICTION).late  # refusing the stub showed nothing
    predict(ch01.GRADIENT_PREDICTION, {"gru": "flat", "attention": "flat", "gru_ratio": "<10"})
    _rejects(ch01.check_gradient_prediction(), "differs from the run")
    predict(ch01.GRADIENT_PREDICTION, RIGHT)  # changed after seeing the result
    _rejects(ch01.check_gradient_prediction(), "recorded after the result")
    forget()
    predict(ch01.GRADIENT_PREDICTION, RIGHT)
    grads = gradient_by_distance(seq_len=8, embed_dim=8, seeds=(0,))
    _rejects(ch01.check_gradient_prediction(RIGHT, grads), "no argument")  # the old call, a result handed in


def test_gradient_prediction_names_the_wrong_part():
    for wrong, words in (({"gru": "flat"}, ("gru", "Jacobian")),
                         ({"attention": "falls"}, ("attention", "one weighted sum")),
                         ({"gru_ratio": "<10"}, ("gru_ratio", "compounds"))):
        forget()
        predict(ch01.GRADIENT_PREDICTION, RIGHT | wrong)
        _rejects(ch01.check_gradient_prediction(), *words)
    for bad, words in (({"gru": "down"}, ("lacks",)), ({"gru": "down", "attention": "flat", "gru_ratio": "<10"},
                                                        ("must be one of",)), ("falls", ("dict",))):
        forget()
        predict(ch01.GRADIENT_PREDICTION, bad)
        _rejects(ch01.check_gradient_prediction(), *words)


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


def test_control_design_enforces_its_stated_minimums():
    plain = _matched_plain_hidden(16)
    good = dict(attention_hidden=16, plain_hidden=plain, seeds=[0, 1, 2], lengths=range(4, 17), steps=300)
    _rejects(ch01.check_control_design(dict(good, steps=1)), "at least 300 steps")
    _rejects(ch01.check_control_design(dict(good, steps=ch01.CONTROL_MIN_STEPS - 1)), "too few")
    assert ch01.check_control_design(dict(good, steps=ch01.CONTROL_MIN_STEPS)).passed
    _rejects(ch01.check_control_design(dict(good, lengths=[1, 2, 3])), "past the bottleneck", "16")
    _rejects(ch01.check_control_design(dict(good, lengths=[4, 8, 15])), "past the bottleneck")
    _rejects(ch01.check_control_design(dict(good, lengths=[12, 16, 20])), "a length both models handle")
    assert ch01.check_control_design(dict(good, lengths=[8, 12, 16])).passed
    _rejects(ch01.check_control_design(dict(good, seeds=[0, 0, 0])), "at least 3 seeds")
    # one value per model: the two arms would differ in more than attention
    _rejects(ch01.check_control_design(dict(good, steps={"attention": 300, "plain": 600})), "'steps'", "both models")
    _rejects(ch01.check_control_design(dict(good, lengths={"attention": range(4, 17), "plain": range(4, 9)})),
             "'lengths'", "same seeds, lengths and steps")
    _rejects(ch01.check_control_design(dict(good, seeds={"attention": [0, 1, 2], "plain": [3, 4, 5]})), "'seeds'")
