"""Checkers for the exercises of chapter 1, "Why attention" (``notebooks/01-bottleneck-lab.ipynb``).

Each checker takes the reader's answer, never raises on a wrong one (exceptions from the
reader's code are caught and reported), and returns a :class:`~helpers.exercises.CheckResult`
whose message names the mistake: a missing ``tanh``, a transposed weight, a mask applied at the
wrong moment, the wrong curve read off a figure.

- :func:`check_additive_scores`: Bahdanau's score ``v^T tanh(W_q s + W_k h_j)``.
- :func:`check_masked_softmax`: attention weights over padded encoder states.
- :func:`check_breaking_length`: where the model without attention breaks, read off the sweep
  (whose models are tested again), with the prediction recorded before the sweep.
- :func:`mystery_alignments` and :func:`check_task_names`: name the task from its alignment.
- :func:`check_gradient_prediction`: a prediction, recorded before the run
  (:func:`helpers.exercises.predictions.predict`), of how the gradient of the last output falls
  with distance in a GRU and in attention; the checker runs the measurement itself.
- :func:`check_control_design`: a control experiment the reader designs: is attention's
  advantage only its extra parameters? (stated minimums: seeds, lengths, steps).

The two from-scratch exercises (1 and 2) run the reader's function on fresh random inputs under
the guard of :func:`helpers.exercises.reader.call_watched`: no function of the package may run
while it does, whatever the route (a default argument, a closure, a partial, a dict); an answer
that reaches one is rejected, by name.

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from its messages in ``helpers.exercises.catalogue.ch01`` (this
chapter's part of the checkers' catalogue, :mod:`helpers.exercises.messages`), as :mod:`helpers.exercises.ch04` does.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Callable

import torch
from torch import Tensor

from helpers.attention import masked_softmax
from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch01 import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.messages import LANGUAGES, phrase, text
from helpers.exercises.predictions import recorded, reveal
from helpers.exercises.reader import (
    Rejected,
    allclose,
    as_tensor,
    call_watched,
    checker,
    fresh_generator,
    fresh_int,
)
from helpers.scores import additive_scores

from .. import seeding

__all__ = [
    "check_additive_scores",
    "check_masked_softmax",
    "check_breaking_length",
    "BREAKING_PREDICTION",
    "SWEEP_TOLERANCE",
    "LARGE_SCORE",
    "MYSTERY_LABELS",
    "mystery_alignments",
    "task_shown_by",
    "check_task_names",
    "GRADIENT_SHAPES",
    "GRU_RATIO_BANDS",
    "check_gradient_prediction",
    "GRADIENT_PREDICTION",
    "CONTROL_MIN_STEPS",
    "CONTROL_MAX_SHORTEST",
    "CONTROL_MIN_LONGEST",
    "parameter_count",
    "check_control_design",
]


_SEPARATOR = {"en": "; ", "zh": "；"}
"""How the clauses of a message made of several hints are joined, per language."""


def _joined(parts: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    """Several messages ``(key, fields)`` joined into one phrase, in every language."""
    return {language: _SEPARATOR[language].join(text(key, language, **fields) for key, fields in parts)
            for language in LANGUAGES}


# --------------------------------------------------------------------------------------------
# Exercise 1: the additive (Bahdanau) score
# --------------------------------------------------------------------------------------------


def _additive_inputs(generator: torch.Generator | None = None, sizes: tuple[int, int, int, int, int] | None = None,
                     ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """A decoder state per sequence, encoder states and weights, with all sizes different.

    Args:
        generator: Draws the sizes and the values; ``None``: a fresh one (inputs the answer cannot know).
        sizes: ``(B, S, E_q, E_k, A)``; ``None``: drawn, five distinct sizes in ``[2, 8]`` (so that a
            transposed weight cannot multiply).

    Returns:
        ``(query, keys, w_q, w_k, v)``.
    """
    gen = fresh_generator() if generator is None else generator
    if sizes is None:
        sizes = tuple(int(n) for n in torch.randperm(7, generator=gen)[:5] + 2)  # type: ignore[assignment]
    batch, length, e_q, e_k, hidden = sizes  # type: ignore[misc]
    query = torch.randn(batch, e_q, generator=gen, dtype=torch.float64)  # (B, E_q)
    keys = torch.randn(batch, length, e_k, generator=gen, dtype=torch.float64)  # (B, S, E_k)
    w_q = torch.randn(hidden, e_q, generator=gen, dtype=torch.float64)  # (A, E_q)
    w_k = torch.randn(hidden, e_k, generator=gen, dtype=torch.float64)  # (A, E_k)
    v = torch.randn(hidden, generator=gen, dtype=torch.float64)  # (A,)
    return query, keys, w_q, w_k, v


def _additive_reference(query: Tensor, keys: Tensor, w_q: Tensor, w_k: Tensor, v: Tensor) -> Tensor:
    return additive_scores(query[:, None, :], keys, w_q, w_k, v)[:, 0, :]  # (B, 1, S) -> (B, S)


def _additive_diagnosis(scores: Tensor, inputs: tuple[Tensor, ...], language: str | None) -> CheckResult | None:
    """``None`` when ``scores`` are right for ``inputs``, else the verdict that names the mistake."""
    query, keys, w_q, w_k, v = inputs
    batch, length, hidden = keys.shape[0], keys.shape[1], v.shape[0]
    reference = _additive_reference(*inputs)
    if scores.shape != (batch, length):
        if scores.shape == (batch, length, hidden):
            return CheckResult.of(False, "ch01.additive.stopped_at_tanh", language, shape=tuple(scores.shape))
        if scores.numel() == batch * length:
            return CheckResult.of(False, "ch01.additive.reshape", language, shape=tuple(scores.shape),
                                  expected=(batch, length))
        return CheckResult.of(False, "ch01.additive.shape", language, expected=(batch, length),
                              got=tuple(scores.shape))
    if not torch.isfinite(scores).all():
        return CheckResult.of(False, "ch01.additive.not_finite", language)
    if allclose(scores, reference):
        return None
    if allclose(scores, torch.softmax(reference, dim=-1)):
        return CheckResult.of(False, "ch01.additive.softmax", language)
    if allclose(scores, -reference):
        return CheckResult.of(False, "ch01.additive.sign", language)
    q_hidden = query @ w_q.T  # (B, A)
    k_hidden = keys @ w_k.T  # (B, S, A)
    if allclose(scores, (q_hidden[:, None, :] + k_hidden) @ v):
        return CheckResult.of(False, "ch01.additive.no_tanh", language)
    if allclose(scores, (torch.tanh(q_hidden)[:, None, :] + torch.tanh(k_hidden)) @ v):
        return CheckResult.of(False, "ch01.additive.separate_tanh", language)
    if allclose(scores, torch.tanh(k_hidden) @ v):
        return CheckResult.of(False, "ch01.additive.no_query", language)
    error = float((scores.double() - reference).abs().max())
    return CheckResult.of(False, "ch01.additive.differs", language, error=error)


@checker
def check_additive_scores(fn: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], *,
                          language: str | None = None) -> CheckResult:
    """Check ``fn(query, keys, w_q, w_k, v)``: the additive scores ``v^T tanh(W_q s + W_k h_j)``.

    The answer runs on fresh random inputs, sizes included (five distinct sizes, so that a
    transposed weight cannot multiply), twice with the same sizes and other values (an answer
    that returns the same tensor whatever it is given is named), under the guard of
    :func:`helpers.exercises.reader.call_watched`: no function of the package may run (this is
    the score the exercise asks to write; chapter 1).

    Args:
        fn: The reader's function. ``query`` is one decoder state per sequence ``(B, E_q)``,
            ``keys`` the encoder states ``(B, S, E_k)``, ``w_q`` ``(A, E_q)`` and ``w_k``
            ``(A, E_k)`` are laid out like ``nn.Linear`` weights, ``v`` is ``(A,)``; it must
            return the scores ``(B, S)`` (before any softmax).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult`; compared with
        :func:`helpers.scores.additive_scores`.
    """
    gen = fresh_generator()
    first = _additive_inputs(gen)
    second = _additive_inputs(gen, tuple(first[1].shape[:2]) + (first[0].shape[1], first[1].shape[2],
                                                                 first[4].shape[0]))  # same sizes, other values
    results = []
    for inputs in (first, second):
        # the exercise is to write the score: no function of the package may run while it does
        result = call_watched(fn, *(t.clone() for t in inputs), shape_hint=phrase("ch01.additive.shape_hint"),
                              language=language)
        scores = as_tensor(result, phrase("ch01.what.scores"), language)
        if results and scores.shape == results[0].shape and torch.equal(scores, results[0]):
            return CheckResult.of(False, "ch01.additive.constant", language)
        verdict = _additive_diagnosis(scores, inputs, language)
        if verdict is not None:
            return verdict
        results.append(scores.detach().clone())
    return CheckResult.of(True, "ch01.additive.passed", language)


# --------------------------------------------------------------------------------------------
# Exercise 2: masked softmax over padded encoder states
# --------------------------------------------------------------------------------------------

LARGE_SCORE = 1000.0
"""The size of the large scores of exercise 2's hard case — ``exp(1000)`` overflows even in float64."""


def _padded_inputs(generator: torch.Generator | None = None, *, empty: bool = False) -> tuple[Tensor, Tensor]:
    """Scores ``(B, S)`` and lengths ``(B,)`` of fresh sizes: a full sequence, one of a single token,
    others in between (and, with ``empty``, one of length 0)."""
    gen = fresh_generator() if generator is None else generator
    batch, width = fresh_int(4, 7, gen), fresh_int(5, 9, gen)
    scores = torch.randn(batch, width, generator=gen, dtype=torch.float64) * 2  # (B, S)
    lengths = torch.randint(2, width, (batch,), generator=gen)  # (B,): lengths[b] real tokens, then padding
    lengths[0], lengths[1] = width, 0 if empty else 1
    order = torch.randperm(batch, generator=gen)
    return scores[order].contiguous(), lengths[order].contiguous()


def _large_inputs(generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """Scores of +-1000: every other sequence has a real score of +1000, the others only scores far below
    +1000 (-1000 and ordinary ones); every padded score is +1000 (the mask must come first). One sequence
    is full, one has a single token."""
    scores, lengths = _padded_inputs(generator)
    batch, width = scores.shape
    real = torch.arange(width)[None, :] < lengths[:, None]  # (B, S)
    low = (torch.rand(batch, width, generator=generator) < 0.4) & real
    low[1::2, 0] = False  # the other sequences keep an ordinary score (the padding's +1000 is their largest)
    scores = scores.masked_fill(low, -LARGE_SCORE).masked_fill(~real, LARGE_SCORE)
    for b in range(0, batch, 2):  # a real +1000 in every other sequence
        scores[b, int(torch.randint(0, int(lengths[b]), (1,), generator=generator))] = LARGE_SCORE
    return scores, lengths


def _real_positions(scores: Tensor, lengths: Tensor) -> Tensor:
    return torch.arange(scores.shape[1])[None, :] < lengths[:, None]  # (B, S): True = a real token (may attend)


def _run_answer(fn: Any, *args: Any, language: str | None) -> tuple[Any, CheckResult | None]:
    """:func:`~helpers.exercises.reader.call_watched`, with the answer's own failure returned as a verdict
    (to be put in context) instead of raised; the guard's verdicts (a delegation, a switched-off watch...)
    are raised as they are."""
    try:
        return call_watched(fn, *args, language=language), None
    except Rejected as rejected:
        if (rejected.verdict.key or "").startswith("guard."):
            raise
        return None, rejected.verdict


def _mask_diagnosis(weights: Tensor, scores: Tensor, lengths: Tensor, language: str | None) -> CheckResult | None:
    """The ordinary case: ``None`` when right, else the verdict that names the mistake."""
    real = _real_positions(scores, lengths)
    positions = torch.arange(scores.shape[1])
    reference = masked_softmax(scores, real).double()
    if weights.shape != scores.shape:
        return CheckResult.of(False, "ch01.masked.shape", language, expected=tuple(scores.shape),
                              got=tuple(weights.shape))
    weights = weights.double()
    if torch.isnan(weights).any():
        return CheckResult.of(False, "ch01.masked.nan", language)
    if allclose(weights, torch.softmax(scores, dim=-1)):
        return CheckResult.of(False, "ch01.masked.unmasked", language)
    if allclose(weights, masked_softmax(scores, ~real).double()):
        return CheckResult.of(False, "ch01.masked.inverted", language)
    if allclose(weights, torch.softmax(scores, dim=-1) * real):
        return CheckResult.of(False, "ch01.masked.after_softmax", language)
    if allclose(weights, torch.softmax(scores, dim=0)) or allclose(
        weights, masked_softmax(scores.T, real.T).double().T
    ):
        return CheckResult.of(False, "ch01.masked.batch_axis", language)
    one_more = positions[None, :] <= lengths[:, None]
    if allclose(weights, masked_softmax(scores, one_more).double()):
        return CheckResult.of(False, "ch01.masked.off_by_one", language)
    padded_weight = float(weights[~real].abs().sum())
    if padded_weight > 1e-6:
        return CheckResult.of(False, "ch01.masked.padding_weight", language, weight=padded_weight)
    if not allclose(weights, reference):
        return CheckResult.of(False, "ch01.masked.wrong_softmax", language)
    if padded_weight > 0:  # right to float tolerance, but not exactly 0: a finite fill value
        return CheckResult.of(False, "ch01.masked.finite_fill", language, weight=padded_weight)
    return None


def _large_diagnosis(weights: Tensor, scores: Tensor, lengths: Tensor, language: str | None) -> CheckResult | None:
    """The case of scores of +-1000: ``None`` when right, else the verdict that names the mistake."""
    real = _real_positions(scores, lengths)
    if weights.shape != scores.shape:
        return CheckResult.of(False, "ch01.masked.shape", language, expected=tuple(scores.shape),
                              got=tuple(weights.shape))
    weights = weights.double()
    reference = masked_softmax(scores, real).double()
    finite = torch.isfinite(weights)
    padded_weight = float(weights.nan_to_num(0.0, 0.0, 0.0)[~real].abs().sum())
    if padded_weight > 0:
        return CheckResult.of(False, "ch01.masked.large_padding", language, score=LARGE_SCORE, weight=padded_weight)
    bad_rows = ~(finite & torch.isclose(weights.nan_to_num(0.0, 0.0, 0.0), reference, rtol=1e-5, atol=1e-6)).all(-1)
    if not bad_rows.any():
        return None
    real_max = scores.masked_fill(~real, float("-inf")).amax(dim=-1)  # (B,)
    unstable = (real_max >= LARGE_SCORE) | (real_max <= -LARGE_SCORE)  # exp() alone overflows or underflows
    dominated = (~real).any(dim=-1) & (real_max < LARGE_SCORE)  # a padded score (+1000) is the row's largest
    if not bool((bad_rows & ~unstable).any()):  # wrong only where exp() of the raw scores fails
        return CheckResult.of(False, "ch01.masked.overflow", language, score=LARGE_SCORE)
    if not bool((bad_rows & ~dominated).any()):  # wrong only where the padding holds the largest score
        return CheckResult.of(False, "ch01.masked.underflow", language, score=LARGE_SCORE)
    if not finite.all():
        return CheckResult.of(False, "ch01.masked.large_nan", language, score=LARGE_SCORE)
    return CheckResult.of(False, "ch01.masked.large_differs", language, score=LARGE_SCORE)


@checker
def check_masked_softmax(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(scores, lengths)``: attention weights that ignore the padded positions.

    The answer runs on fresh random inputs (sizes and lengths drawn at each call, a full sequence
    and one of a single token among them), then on scores of +-1000 (a softmax without the
    subtraction of the maximum overflows; the padded scores are +1000, so that masking after the
    softmax underflows), then on a batch with a sequence of length 0, under the guard of
    :func:`helpers.exercises.reader.call_watched` (no function of the package may run). The
    padded weights must be exactly 0, not merely small (a fill of -30 leaves ``exp(-30)``).

    Args:
        fn: The reader's function. ``scores`` are ``(B, S)``; sequence ``b`` has ``lengths[b]``
            real tokens (positions ``0 .. lengths[b] - 1``) followed by padding. It must return
            weights ``(B, S)``: a softmax over the real positions, exactly 0 on the padding; a
            sequence of length 0 gets all-zero weights (not NaN).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult`; compared with
        :func:`helpers.attention.masked_softmax` (chapter 1; the empty row as chapter 0 defines it).
    """
    gen = fresh_generator()
    scores, lengths = _padded_inputs(gen)
    # the exercise is to write the masked softmax: no function of the package may run while it does
    result = call_watched(fn, scores.clone(), lengths.clone(), language=language)
    verdict = _mask_diagnosis(as_tensor(result, phrase("ch01.what.weights"), language), scores, lengths, language)
    if verdict is not None:
        return verdict

    # Second test: scores of +-1000, which exp() alone cannot take.
    large_scores, large_lengths = _large_inputs(gen)
    result = call_watched(fn, large_scores.clone(), large_lengths.clone(), language=language)
    verdict = _large_diagnosis(as_tensor(result, phrase("ch01.what.weights"), language), large_scores,
                               large_lengths, language)
    if verdict is not None:
        return verdict

    # Third test: an empty sequence (length 0) must give zeros, not 0/0 = NaN.
    empty_scores, empty_lengths = _padded_inputs(gen, empty=True)
    empty_reference = masked_softmax(empty_scores, _real_positions(empty_scores, empty_lengths)).double()
    empty_result, empty_failure = _run_answer(fn, empty_scores.clone(), empty_lengths.clone(), language=language)
    if empty_failure is not None:
        failure_phrase = {other: empty_failure.in_language(other).message for other in LANGUAGES}
        return CheckResult.of(False, "ch01.masked.empty_failed", language, failure=failure_phrase)
    empty = as_tensor(empty_result, phrase("ch01.what.weights"), language)
    if empty.shape != empty_scores.shape or not torch.isfinite(empty.double()).all():
        return CheckResult.of(False, "ch01.masked.empty_nan", language)
    if not allclose(empty.double(), empty_reference) or bool((empty.double()[empty_lengths == 0] != 0).any()):
        row = empty.double()[empty_lengths == 0][0]
        uniform = allclose(row, torch.full_like(row, 1 / empty.shape[-1]))
        return CheckResult.of(False, "ch01.masked.empty_uniform" if uniform else "ch01.masked.empty_not_zero",
                              language, total=float(row.sum()))
    return CheckResult.of(True, "ch01.masked.passed", language)


# --------------------------------------------------------------------------------------------
# Exercise 3: where the model without attention breaks
# --------------------------------------------------------------------------------------------


BREAKING_PREDICTION = "ch01.breaking_length"
"""The key of exercise 3's prediction (:func:`helpers.exercises.predictions.predict`), recorded before the sweep."""

SWEEP_TOLERANCE = 0.1
"""How far the token accuracy of a sweep's result may be from the checker's re-evaluation of its models
on fresh sequences (mean over the seeds, at any length): the test sets differ, nothing else."""


def _first_below(lengths: Sequence[int], accuracies: Sequence[float], threshold: float) -> int | None:
    return next((n for n, acc in zip(lengths, accuracies) if acc < threshold), None)


def _verify_sweep(result: Any, hidden_size: int, task: str, language: str | None) -> None:
    """Re-evaluate the sweep's trained models without attention of size ``hidden_size`` on fresh sequences;
    raise :class:`Rejected` when the result is not what they give (or they were never trained)."""
    from helpers.experiments.seq2seq_training import evaluate_seq2seq  # noqa: PLC0415
    from helpers.rnn import Seq2SeqGRU  # noqa: PLC0415
    from helpers.train import set_seed  # noqa: PLC0415

    try:
        lengths, seeds = result.lengths, result.seeds
        recorded_accuracy = result.accuracy(False, hidden_size)
        models = {seed: result.models_by_seed.get((False, hidden_size, seed)) for seed in seeds}
    except Exception as error:  # a wrong `result` or hidden size: explain, never raise
        raise Rejected(CheckResult.of(False, "ch01.breaking.unreadable", language, hidden_size=hidden_size,
                                      error=str(error))) from None
    for seed, model in models.items():
        if not isinstance(model, Seq2SeqGRU) or model.use_attention or model.hidden_size != hidden_size:
            raise Rejected(CheckResult.of(False, "ch01.breaking.no_models", language, hidden=hidden_size, seed=seed))
        with torch.random.fork_rng():  # the reader's random state is left as it was
            set_seed(seed)
            initial = Seq2SeqGRU(model.vocab_size, model.embedding.embedding_dim, hidden_size, attention=False)
        if all(torch.equal(a, b) for a, b in zip(initial.state_dict().values(), model.state_dict().values())):
            raise Rejected(CheckResult.of(False, "ch01.breaking.untrained", language, hidden=hidden_size, seed=seed))
    test_seed = fresh_int(0, 2**31 - 1, fresh_generator())
    with torch.random.fork_rng():
        again = [sum(evaluate_seq2seq(model, n, task=task, num_samples=128, seed=test_seed + n)["token_accuracy"]
                     for model in models.values()) / len(models) for n in lengths]
    gaps = [abs(a - b) for a, b in zip(recorded_accuracy, again)]
    worst = max(range(len(gaps)), key=gaps.__getitem__)
    if gaps[worst] > SWEEP_TOLERANCE:
        raise Rejected(CheckResult.of(False, "ch01.breaking.not_reproduced", language, hidden=hidden_size,
                                      length=lengths[worst], recorded=recorded_accuracy[worst], again=again[worst],
                                      task=task))


def _prediction_value(language: str | None) -> Any:
    """The recorded prediction of the breaking length (an int or ``"never"``), or :class:`Rejected`."""
    prediction = recorded(BREAKING_PREDICTION)
    if prediction is None:
        raise Rejected(CheckResult.of(False, "ch01.breaking.no_prediction", language, key=BREAKING_PREDICTION))
    value = prediction.value
    if value is ...:
        raise Rejected(CheckResult.of(False, "ch01.breaking.prediction_ellipsis", language, key=BREAKING_PREDICTION))
    if isinstance(value, str) and value.strip().lower() == "never":
        return "never"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise Rejected(CheckResult.of(False, "ch01.breaking.prediction_not_a_length", language,
                                      value=repr(prediction.value)))
    return value


def _prediction_phrase(value: Any, expected: int | None, lengths: Sequence[int]) -> dict[str, str]:
    """What the sweep says of the prediction, in every language (only once the reading is right)."""
    if value == "never" or expected is None:
        key = "ch01.breaking.prediction_right" if (value == "never") == (expected is None) else (
            "ch01.breaking.prediction_never" if value == "never" else "ch01.breaking.prediction_broke_never")
        return phrase(key, predicted=str(value), expected=str(expected))
    before = [n for n in lengths if n < expected]
    low = before[-1] if before else 0
    if low < value <= expected:
        return phrase("ch01.breaking.prediction_right", predicted=str(value), expected=str(expected))
    key = "ch01.breaking.prediction_early" if value <= low else "ch01.breaking.prediction_late"
    return phrase(key, predicted=str(value), expected=str(expected))


@checker
def check_breaking_length(answer: Any, result: Any, hidden_size: int, *, threshold: float = 0.5,
                          task: str = "reverse", language: str | None = None) -> CheckResult:
    """Check the length at which the model without attention breaks, read off a bottleneck sweep.

    The breaking length is the first evaluation length at which the *token* accuracy of the
    model *without* attention of hidden size ``hidden_size`` (mean over the seeds) falls below
    ``threshold``. The sweep is not taken on trust: its trained models without attention are
    tested again on fresh sequences, and their accuracy must be the one the result records
    (within :data:`SWEEP_TOLERANCE`); models that were never trained are refused. The
    prediction recorded before the sweep, ``predict("ch01.breaking_length", n)`` (an int, or
    ``"never"``), is required; once the reading is right the verdict says how it compares. A
    prediction recorded after this checker showed the result is refused as late.

    Args:
        answer: The reader's length (an int), or ``None`` if it never breaks in the range.
        result: The :class:`~helpers.experiments.bottleneck.BottleneckResult` of the sweep.
        hidden_size: The hidden size asked about.
        threshold: The accuracy that counts as broken.
        task: The task the sweep trained on (its models are tested on it again).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult` (chapter 1).
    """
    if answer is ...:
        return CheckResult.of(False, "ch01.breaking.ellipsis", language)
    try:
        lengths = result.lengths
        plain = result.accuracy(False, hidden_size)
    except Exception as error:  # a wrong `result` or hidden size: explain, never raise
        return CheckResult.of(False, "ch01.breaking.unreadable", language, hidden_size=hidden_size, error=str(error))
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int)):
        if isinstance(answer, float) and answer.is_integer():
            answer = int(answer)
        else:
            return CheckResult.of(False, "ch01.breaking.not_a_length", language, lengths=str(lengths),
                                  answer=repr(answer))
    predicted = _prediction_value(language)
    _verify_sweep(result, hidden_size, task, language)
    verdict = _reading_verdict(answer, result, hidden_size, threshold, language)
    if not verdict.passed:
        return verdict
    reveal(BREAKING_PREDICTION)
    prediction = recorded(BREAKING_PREDICTION)
    if prediction is not None and prediction.late:
        return CheckResult.of(False, "ch01.breaking.late", language, key=BREAKING_PREDICTION)
    expected = _first_below(lengths, plain, threshold)
    values = ", ".join(f"{n}: {a:.2f}" for n, a in zip(lengths, plain))
    remark = _prediction_phrase(predicted, expected, lengths)
    if expected is None:
        return CheckResult.of(True, "ch01.breaking.passed_never", language, hidden=hidden_size, values=values,
                              prediction=remark)
    return CheckResult.of(True, "ch01.breaking.passed", language, hidden=hidden_size, threshold=threshold,
                          expected=expected, values=values, prediction=remark)


def _reading_verdict(answer: int | None, result: Any, hidden_size: int, threshold: float,
                     language: str | None) -> CheckResult:
    """The reading of the sweep: passed when ``answer`` is the breaking length, else the mix-up it is."""
    lengths = result.lengths
    plain = result.accuracy(False, hidden_size)
    expected = _first_below(lengths, plain, threshold)
    if answer == expected:
        return CheckResult.of(True, "ch01.breaking.read", language)

    def first_below(*args: Any) -> int | None:
        try:
            return _first_below(lengths, result.accuracy(*args), threshold)
        except Exception:  # a sweep without that model: no such mix-up  # noqa: BLE001
            return -1

    if answer not in lengths and answer is not None:
        return CheckResult.of(False, "ch01.breaking.not_evaluated", language, answer=str(answer),
                              lengths=str(lengths))
    if answer == first_below(True, hidden_size):
        return CheckResult.of(False, "ch01.breaking.with_attention", language)
    if answer == first_below(False, hidden_size, "sequence_accuracy"):
        return CheckResult.of(False, "ch01.breaking.sequence", language, threshold=threshold)
    if expected is not None and answer is not None and lengths.index(answer) == lengths.index(expected) - 1:
        return CheckResult.of(False, "ch01.breaking.last_working", language, answer=answer,
                              accuracy=float(plain[lengths.index(answer)]))
    for other in result.hidden_sizes:
        if other != hidden_size and answer == first_below(False, other):
            return CheckResult.of(False, "ch01.breaking.other_hidden", language, other=other, hidden=hidden_size)
    return CheckResult.of(False, "ch01.breaking.not_quite", language, hidden=hidden_size, threshold=threshold)


# --------------------------------------------------------------------------------------------
# Exercise 4: name the task from its alignment
# --------------------------------------------------------------------------------------------

MYSTERY_LABELS: tuple[str, ...] = ("A", "B", "C")
"""The names of the three mystery alignments."""
_MYSTERY_TASKS: dict[str, str] = {"A": "sort", "B": "copy", "C": "reverse"}
"""The labels' tasks when :func:`mystery_alignments` does not shuffle them."""
_MYSTERY_STATE: dict[str, dict[str, tuple[Tensor, Tensor]]] = {}
"""What the last :func:`mystery_alignments` showed: ``{"shown": {label: (src, alignment)}}``, the
alignments themselves and nothing more. Which task is behind which label is not kept anywhere: the
checker reads it from the alignments, as the reader must (:func:`task_shown_by`)."""

_TASK_NAMES: tuple[str, ...] = ("copy", "reverse", "sort")


def task_shown_by(src: Tensor, alignment: Tensor) -> str:
    """The task whose reading order an alignment follows: the one with the most weight within one
    position of where it reads (:func:`helpers.experiments.alignments.alignment_mass`, ``window=1``).

    Shape:
        src ``(S,)``; alignment ``(T, S)``.
    """
    from helpers.experiments.alignments import alignment_mass, source_positions  # noqa: PLC0415

    mass = {task: alignment_mass(alignment, source_positions(task, src[None])[0], window=1) for task in _TASK_NAMES}
    return max(mass, key=mass.__getitem__)


@functools.lru_cache(maxsize=8)
def _trained_alignment(task: str, seq_len: int, hidden_size: int, steps: int, seed: int) -> tuple[Tensor, Tensor]:
    """One model trained on ``task`` and its alignment on the shown source (seeded: the same at every call)."""
    # imported here, not at the top: keep the import of this module light
    from helpers.experiments.seq2seq_training import train_seq2seq  # noqa: PLC0415
    from helpers.rnn import Seq2SeqGRU  # noqa: PLC0415
    from helpers.tasks import FIRST_CONTENT_TOKEN  # noqa: PLC0415
    from helpers.train import num_threads, set_seed  # noqa: PLC0415

    vocab_size = 12
    gen = seeding.generator(seed + 777)
    src = (torch.randperm(vocab_size - FIRST_CONTENT_TOKEN, generator=gen)[:seq_len] + FIRST_CONTENT_TOKEN)[None]
    target = {"copy": src, "reverse": src.flip(1), "sort": src.sort(dim=1).values}[task]  # (1, S), distinct
    with num_threads(1):
        set_seed(seed)
        model = Seq2SeqGRU(vocab_size, 16, hidden_size, attention=True)
        train_seq2seq(model, task=task, lengths=[seq_len], steps=steps, batch_size=32, lr=1e-2, seed=seed)
        model.eval()
        with torch.no_grad():
            _, alignment = model(src, target)  # (1, T, S)
    return src[0], alignment[0]


def mystery_alignments(
    *, seq_len: int = 8, hidden_size: int = 32, steps: int = 300, seed: int = 0, shuffle: bool = True
) -> dict[str, tuple[Tensor, Tensor]]:
    """Train three small attention models on three tasks; return their alignments, unnamed.

    The tasks are ``copy``, ``reverse`` and ``sort`` (:mod:`helpers.tasks`); which one is
    behind which label is what :func:`check_task_names` checks. Each model is a
    :class:`~helpers.rnn.Seq2SeqGRU` with attention trained for ``steps`` steps on sequences of
    length ``seq_len`` (about 3 s each on a laptop CPU, once: the trained models are kept for the
    next call with the same settings). All three are then shown the same source, ``seq_len``
    *distinct* symbols (so that the sorted order is unambiguous). The models and their alignments
    are seeded; which task hides behind which label is drawn afresh at each call (``shuffle``), so
    that no list of names copied from elsewhere answers the exercise, and it is kept nowhere: the
    checker reads it from the alignments.

    Args:
        seq_len: Length of the sequences (at most 10, the number of content symbols).
        hidden_size: Hidden size of the models.
        steps: Training steps per model.
        seed: Seed of the models, the training data and the shown example.
        shuffle: Draw the labels' tasks afresh (``False``: A is sort, B copy, C reverse).

    Returns:
        A dict from each label to a pair ``(src, alignment)``, one source sequence ``(S,)`` and
        the model's alignment ``(T, S)`` on it (teacher-forced).

    Raises:
        ValueError: ``seq_len`` is out of range.
        RuntimeError: with these settings a model's alignment does not show the task it was trained
            on (too few steps, too small a model): no reading of it could name the task.
    """
    from helpers.tasks import FIRST_CONTENT_TOKEN  # noqa: PLC0415

    n_symbols = 12 - FIRST_CONTENT_TOKEN
    if not isinstance(seq_len, int) or not 2 <= seq_len <= n_symbols:
        raise ValueError(f"seq_len must be an int in [2, {n_symbols}], got {seq_len!r}")
    trained = {task: _trained_alignment(task, seq_len, hidden_size, steps, seed) for task in _TASK_NAMES}
    for task, (src, alignment) in trained.items():
        if task_shown_by(src, alignment) != task:
            raise RuntimeError(f"with steps={steps} and hidden_size={hidden_size}, the model trained on {task!r} "
                               f"does not read the source as {task} does: train longer (more steps)")
    tasks = [_MYSTERY_TASKS[label] for label in MYSTERY_LABELS]
    if shuffle:
        tasks = [tasks[int(i)] for i in torch.randperm(len(tasks), generator=fresh_generator())]
    out = {label: (trained[task][0].clone(), trained[task][1].clone()) for label, task in zip(MYSTERY_LABELS, tasks)}
    _MYSTERY_STATE["shown"] = {label: (src.clone(), alignment.clone()) for label, (src, alignment) in out.items()}
    return out


@checker
def check_task_names(answer: Any, *, language: str | None = None) -> CheckResult:
    """Check the reader's names for the mystery alignments of :func:`mystery_alignments`.

    The names are compared with the tasks that the alignments of the last call of
    :func:`mystery_alignments` show (:func:`task_shown_by`: the checker reads them as the reader
    must; which task is behind which label is drawn afresh at each call and kept nowhere); before
    any call, the answer is refused.

    Args:
        answer: ``{"A": task, "B": task, "C": task}`` with tasks among ``"copy"``,
            ``"reverse"``, ``"sort"``.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult`.
    """
    tasks = sorted(set(_MYSTERY_TASKS.values()))
    shown = _MYSTERY_STATE.get("shown")
    if shown is None:
        return CheckResult.of(False, "ch01.tasks.not_run", language)
    truth = {label: task_shown_by(src, alignment) for label, (src, alignment) in shown.items()}
    if not isinstance(answer, Mapping):
        return CheckResult.of(False, "ch01.tasks.not_a_dict", language, tasks=str(tasks), type=type(answer).__name__)
    given = {str(k).strip().upper(): (v.strip().lower() if isinstance(v, str) else v) for k, v in answer.items()}
    missing = [label for label in MYSTERY_LABELS if label not in given]
    if not missing and any(given[label] is ... for label in MYSTERY_LABELS):
        return CheckResult.of(False, "ch01.tasks.ellipsis", language, tasks=str(tasks))
    if missing:
        return CheckResult.of(False, "ch01.tasks.missing", language, missing=str(missing))
    unknown = {label: task for label, task in given.items() if task not in tasks}
    if unknown:
        return CheckResult.of(False, "ch01.tasks.unknown", language, unknown=str(unknown), tasks=str(tasks))
    wrong = [label for label in MYSTERY_LABELS if given[label] != truth[label]]
    if not wrong:
        return CheckResult.of(True, "ch01.tasks.passed", language)
    hints = []
    for label in wrong:
        task, guess = truth[label], given[label]
        if task == "sort":
            hints.append(("ch01.tasks.hint_sort", {"label": label}))
        elif {task, guess} == {"copy", "reverse"}:
            hints.append((f"ch01.tasks.hint_{task}", {"label": label}))
        else:
            hints.append(("ch01.tasks.hint_line", {"label": label}))
    return CheckResult.of(False, "ch01.tasks.wrong", language, hints=_joined(hints))


# --------------------------------------------------------------------------------------------
# Exercise 5: predict, then measure, how the gradient falls with distance
# --------------------------------------------------------------------------------------------

GRADIENT_SHAPES: tuple[str, ...] = ("falls", "flat", "rises")
"""The answers for how a gradient changes with distance."""
GRU_RATIO_BANDS: tuple[str, ...] = ("<10", "10-1000", ">1000")
"""The answers for how many times smaller the GRU's gradient is at the farthest input than at distance 1."""


def _shape_of(rate: float) -> str:
    return "falls" if rate < 0.9 else "rises" if rate > 1.1 else "flat"


def _ratio_band(ratio: float) -> str:
    return "<10" if ratio < 10 else "10-1000" if ratio <= 1000 else ">1000"


GRADIENT_PREDICTION = "ch01.gradient"
"""The key of exercise 5's prediction (:func:`helpers.exercises.predictions.predict`)."""


@functools.lru_cache(maxsize=1)
def _measured_gradients() -> Any:
    """The checker's own run of the measurement the exercise names (seeded: the same at every call)."""
    from helpers.experiments.gradient_paths import gradient_by_distance  # noqa: PLC0415

    with torch.random.fork_rng():
        return gradient_by_distance(seq_len=32, embed_dim=32)


@checker
def check_gradient_prediction(*given: Any, language: str | None = None) -> CheckResult:
    """Run the measurement, then check the prediction recorded before it.

    The prediction, recorded with ``predict("ch01.gradient", {...})``
    (:func:`helpers.exercises.predictions.predict`) before this checker runs, says how
    ``||d y_last / d x_j||`` changes with the distance of ``x_j`` from the last position, for a
    freshly initialised GRU and for one self-attention layer, and by how much the GRU's gradient
    shrinks between distance 1 and the farthest input. The checker runs the measurement itself,
    :func:`~helpers.experiments.gradient_paths.gradient_by_distance` over 32 tokens (3 seeds,
    computed once a session), and reads the shapes off it with
    :func:`~helpers.experiments.gradient_paths.geometric_decay_rate` (below 0.9 per token: falls;
    above 1.1: rises; else flat; attention without distance 0, which is also the query). A
    missing prediction is refused before anything is measured; one recorded after the result was
    shown is refused as late.

    Args:
        *given: Nothing: a prediction or a measurement handed in is refused (the prediction is
            recorded with ``predict``, the measurement is the checker's own).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult` that says which part of the prediction the
        measurement contradicts, with the measured numbers (chapter 1).
    """
    from helpers.experiments.gradient_paths import geometric_decay_rate  # noqa: PLC0415

    if given:
        return CheckResult.of(False, "ch01.gradient.takes_nothing", language, key=GRADIENT_PREDICTION)

    record = recorded(GRADIENT_PREDICTION)
    if record is None:
        return CheckResult.of(False, "ch01.gradient.not_recorded", language, key=GRADIENT_PREDICTION)
    prediction = record.value
    if not isinstance(prediction, Mapping):
        return CheckResult.of(False, "ch01.gradient.not_a_dict", language, type=type(prediction).__name__)
    keys = ("gru", "attention", "gru_ratio")
    missing = [k for k in keys if k not in prediction]
    if missing:
        return CheckResult.of(False, "ch01.gradient.missing", language, missing=str(missing))
    if any(prediction[k] is ... for k in keys):
        return CheckResult.of(False, "ch01.gradient.ellipsis", language, shapes=str(list(GRADIENT_SHAPES)),
                              bands=str(list(GRU_RATIO_BANDS)))
    given = {k: str(prediction[k]).strip().lower().replace(" ", "") for k in keys}
    for k, allowed in (("gru", GRADIENT_SHAPES), ("attention", GRADIENT_SHAPES), ("gru_ratio", GRU_RATIO_BANDS)):
        if given[k] not in allowed:
            return CheckResult.of(False, "ch01.gradient.not_allowed", language, key=repr(k), allowed=str(list(allowed)),
                                  value=repr(prediction[k]))
    grads = _measured_gradients()
    distance = [int(d) for d in grads.distance]
    rnn, att = grads.rnn, grads.attention
    rate_rnn = geometric_decay_rate(rnn, grads.distance)
    rate_att = geometric_decay_rate(att[1:], grads.distance[1:])
    ratio = float(rnn[distance.index(1)] / rnn[-1])
    reveal(GRADIENT_PREDICTION)
    truth = {"gru": _shape_of(rate_rnn), "attention": _shape_of(rate_att), "gru_ratio": _ratio_band(ratio)}
    measured = phrase("ch01.gradient.measured", rate_rnn=float(rate_rnn), rate_att=float(rate_att), ratio=ratio,
                       far=distance[-1])
    if record.late:
        return CheckResult.of(False, "ch01.gradient.late", language, measured=measured)
    wrong = [k for k in keys if given[k] != truth[k]]
    if not wrong:
        return CheckResult.of(True, "ch01.gradient.passed", language, measured=measured)
    reasons = _joined([(f"ch01.gradient.reason_{k}", {}) for k in wrong])
    listed = {"en": ", ".join(wrong), "zh": "、".join(wrong)}
    return CheckResult.of(False, "ch01.gradient.wrong", language, wrong=listed, measured=measured, reasons=reasons)


# --------------------------------------------------------------------------------------------
# Exercise 6: design a control experiment
# --------------------------------------------------------------------------------------------


def parameter_count(hidden_size: int, *, attention: bool, vocab_size: int = 12, embed_dim: int = 16) -> int:
    """Number of parameters of the chapter's :class:`~helpers.rnn.Seq2SeqGRU` (the lab's sizes by default)."""
    from helpers.rnn import Seq2SeqGRU  # noqa: PLC0415

    return sum(p.numel() for p in Seq2SeqGRU(vocab_size, embed_dim, hidden_size, attention=attention).parameters())


CONTROL_MIN_STEPS = 300
"""The fewest training steps of a control — the chapter's budget, below which neither model has learned the task."""
CONTROL_MAX_SHORTEST = 8
"""The shortest length of a control must be at most this — a length both models still handle."""
CONTROL_MIN_LONGEST = 16
"""The longest length of a control must be at least this — past where the model without attention of the
lab's size breaks (near 10 symbols in chapter 1), where the two can differ at all."""


@checker
def check_control_design(design: Any, *, language: str | None = None) -> CheckResult:
    """Check the design of a control experiment: is attention's advantage only its extra parameters?

    The model with attention has more parameters than the model without at the same hidden
    size (the scoring network, and a decoder that reads a context at every step). A fair control
    gives the model *without* attention at least as many parameters, and changes nothing else:
    one list of seeds, one list of lengths and one number of steps, used for both models. The
    design must say, with these minimums:

    - ``attention_hidden``: the hidden size of the model with attention;
    - ``plain_hidden``: the hidden size of the model without, chosen so that it has at least as
      many parameters, and at most 1.5 times as many (:func:`parameter_count` counts them);
    - ``seeds``: at least 3 distinct seeds, the same for both models;
    - ``lengths``: at least 3 distinct source lengths, to train and test on (a trend, not a
      point), from at most :data:`CONTROL_MAX_SHORTEST` (both models work there) to at least
      :data:`CONTROL_MIN_LONGEST` (past the bottleneck);
    - ``steps``: the same number of training steps for both, at least :data:`CONTROL_MIN_STEPS`.

    Args:
        design: The reader's dict.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult` that names what makes the design unfair or weak
        (chapter 1).
    """
    keys = ("attention_hidden", "plain_hidden", "seeds", "lengths", "steps")
    if not isinstance(design, Mapping):
        return CheckResult.of(False, "ch01.control.not_a_dict", language, keys=str(list(keys)),
                              type=type(design).__name__)
    missing = [k for k in keys if k not in design]
    if missing:
        return CheckResult.of(False, "ch01.control.missing", language, missing=str(missing))
    if any(design[k] is ... for k in keys):
        return CheckResult.of(False, "ch01.control.ellipsis", language)
    for k in ("seeds", "lengths", "steps"):
        if isinstance(design[k], Mapping):  # one value per model: the arms would differ in more than attention
            return CheckResult.of(False, "ch01.control.per_model", language, key=repr(k))
    for k in ("attention_hidden", "plain_hidden", "steps"):
        value = design[k]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return CheckResult.of(False, "ch01.control.not_positive", language, key=repr(k), value=repr(value))
    try:
        seeds = [int(s) for s in design["seeds"]]
        lengths = [int(n) for n in design["lengths"]]
    except Exception:  # not a sequence of ints
        return CheckResult.of(False, "ch01.control.not_lists", language)
    if len(set(seeds)) < 3:
        return CheckResult.of(False, "ch01.control.few_seeds", language, n=len(set(seeds)))
    if len(set(lengths)) < 3 or min(lengths) < 1:
        return CheckResult.of(False, "ch01.control.few_lengths", language)
    if max(lengths) < CONTROL_MIN_LONGEST:
        return CheckResult.of(False, "ch01.control.too_short", language, longest=max(lengths),
                              minimum=CONTROL_MIN_LONGEST)
    if min(lengths) > CONTROL_MAX_SHORTEST:
        return CheckResult.of(False, "ch01.control.no_short", language, shortest=min(lengths),
                              maximum=CONTROL_MAX_SHORTEST)
    if design["steps"] < CONTROL_MIN_STEPS:
        return CheckResult.of(False, "ch01.control.few_steps", language, steps=design["steps"],
                              minimum=CONTROL_MIN_STEPS)
    attention_params = parameter_count(design["attention_hidden"], attention=True)
    plain_params = parameter_count(design["plain_hidden"], attention=False)
    counts = phrase("ch01.control.counts", attention_hidden=design["attention_hidden"],
                     attention_params=attention_params, plain_hidden=design["plain_hidden"], plain_params=plain_params)
    if design["plain_hidden"] == design["attention_hidden"]:
        return CheckResult.of(False, "ch01.control.same_hidden", language, counts=counts)
    if plain_params < attention_params:
        return CheckResult.of(False, "ch01.control.fewer", language, counts=counts)
    if plain_params > 1.5 * attention_params:
        return CheckResult.of(False, "ch01.control.too_many", language, counts=counts)
    return CheckResult.of(True, "ch01.control.passed", language, counts=counts, n_seeds=len(set(seeds)),
                          steps=design["steps"], lengths=str(sorted(set(lengths))))
