"""Checkers for the exercises of chapter 2, "Why a dot product" (``notebooks/02-dot-product-lab.ipynb``).

Each checker takes the reader's answer, never raises on a wrong one (exceptions from the
reader's code are caught and reported), and returns a :class:`~helpers.exercises.CheckResult`
whose message names the mistake: a transpose, a sign, a missing normalisation, a scale.

- :func:`check_dot_scores`: dot-product scores as one batched matrix product.
- :func:`check_dot_flops`: the operation count of ``Q K^T``.
- :func:`check_euclidean_scores`: Euclidean distance turned into a usable score.
- :func:`check_vectorised_cosine`: a looped cosine similarity, vectorised.
- :func:`check_why_additive_is_slower`: reading the measured cost table, a choice among stated
  mechanisms (:func:`additive_options`), with feedback on each.
- :func:`check_cosine_bound`: predict, before a run, the most weight cosine scores can give one slot.
- :func:`check_temperature_ablation`: design the run that tells whether the cosine's trouble is
  its bounded range or its division by lengths.

Every checker runs the reader's code under the guard (:func:`helpers.exercises.reader.call_watched`):
an answer that reaches a function of the package (or, for the cosine, PyTorch's
``cosine_similarity``), by whatever route, is refused, naming the function. The inputs are drawn
afresh at every call (:func:`helpers.exercises.reader.fresh_generator`), shapes included, so no
table of answers for fixed inputs passes. The experiments are the checkers' own runs: exercise 6,
once the predicted bound is right, trains the plain-cosine model and shows its largest weight;
exercise 7 trains the reader's settings next to that run, its control (never a result handed in).

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from its messages in ``helpers.exercises.catalogue.ch02`` (this
chapter's part of the checkers' catalogue, :mod:`helpers.exercises.messages`), as :mod:`helpers.exercises.ch04` does.
"""

from __future__ import annotations

import functools
import math
import operator
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields, replace
from numbers import Real
from typing import Any, Callable

import torch
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch02 import MESSAGES
from helpers.exercises.guard import ARRAYS, CallWatch
from helpers.exercises.messages import LANGUAGES, text
from helpers.exercises.reader import (
    Rejected,
    allclose,
    as_tensor,
    call_reader_function,
    call_watched,
    checker,
    fresh_generator,
    fresh_int,
)
from helpers.experiments import cosine_bound, score_cost, score_learning
from helpers.experiments.recall import RecallConfig, RecallRun, train_recall
from helpers.scores import cosine_scores, dot_scores, neg_euclidean_scores
from helpers.train import num_threads

__all__ = [
    "check_dot_scores",
    "SPEEDUP_REQUIRED",
    "check_dot_flops",
    "check_euclidean_scores",
    "check_vectorised_cosine",
    "ADDITIVE_OPTIONS",
    "additive_options",
    "check_why_additive_is_slower",
    "looped_cosine_scores",
    "check_cosine_bound",
    "check_temperature_ablation",
]


def _inputs(*shapes: tuple[int, ...], generator: torch.Generator) -> list[Tensor]:
    return [torch.randn(*shape, generator=generator, dtype=torch.float64) for shape in shapes]


def _two_lengths(low: int, high: int, generator: torch.Generator) -> tuple[int, int]:
    """Fresh ``L != S`` in ``[low, high]`` (a transposed result cannot pass by accident)."""
    L = fresh_int(low, high, generator)
    S = low + (L - low + fresh_int(1, high - low, generator)) % (high - low + 1)
    return L, S


_SCORES = MESSAGES["ch02.what.scores"]  # the phrase "scores" in every language (for as_tensor)


def _in_every_language(verdict: CheckResult) -> dict[str, str]:
    """A verdict's message rendered in every language: a field of another message (a verdict on the
    reader's function, quoted inside this chapter's sentence), rendered in that one's language.
    English keeps its message as it always was; the others drop a final full stop (``。``), which the
    sentence around it supplies."""
    return {language: verdict.in_language(language).message.rstrip("" if language == LANGUAGES[0] else "。")
            for language in LANGUAGES}


@contextmanager
def _quoting_failure(key: str, language: str | None) -> Iterator[None]:
    """Inside: a rejected answer becomes the verdict ``key``, whose field ``failure`` quotes the
    rejection (a second call of the reader's function failed where the first one worked)."""
    try:
        yield
    except Rejected as rejected:
        raise Rejected(CheckResult.of(False, key, language, failure=_in_every_language(rejected.verdict))) from None


_COSINE_ELSEWHERE: tuple[Any, ...] = (torch.cosine_similarity, *ARRAYS)
"""PyTorch's cosine similarity (``torch.nn.functional.cosine_similarity`` is the same function, and
``nn.CosineSimilarity`` calls it): broadcast over pairs, it is exercise 4's answer done for you; and the
way out of PyTorch (:data:`~helpers.exercises.guard.ARRAYS`: SciPy's ``cdist``, scikit-learn's cosine)."""


def _max_error(a: Tensor, b: Tensor) -> float:
    return float((a.double() - b.double()).abs().max())


# --------------------------------------------------------------------------------------------
# Exercise 1: dot-product scores as one batched matrix product
# --------------------------------------------------------------------------------------------


@checker
def check_dot_scores(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(query, key) -> scores``: every query against every key, ``q_i . k_j``.

    Tried on ``(B, H, L, E)`` queries and ``(B, H, S, E)`` keys with ``L != S``, then on plain
    ``(L, E)``/``(S, E)`` matrices (the same line of code must work for any number of leading
    dimensions); shapes and values are drawn afresh at every call. Compared with
    :func:`helpers.scores.dot_scores`, which the answer may not call (nor any other function of the
    package).

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (transposed result, wrong transpose, scale, batch mix-up).
    """
    gen = fresh_generator()
    B, H, E = fresh_int(2, 3, gen), fresh_int(2, 4, gen), fresh_int(3, 12, gen)
    L, S = _two_lengths(3, 9, gen)
    query, key = _inputs((B, H, L, E), (B, H, S, E), generator=gen)
    expected = dot_scores(query, key)  # (B, H, L, S)
    L2, S2 = _two_lengths(2, 10, gen)
    E2 = fresh_int(2, 12, gen)
    q2, k2 = _inputs((L2, E2), (S2, E2), generator=gen)
    expected2 = dot_scores(q2, k2)  # (L2, S2); the references first: the reader's code runs watched
    try:
        result = call_watched(fn, query, key, forbidden=ARRAYS, language=language)
    except Rejected as rejected:
        english = rejected.verdict.in_language("en").message  # the hint depends on the error, not on the language
        if rejected.verdict.key == "reader.raised" and any(
                words in english for words in ("size mismatch", "must match", "shapes cannot", "dimension")):
            return CheckResult.of(False, "ch02.dot.transpose_hint", language,
                                  failure=_in_every_language(rejected.verdict))
        raise
    result = as_tensor(result, _SCORES, language)
    if result.shape == expected.transpose(-2, -1).shape and allclose(result, expected.transpose(-2, -1)):
        return CheckResult.of(False, "ch02.dot.transposed", language, shape=tuple(result.shape))
    if result.shape != expected.shape:
        return CheckResult.of(False, "ch02.dot.shape", language, query=tuple(query.shape), key=tuple(key.shape),
                              expected=tuple(expected.shape), got=tuple(result.shape))
    if allclose(result, expected / math.sqrt(query.size(-1))):
        return CheckResult.of(False, "ch02.dot.scaled", language)
    if not allclose(result, expected):
        mixed = query @ key.flip(0).transpose(-2, -1)
        if allclose(result, mixed) or allclose(result, query @ key.flip(1).transpose(-2, -1)):
            return CheckResult.of(False, "ch02.dot.batch_mixed", language)
        return CheckResult.of(False, "ch02.dot.values", language, error=_max_error(result, expected))
    with _quoting_failure("ch02.dot.matrices_failed", language):
        result2 = call_watched(fn, q2, k2, forbidden=ARRAYS, language=language)
    result2 = as_tensor(result2, _SCORES, language)
    if not allclose(result2, expected2):
        return CheckResult.of(False, "ch02.dot.matrices_wrong", language, shape=tuple(result2.shape))
    return CheckResult.of(True, "ch02.dot.passed", language)


# --------------------------------------------------------------------------------------------
# Exercise 2: the operation count of Q K^T
# --------------------------------------------------------------------------------------------


def _flops_counts(L: int, S: int, E: int) -> dict[str, set[int]]:
    """The right operation counts of ``Q K^T`` and each miscount the checker names, by verdict."""
    return {"right": {2 * L * S * E, L * S * (2 * E - 1)}, "multiplies_only": {L * S * E}, "scores_only": {L * S},
            "l_and_s": {2 * L * L * E, 2 * S * S * E, L * L * E, S * S * E},
            "e_squared": {2 * L * S * E * E, L * S * E * E}}


def _flops_sizes(generator: torch.Generator) -> tuple[int, int, int]:
    """Fresh ``(L, S, E)`` for which every miscount the checker names gives a number of its own
    (e.g. not ``S = 2L``, where ``2 L L E = L S E``, nor ``L E = S``, where ``2 L S E^2 = 2 S S E``)."""
    while True:
        L, S = _two_lengths(2, 40, generator)
        E = fresh_int(3, 128, generator)
        counts = list(_flops_counts(L, S, E).values())
        if sum(len(c) for c in counts) == len(set().union(*counts)):
            return L, S, E


@checker
def check_dot_flops(fn: Callable[[int, int, int], int], *, language: str | None = None) -> CheckResult:
    """Check ``fn(L, S, E) -> int``: floating-point operations of ``Q K^T`` (one multiply and one
    add per term, so ``2 L S E``; the exact ``L S (2E - 1)`` is accepted too), at sizes drawn afresh
    at every call. The answer may not call the package (e.g.
    :func:`helpers.experiments.score_cost.score_flops`).

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (multiplies only, L and S confused, E forgotten).
    """
    gen = fresh_generator()
    for _ in range(3):
        L, S, E = _flops_sizes(gen)
        result = call_watched(fn, L, S, E, language=language)
        if result is None:
            return CheckResult.of(False, "ch02.flops.none", language)
        if not isinstance(result, (int, float)) or isinstance(result, bool):
            return CheckResult.of(False, "ch02.flops.not_number", language, type=type(result).__name__)
        counts = _flops_counts(L, S, E)
        if result in counts["right"]:
            continue
        if result in counts["multiplies_only"]:
            return CheckResult.of(False, "ch02.flops.multiplies_only", language, L=L, S=S, E=E, result=result)
        if result in counts["scores_only"]:
            return CheckResult.of(False, "ch02.flops.scores_only", language, result=result)
        if result in counts["l_and_s"]:
            return CheckResult.of(False, "ch02.flops.l_and_s", language, L=L, S=S, result=result)
        if result in counts["e_squared"]:
            return CheckResult.of(False, "ch02.flops.e_squared", language, result=result)
        return CheckResult.of(False, "ch02.flops.wrong", language, L=L, S=S, E=E, result=result,
                              expected=2 * L * S * E)
    return CheckResult.of(True, "ch02.flops.passed", language)


# --------------------------------------------------------------------------------------------
# Exercise 3: make Euclidean distance usable as a score
# --------------------------------------------------------------------------------------------


def _reader_scores(fn: Any, query: Tensor, key: Tensor, forbidden: tuple[Any, ...] = (),
                   language: str | None = None) -> Tensor:
    """The reader's ``(L, S)`` scores for 2-D ``query``/``key`` (computed under the guard, which also
    refuses ``forbidden``); :class:`Rejected` with the verdict (in ``language``) on why there are none."""
    scores = call_watched(fn, query, key, forbidden=(*forbidden, *ARRAYS), language=language)
    return _scores_of_shape(scores, query, key, language)


def _scores_of_shape(result: Any, query: Tensor, key: Tensor, language: str | None) -> Tensor:
    """``result`` if it is a tensor of scores of shape ``(L, S)``, else :class:`Rejected` saying what it is."""
    result = as_tensor(result, _SCORES, language)
    (L, E), S = query.shape, key.size(0)
    if result.shape == (L, S):
        return result
    if result.shape == (S, L):
        raise Rejected(CheckResult.of(False, "ch02.scores.transposed", language, S=S, L=L))
    if result.shape != (L, S):
        raise Rejected(CheckResult.of(False, "ch02.scores.shape", language, L=L, E=E, S=S, got=tuple(result.shape)))
    return result


@checker
def check_euclidean_scores(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(query, key) -> scores`` built from Euclidean distance, to be fed to softmax.

    The reference is :func:`helpers.scores.neg_euclidean_scores`, ``-|q_i - k_j|^2``: larger
    for nearer keys, 0 for a key equal to the query. Scores that differ from it by a constant
    per query (e.g. ``2 q.k - |k|^2``) give the same softmax weights and are accepted, with a note.
    The inputs, ``(L, E)`` and ``(S, E)`` with ``L != S``, are drawn afresh at every call, and one
    key equals one query (distance 0). The answer may not call the package.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (sign, square root, reciprocal, transposed).
    """
    gen = fresh_generator()
    L, S = _two_lengths(3, 9, gen)
    E = fresh_int(2, 8, gen)
    query, key = _inputs((L, E), (S, E), generator=gen)
    key[fresh_int(0, S - 1, gen)] = query[fresh_int(0, L - 1, gen)]  # one key equals a query: distance 0
    expected = neg_euclidean_scores(query, key)  # (L, S)
    distance_sq = -expected
    result = _reader_scores(fn, query, key, language=language)
    result = result.double()
    if allclose(result, distance_sq) or allclose(result, distance_sq.clamp_min(0).sqrt()):
        return CheckResult.of(False, "ch02.euclidean.sign", language)
    if allclose(result, -distance_sq.clamp_min(0).sqrt()):
        return CheckResult.of(False, "ch02.euclidean.not_squared", language)
    if not torch.isfinite(result).all():
        return CheckResult.of(False, "ch02.euclidean.not_finite", language)
    if allclose(result, expected):
        return CheckResult.of(True, "ch02.euclidean.passed", language)
    shift = result - expected  # constant along each row <=> same softmax
    if torch.allclose(shift, shift[:, :1].expand_as(shift), rtol=1e-5, atol=1e-6):
        return CheckResult.of(True, "ch02.euclidean.passed_shifted", language)
    return CheckResult.of(False, "ch02.euclidean.values", language, error=_max_error(result, expected))


# --------------------------------------------------------------------------------------------
# Exercise 4: vectorise a looped cosine similarity
# --------------------------------------------------------------------------------------------


def looped_cosine_scores(query: Tensor, key: Tensor, eps: float = 1e-8) -> Tensor:
    """Cosine similarity of every query with every key, one pair at a time (the slow reference).

    A vector whose norm is below ``eps`` is divided by ``eps`` instead (so a zero vector scores 0),
    as in :func:`helpers.scores.cosine_scores`.

    Shape:
        query ``(L, E)``, key ``(S, E)`` -> ``(L, S)``.
    """
    L, S = query.size(0), key.size(0)
    scores = torch.empty(L, S, dtype=query.dtype)
    for i in range(L):
        for j in range(S):
            q_norm = max(float(query[i].norm()), eps)
            k_norm = max(float(key[j].norm()), eps)
            scores[i, j] = torch.dot(query[i], key[j]) / (q_norm * k_norm)
    return scores


def _best_of(fn: Callable[[], Any], repeats: int = 3) -> float:
    """Fastest of ``repeats`` calls on one PyTorch thread (threads fighting over a shared CPU
    can make a microsecond product take milliseconds)."""
    best = math.inf
    with num_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
    return best


def _calls_made(fn: Any, query: Tensor, key: Tensor) -> int:
    """How many calls ``fn(query, key)`` makes while it runs (its own functions and PyTorch's), counted
    by a watch. Only the count is used: the verdict on the answer is :func:`call_watched`'s."""
    watch = CallWatch(_COSINE_ELSEWHERE)
    call_reader_function(fn, query, key, watch=watch)
    return watch.calls


_LOOP_CALLS = 1.5
"""An answer that makes more than this many times its calls at the small size (plus ``_CALL_SLACK``)
when the inputs are several times longer is looping over vectors: a vectorised one makes the same
calls whatever the size."""

_CALL_SLACK = 10


SPEEDUP_REQUIRED = 3
"""How many times faster than the pair loop a vectorised cosine must be. The answer is timed under the
watch, which traces its calls, and the loop is not: a right answer measured from 11x up on this book's
2-core machine, and 9.8x in 2 checks of 110 with the machine busy (when 10x was required). 3x leaves
room for that and still fails a loop over pairs, which the call count catches first."""


@checker
def check_vectorised_cosine(fn: Callable[[Tensor, Tensor], Tensor], *, speed_size: int = 64,
                            language: str | None = None) -> CheckResult:
    """Check ``fn(query, key) -> scores``, a vectorised :func:`looped_cosine_scores`.

    Compared with :func:`helpers.scores.cosine_scores` on fresh ``(L, E)``/``(S, E)`` inputs, then on
    inputs where one query and one key are zero vectors (their scores must be 0, not NaN). Then run
    on inputs of fresh sizes up to ``speed_size`` (at least 6 times longer): its result must still be
    right, the number of calls it makes must not grow with the size (a loop over vectors does), and
    it must be at least :data:`SPEEDUP_REQUIRED` times faster than the pair loop (less the watch's own cost,
    timed on a call that does nothing). The answer may not call the package, nor
    PyTorch's ``cosine_similarity``.

    Args:
        fn: The reader's function.
        speed_size: Largest size of the timing test (``>= 48``).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (missing normalisation, squared norms, NaN, a loop, slow).
    """
    if isinstance(speed_size, bool) or not isinstance(speed_size, int) or speed_size < 48:
        raise ValueError(f"speed_size must be an int >= 48, got {speed_size!r}")
    gen = fresh_generator()
    L, S = _two_lengths(3, 8, gen)
    E = fresh_int(3, 8, gen)
    query, key = _inputs((L, E), (S, E), generator=gen)
    expected = cosine_scores(query, key)
    zero_at = fresh_int(0, L - 1, gen), fresh_int(0, S - 1, gen)
    zero_query, zero_key = query.clone(), key.clone()
    zero_query[zero_at[0]], zero_key[zero_at[1]] = 0.0, 0.0  # one query and one key are zero vectors
    expected_zero = cosine_scores(zero_query, zero_key)
    big_l, big_s = _two_lengths(speed_size * 3 // 4, speed_size, gen)
    big_e = fresh_int(16, 48, gen)
    big_q, big_k = _inputs((big_l, big_e), (big_s, big_e), generator=gen)
    expected_big = cosine_scores(big_q, big_k)  # the references first: the reader's code runs watched
    result = _reader_scores(fn, query, key, _COSINE_ELSEWHERE, language)
    q_norm = query.norm(dim=-1, keepdim=True)  # (L, 1)
    k_norm = key.norm(dim=-1)  # (S,)
    dots = query @ key.T  # (L, S)
    if allclose(result, dots):
        return CheckResult.of(False, "ch02.cosine.plain_dot", language)
    if allclose(result, dots / q_norm):
        return CheckResult.of(False, "ch02.cosine.queries_only", language)
    if allclose(result, dots / k_norm):
        return CheckResult.of(False, "ch02.cosine.keys_only", language)
    if allclose(result, dots / (q_norm**2 * k_norm**2)):
        return CheckResult.of(False, "ch02.cosine.squared_norms", language)
    if not allclose(result, expected):
        return CheckResult.of(False, "ch02.cosine.values", language, error=_max_error(result, expected))
    with _quoting_failure("ch02.cosine.zero_failed", language):
        result_zero = call_watched(fn, zero_query, zero_key, forbidden=_COSINE_ELSEWHERE, language=language)
    result_zero = _scores_of_shape(result_zero, zero_query, zero_key, language)
    if not torch.isfinite(result_zero).all():
        return CheckResult.of(False, "ch02.cosine.nan", language)
    if not allclose(result_zero, expected_zero):
        row, column = result_zero[zero_at[0]], result_zero[:, zero_at[1]]
        got = row if not allclose(row, expected_zero[zero_at[0]]) else column
        return CheckResult.of(False, "ch02.cosine.zero_scores", language, query=zero_at[0], key=zero_at[1],
                              got=str([round(float(x), 4) for x in got]))
    small_calls, big_calls = _calls_made(fn, zero_query, zero_key), _calls_made(fn, big_q, big_k)
    if big_calls > _LOOP_CALLS * small_calls + _CALL_SLACK:
        return CheckResult.of(False, "ch02.cosine.loops", language, small=small_calls, small_l=L, small_s=S,
                              big=big_calls, big_l=big_l, big_s=big_s)
    timings, watch_cost = [], math.inf
    for _ in range(5):  # timed under the watch: what is timed is what was checked
        with num_threads(1):
            start = time.perf_counter()
            result_big = call_watched(fn, big_q, big_k, forbidden=_COSINE_ELSEWHERE, language=language)
            timings.append(time.perf_counter() - start)
            # The watch's own cost (about a millisecond: the hop to the answer thread and back, more when
            # other threads hold the interpreter) is not the answer's: measured on a call that does nothing.
            start = time.perf_counter()
            call_watched(operator.is_, big_q, big_k, forbidden=_COSINE_ELSEWHERE, language=language)
            watch_cost = min(watch_cost, time.perf_counter() - start)
        result_big = _scores_of_shape(result_big, big_q, big_k, language)
        if not allclose(result_big, expected_big):
            return CheckResult.of(False, "ch02.cosine.big_wrong", language, L=big_l, S=big_s, E=big_e,
                                  error=_max_error(result_big, expected_big))
    your_time = max(min(timings) - watch_cost, 1e-6)
    loop_time = _best_of(lambda: looped_cosine_scores(big_q, big_k), repeats=3)
    if your_time * SPEEDUP_REQUIRED > loop_time:
        return CheckResult.of(False, "ch02.cosine.slow", language, L=big_l, S=big_s, your_ms=your_time * 1e3,
                              loop_ms=loop_time * 1e3)
    return CheckResult.of(True, "ch02.cosine.passed", language, speedup=loop_time / max(your_time, 1e-9),
                          L=big_l, S=big_s)


# --------------------------------------------------------------------------------------------
# Exercise 5: why additive scoring is slower
# --------------------------------------------------------------------------------------------

ADDITIVE_OPTIONS: dict[str, str] = {letter: MESSAGES[f"ch02.additive.option.{letter}"][LANGUAGES[0]]
                                    for letter in "abcd"}
"""The choices of exercise 5 (why is additive scoring slower than the dot product?), in English."""


def additive_options(language: str | None = None) -> dict[str, str]:
    """The choices of exercise 5, letter -> the mechanism it states, in ``language``.

    Args:
        language: ``"en"``, ``"zh"``; ``None``: the default (:func:`helpers.exercises.get_language`).

    Returns:
        ``{"a": ..., "b": ..., "c": ..., "d": ...}``.
    """
    return {letter: text(f"ch02.additive.option.{letter}", language) for letter in ADDITIVE_OPTIONS}


_ADDITIVE_RIGHT = "b"


_BREAKDOWN_SIZE = 256
"""L = S of the timing that exercise 5's verdicts report (helpers.experiments.score_cost.additive_time_breakdown)."""


@checker
def check_why_additive_is_slower(choice: str, *, language: str | None = None) -> CheckResult:
    """Check the answer to "why is additive scoring slower than the dot product?" (a, b, c or d).

    Args:
        choice: One of the keys of :data:`ADDITIVE_OPTIONS`.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, with why each wrong option is wrong; the right answer's (and option d's) with
        the share of each step of additive scoring, timed when the checker runs.
    """
    letter = choice.strip().lower().strip("()") if isinstance(choice, str) else None
    if letter not in ADDITIVE_OPTIONS:
        return CheckResult.of(False, "ch02.additive.one_letter", language, letters=", ".join(sorted(ADDITIVE_OPTIONS)),
                              got=repr(choice))
    fields: dict[str, Any] = {}
    if letter in (_ADDITIVE_RIGHT, "d"):  # the verdict reports where the time goes, timed now
        steps = score_cost.additive_time_breakdown(_BREAKDOWN_SIZE, repeats=3, budget_s=0.5)
        total = sum(steps[name] for name in score_cost.ADDITIVE_STEPS)
        fields = {"n": _BREAKDOWN_SIZE, "add": steps["broadcast add"] / total, "tanh": steps["tanh"] / total,
                  "reduce": steps["reduction with v"] / total, "proj": steps["projections"] / total}
    return CheckResult.of(letter == _ADDITIVE_RIGHT, f"ch02.additive.{letter}", language, **fields)


# --------------------------------------------------------------------------------------------
# The chapter's plain-cosine run, trained by the checkers of exercises 6 and 7
# --------------------------------------------------------------------------------------------


@contextmanager
def _flush_denormal() -> Iterator[None]:
    """Denormal floats count as 0 on the CPU within the block (a saturated softmax makes many, and they
    slow its backward pass several times; the runs' results do not change); restored afterwards."""
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


def _train_accuracy(config: RecallConfig, seed: int, label: str) -> float:
    """Held-out accuracy after training ``config`` with ``seed`` (the checker's own run)."""
    with _flush_denormal():
        return train_recall(config, seed=seed, label=label).final_test_accuracy


@functools.lru_cache(maxsize=4)
def _plain_cosine_run(seed: int) -> tuple[float, float]:
    """The chapter's plain-cosine run, trained by the checker with ``seed`` (once per seed): its held-out
    accuracy and the largest weight it gives any slot on the held-out sequences. Exercise 6 shows it
    next to the reader's bound; exercise 7 uses it as the control."""
    kept: list[torch.nn.Module] = []
    with _flush_denormal():
        run = train_recall(score_learning.score_config("cosine"), seed=seed, label="cosine",
                           callback=lambda step, model, history: kept.insert(0, model) if not kept else None)
    return run.final_test_accuracy, score_learning.max_weight_on_one_slot(kept[0])


@functools.lru_cache(maxsize=1)
def _task_ceiling() -> float:
    """The mean weight on the right slot that the best cosine geometry found for the chapter's task gives
    (:func:`helpers.experiments.cosine_bound.cosine_task_ceiling`, one seed), searched once per session."""
    return cosine_bound.cosine_task_ceiling(seeds=(0,)).mean_weight[0]


def _plain_cosine_control(seed: int) -> float:
    """Held-out accuracy of the plain-cosine run with ``seed``: the control of exercise 7 (the same run as
    the reader's but for the factor)."""
    return _plain_cosine_run(seed)[0]


def _step_size_control(seed: int, factor: float) -> float:
    """Held-out accuracy of the plain cosine at ``factor`` times the learning rate with ``seed``: the second
    control of exercise 7. A factor on the scores also makes every Adam step move them ``factor`` times as
    far; this run takes steps as large, with the plain cosine's bound and start."""
    plain = score_learning.score_config("cosine")
    return _train_accuracy(replace(plain, lr=plain.lr * factor), seed, "cosine, lr × factor")


# --------------------------------------------------------------------------------------------
# Exercise 6: predict, before a run, the most weight cosine scores can give one slot
# --------------------------------------------------------------------------------------------


@checker
def check_cosine_bound(fn: Callable[[int], float], *, language: str | None = None) -> CheckResult:
    """Check ``fn(S) -> float``: the largest softmax weight that scores in ``[-1, 1]`` (cosines) can
    give one of ``S`` slots, ``e / (e + (S - 1) / e)`` (the match at +1, every other slot at -1); then,
    the prediction made, run the experiment: train the chapter's plain-cosine model (seed 0) and show the
    largest weight it ever gives a slot next to the bound for its 24 slots.

    Tried at S = 1, 2 and 24 and at two sizes drawn afresh at every call (one up to 200, one up to
    20,000), so no table of answers passes. The answer may not call the package (e.g.
    :func:`helpers.experiments.score_learning.cosine_weight_bound`).

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (others at 0 instead of -1, S instead of S - 1, no bound).
    """
    e = math.e
    gen = fresh_generator()
    sizes = (24, 2, fresh_int(3, 200, gen), fresh_int(201, 20_000, gen), 1)
    expected = {S: score_learning.cosine_weight_bound(S) for S in (*sizes, 100)}  # before the answer runs
    for S in sizes:
        result = call_watched(fn, S, language=language)
        if isinstance(result, Tensor) and result.numel() == 1:
            result = float(result)
        if not isinstance(result, (int, float)) or isinstance(result, bool):
            return CheckResult.of(False, "ch02.bound.not_number", language, type=type(result).__name__)
        result = float(result)
        if math.isclose(result, expected[S], rel_tol=1e-6):
            continue
        if S > 1 and math.isclose(result, e / (e + S - 1), rel_tol=1e-6):
            return CheckResult.of(False, "ch02.bound.perpendicular", language, S=S, others=S - 1, result=result)
        if math.isclose(result, e / (e + S / e), rel_tol=1e-6):
            return CheckResult.of(False, "ch02.bound.others", language, S=S)
        if S > 1 and math.isclose(result, 1.0):
            return CheckResult.of(False, "ch02.bound.all_weight", language)
        if S > 1 and math.isclose(result, 1 / S):
            return CheckResult.of(False, "ch02.bound.uniform", language, uniform=1 / S)
        return CheckResult.of(False, "ch02.bound.wrong", language, S=S, result=result, expected=expected[S])
    accuracy, measured = _plain_cosine_run(0)  # the run, after the prediction: trained here, not read from the lab
    return CheckResult.of(True, "ch02.bound.passed", language, bound_24=expected[24], bound_100=expected[100],
                          measured=measured, accuracy=accuracy, ceiling=_task_ceiling())


# --------------------------------------------------------------------------------------------
# Exercise 7: design the run that separates the cosine's bound from its division by lengths
# --------------------------------------------------------------------------------------------

_LIFTED_BOUND = 0.5
"""A factor lifts the bound enough to test it when one slot can take more than half the weight."""


@checker
def check_temperature_ablation(config: Any, *, seed: int = 0, target: float = 0.9,
                               language: str | None = None) -> CheckResult:
    """Check the reader's ablation: one :class:`~helpers.experiments.recall.RecallConfig` that differs
    from the chapter's plain-cosine run (``score_learning.score_config("cosine")``) only by a fixed
    factor on the scores, big enough that one slot can take most of the weight (a bound above 50 %);
    then train it and its control, the plain-cosine run, both with seed ``seed``, and check that it
    learns (held-out accuracy at least ``target``) where the control does not.

    A factor changes more than the bound: the scores start ``factor`` times as spread, and every Adam
    step moves them ``factor`` times as far. The checker trains a second control, the plain cosine at
    ``factor`` times the learning rate (steps as large, the bound and start unchanged), and names the
    bound only if that one does not learn; the verdict reports the starting spreads too.

    The comparison is fair by construction, and the checker holds it to that: all runs train
    ``score_config("cosine").steps`` steps (300) on the same batches, from the same initialisation
    (same seed), and are measured on the same 1,000 held-out sequences; only the factor differs.
    The checker takes the settings, never a result: a :class:`~helpers.experiments.recall.RecallRun`
    (or anything else) is refused, and the runs it reports are the ones it trained.

    A run that learns shows that dividing by the lengths (still in it) was not the problem.

    Args:
        config: The reader's settings.
        seed: Seed of the check's two training runs.
        target: Held-out accuracy the run must reach.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names what the design changes besides the factor, why the factor cannot
        tell, or what the two runs measured.
    """
    base = score_learning.score_config("cosine")
    if isinstance(config, RecallRun):
        return CheckResult.of(False, "ch02.ablation.result_given", language)
    if type(config) is not RecallConfig:  # a subclass could change how the run is made
        return CheckResult.of(False, "ch02.ablation.not_config", language, type=type(config).__name__)
    changed = [f.name for f in fields(RecallConfig) if getattr(config, f.name) != getattr(base, f.name)]
    if config.score != "cosine":
        return CheckResult.of(False, "ch02.ablation.other_score", language, score=repr(config.score))
    if not changed:
        return CheckResult.of(False, "ch02.ablation.unchanged", language)
    if config.learned_scale:
        return CheckResult.of(False, "ch02.ablation.learned", language)
    if changed != ["scale"]:
        others = [name for name in changed if name != "scale"]
        return CheckResult.of(False, "ch02.ablation.other_fields", language, changed=", ".join(others))
    if isinstance(config.scale, bool) or not isinstance(config.scale, Real) or not (
            math.isfinite(float(config.scale)) and float(config.scale) > 0):
        return CheckResult.of(False, "ch02.ablation.bad_factor", language, got=repr(config.scale))
    factor = float(config.scale)
    slots = 2 * config.num_pairs if config.slots == "tokens" else config.num_pairs
    best = 1.0 / (1.0 + (slots - 1) * math.exp(-2 * factor))  # match at +factor, the others at -factor
    if best <= _LIFTED_BOUND:  # the match cannot even take most of the weight: the bound still binds
        return CheckResult.of(False, "ch02.ablation.bound_too_low", language, factor=factor, slots=slots, best=best,
                              lifted=_LIFTED_BOUND)
    accuracy = _train_accuracy(config, seed, "cosine, fixed factor")
    control = _plain_cosine_control(seed)
    if accuracy < target:
        return CheckResult.of(False, "ch02.ablation.did_not_learn", language, best=best, accuracy=accuracy,
                              steps=config.steps, control=control)
    if control >= target:  # the control learned too: this seed cannot tell the two apart
        return CheckResult.of(False, "ch02.ablation.control_learned", language, accuracy=accuracy, control=control,
                              seed=seed)
    step_control = _step_size_control(seed, factor)
    if step_control >= target:  # bigger steps alone learned: the run cannot name the bound
        return CheckResult.of(False, "ch02.ablation.steps_learned", language, accuracy=accuracy, factor=factor,
                              step_control=step_control, seed=seed)
    spread_plain = score_learning.initial_statistics(base)["spread"]
    spread = score_learning.initial_statistics(config)["spread"]
    return CheckResult.of(True, "ch02.ablation.passed", language, factor=factor, accuracy=accuracy,
                          steps=config.steps, control=control, seed=seed, slots=slots, best=best,
                          bound_plain=score_learning.cosine_weight_bound(slots), spread_plain=spread_plain,
                          spread=spread, step_control=step_control)
