"""Exercise 3 of lab 2: make Euclidean distance usable as a score.

Contract (stated in the lab): ``distance_scores(query, key)`` takes ``(L, E)`` and ``(S, E)`` and returns
minus the *squared* distance, ``−‖q_i − k_j‖²``, shape ``(L, S)``, as ``helpers.scores.neg_euclidean_scores``
does (scores that differ from it by a constant per query give the same softmax and pass too). The package
and SciPy's ``cdist`` are refused while it runs.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch02 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import LIBRARIES
from ..reader import allclose, call_watched, checker, draw_int, passed_unless, verdict
from .scores import max_error, scores_of_shape, two_lengths

__all__ = ["check_euclidean_scores"]

CASES = (("4 queries, 7 keys", dict(L=4, S=7, E=3)), ("6 queries, 5 keys", dict(L=6, S=5, E=8)))

MISTAKES = (
    Mistake("ch02.euclidean.sign", lambda d2: d2),
    Mistake("ch02.euclidean.sign", lambda d2: d2.clamp_min(0).sqrt()),
    Mistake("ch02.euclidean.not_squared", lambda d2: -d2.clamp_min(0).sqrt()),
)


def _fresh(gen: torch.Generator) -> dict[str, int]:
    L, S = two_lengths(3, 9, gen)
    return dict(L=L, S=S, E=draw_int(2, 8, gen))


@checker
def check_euclidean_scores(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(query, key) -> scores`` built from Euclidean distance, to be fed to softmax.

    The reference is :func:`helpers.scores.neg_euclidean_scores`, ``-|q_i - k_j|^2``: larger for nearer keys,
    0 for a key equal to the query. Scores that differ from it by a constant per query (``2 q.k - |k|^2``) give
    the same softmax weights and are accepted, with a note. Two named cases and a fresh one, ``L != S``, one key
    equal to one query (distance 0).

    Args:
        fn: The reader's function.

    Returns:
        The verdict, naming the mistake (sign, square root, reciprocal, transposed).
    """
    shifted = []

    def one(case: Case) -> CheckResult | None:
        L, S, E = case["L"], case["S"], case["E"]
        query, key = case.randn(L, E, dtype=torch.float64), case.randn(S, E, dtype=torch.float64)
        key[S // 2] = query[L // 2]  # one key equals a query: distance 0
        distance_sq = ((query[:, None, :] - key[None, :, :]) ** 2).sum(-1)  # (L, S)
        result = scores_of_shape(call_watched(fn, query, key, forbidden=LIBRARIES), query, key).double()
        mistake = first_mistake(result, MISTAKES, distance_sq, same=allclose)
        if mistake is not None:
            return verdict(False, mistake.key)
        if not torch.isfinite(result).all():
            return verdict(False, "ch02.euclidean.not_finite")
        if allclose(result, -distance_sq):
            return None
        shift = result + distance_sq  # constant along each row <=> the same softmax
        if torch.allclose(shift, shift[:, :1].expand_as(shift), rtol=1e-5, atol=1e-6):
            shifted.append(True)
            return None
        return verdict(False, "ch02.euclidean.values", error=max_error(result, -distance_sq))

    failure = each_case(one, CASES, seed=2300, fresh=_fresh)
    return passed_unless(failure, "ch02.euclidean.passed_shifted" if shifted else "ch02.euclidean.passed")
