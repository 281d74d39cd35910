"""Exercise 4 of lab 2: vectorise a looped cosine similarity.

Contract (stated in the lab): ``fast_cosine(query, key)`` takes ``(L, E)`` and ``(S, E)`` and returns the
cosine similarities ``(L, S)`` of :func:`.looped_cosine_scores` (a norm below ``eps`` counts as ``eps``: a zero
vector scores 0), with no Python loop over vectors, without PyTorch's ``cosine_similarity`` (nor the
package, SciPy or scikit-learn), in PyTorch (the checker counts its PyTorch calls), at least
:data:`.SPEEDUP_REQUIRED` times faster than the loop.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from ... import seeding
from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch02 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import LEAVING_TORCH, LIBRARIES, CallWatch
from ..reader import allclose, call_watched, checker, draw_int, verdict
from ..running import run_answer
from .scores import max_error, quoting_failure, scores_of_shape, two_lengths

__all__ = ["check_vectorised_cosine", "looped_cosine_scores", "SPEEDUP_REQUIRED"]

ELSEWHERE: tuple[Any, ...] = (torch.cosine_similarity, *LIBRARIES, *LEAVING_TORCH)
"""PyTorch's cosine similarity (``nn.functional.cosine_similarity`` is the same function, ``nn.CosineSimilarity``
calls it), SciPy and scikit-learn, and leaving PyTorch, where the checker cannot count the calls."""

SPEEDUP_REQUIRED = 10
"""How many times faster than the pair loop a vectorised cosine must be. Both are timed the same way — in a thread
of their own, unwatched, on one PyTorch thread, the best of several calls (a right answer measured about 300x on
this book's 2-core machine under load; a loop over rows, 10 to 20x, fails the call count first)."""


def looped_cosine_scores(query: Tensor, key: Tensor, eps: float = 1e-8) -> Tensor:
    """Cosine similarity of every query with every key, one pair at a time (the slow reference).

    A vector whose norm is below ``eps`` is divided by ``eps`` instead (so a zero vector scores 0), as in
    :func:`helpers.scores.cosine_scores`.

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


def _cosine(q: Tensor, k: Tensor) -> Tensor:
    return (q / q.norm(dim=-1, keepdim=True).clamp_min(1e-8)) @ (k / k.norm(dim=-1, keepdim=True).clamp_min(1e-8)).T


MISTAKES = (
    Mistake("ch02.cosine.plain_dot", lambda q, k: q @ k.T),
    Mistake("ch02.cosine.queries_only", lambda q, k: q @ k.T / q.norm(dim=-1, keepdim=True)),
    Mistake("ch02.cosine.keys_only", lambda q, k: q @ k.T / k.norm(dim=-1)),
    Mistake("ch02.cosine.squared_norms", lambda q, k: q @ k.T / (q.norm(dim=-1, keepdim=True) ** 2
                                                                 * k.norm(dim=-1) ** 2)),
)

CASES = (("5 queries, 3 keys", dict(L=5, S=3, E=6)), ("4 queries, 7 keys", dict(L=4, S=7, E=3)))

_LOOP_CALLS = 1.5
"""An answer that makes more than this many times its calls at the small size (plus ``_CALL_SLACK``) when the
inputs are several times longer is looping over vectors: a vectorised one makes the same calls at any size."""
_CALL_SLACK = 10


def _fresh(gen: torch.Generator) -> dict[str, int]:
    L, S = two_lengths(3, 8, gen)
    return dict(L=L, S=S, E=draw_int(3, 8, gen))


_TIMING_SECONDS = 0.2
"""How long the timing keeps calling a fast function (at least ``repeats`` calls, at most 1,000) — on a loaded
machine most calls of a 50-microsecond function are preempted, and the fastest of many is the one that was not."""


def _best_time(fn: Callable[..., Any], *args: Any, repeats: int) -> float:
    """The fastest of at least ``repeats`` calls (more, up to :data:`._TIMING_SECONDS`, when they are fast), timed
    inside a thread of their own, on one PyTorch thread: the answer and the loop are timed the same way (no watch
    slows either down)."""
    from helpers.train import num_threads

    def timed() -> float:
        best, calls, began = math.inf, 0, time.perf_counter()
        while calls < repeats or (calls < 1000 and time.perf_counter() - began < _TIMING_SECONDS):
            start = time.perf_counter()
            fn(*args)
            best = min(best, time.perf_counter() - start)
            calls += 1
        return best

    with num_threads(1):
        return run_answer(timed)


@checker
def check_vectorised_cosine(fn: Callable[[Tensor, Tensor], Tensor], *, speed_size: int = 64) -> CheckResult:
    """Check ``fn(query, key) -> scores``, a vectorised :func:`.looped_cosine_scores`.

    Compared with :func:`helpers.scores.cosine_scores` on two named cases and a fresh one, then on inputs where
    one query and one key are zero vectors (their scores must be 0, not NaN), then on inputs of ``speed_size``
    queries and ``3/4`` of them keys: the result must still be right, the number of calls it makes must not grow
    with the size (a loop over vectors does), and it must be at least :data:`.SPEEDUP_REQUIRED` times faster than
    the pair loop, both timed the same way.

    Args:
        fn: The reader's function.
        speed_size: Queries of the timing test (``>= 48``).

    Returns:
        The verdict, naming the mistake (missing normalisation, squared norms, NaN, a loop, slow).

    Raises:
        ValueError: ``speed_size`` is below 48.
    """
    if isinstance(speed_size, bool) or not isinstance(speed_size, int) or speed_size < 48:
        raise ValueError(f"speed_size must be an int >= 48, got {speed_size!r}")

    def one(case: Case) -> CheckResult | None:
        query, key = case.randn(case["L"], case["E"], dtype=torch.float64), case.randn(case["S"], case["E"],
                                                                                       dtype=torch.float64)
        result = scores_of_shape(call_watched(fn, query, key, forbidden=ELSEWHERE), query, key)
        if allclose(result, _cosine(query, key)):
            return None
        mistake = first_mistake(result, MISTAKES, query, key, same=allclose)
        return verdict(False, mistake.key) if mistake else verdict(False, "ch02.cosine.values",
                                                                   error=max_error(result, _cosine(query, key)))

    failure = each_case(one, CASES, seed=2400, fresh=_fresh)
    if failure is not None:
        return failure
    gen = seeding.generator(2499)  # the zero-vector and timing inputs: seeded, like the named cases
    zero_q, zero_k = torch.randn(6, 5, generator=gen, dtype=torch.float64), torch.randn(4, 5, generator=gen,
                                                                                        dtype=torch.float64)
    zero_q[2], zero_k[1] = 0.0, 0.0
    with quoting_failure("ch02.cosine.zero_failed"):
        result = scores_of_shape(call_watched(fn, zero_q, zero_k, forbidden=ELSEWHERE), zero_q, zero_k)
    if not torch.isfinite(result).all():
        return verdict(False, "ch02.cosine.nan")
    if not allclose(result, _cosine(zero_q, zero_k)):
        got = result[2] if not allclose(result[2], _cosine(zero_q, zero_k)[2]) else result[:, 1]
        return verdict(False, "ch02.cosine.zero_scores", query=2, key=1, got=str([round(float(x), 4) for x in got]))
    big_l, big_s, big_e = speed_size, speed_size * 3 // 4, 32
    big_q, big_k = torch.randn(big_l, big_e, generator=gen, dtype=torch.float64), torch.randn(
        big_s, big_e, generator=gen, dtype=torch.float64)
    small, big = CallWatch(ELSEWHERE, arguments=()), CallWatch(ELSEWHERE, arguments=())
    call_watched(fn, zero_q, zero_k, watch=small)
    result = scores_of_shape(call_watched(fn, big_q, big_k, watch=big), big_q, big_k)
    if big.calls > _LOOP_CALLS * small.calls + _CALL_SLACK:
        return verdict(False, "ch02.cosine.loops", small=small.calls, small_l=6, small_s=4, big=big.calls,
                       big_l=big_l, big_s=big_s)
    if not allclose(result, _cosine(big_q, big_k)):
        return verdict(False, "ch02.cosine.big_wrong", L=big_l, S=big_s, E=big_e,
                       error=max_error(result, _cosine(big_q, big_k)))
    yours = max(_best_time(fn, big_q, big_k, repeats=5), 1e-7)
    loop = _best_time(looped_cosine_scores, big_q, big_k, repeats=2)
    if yours * SPEEDUP_REQUIRED > loop:
        return verdict(False, "ch02.cosine.slow", L=big_l, S=big_s, your_ms=yours * 1e3, loop_ms=loop * 1e3)
    return verdict(True, "ch02.cosine.passed", speedup=loop / yours, L=big_l, S=big_s)
