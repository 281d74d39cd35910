"""Exercise 1 of lab 2: all dot products in one matrix product.

Contract (stated in the lab): ``my_dot_scores(query, key)`` takes queries ``(..., L, E)`` and keys
``(..., S, E)`` with any leading dimensions (``(B, H, L, E)``, or plain ``(L, E)`` matrices) and returns the
scores ``q_i · k_j``, ``(..., L, S)``, unscaled. The package is refused while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch02 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import quoted
from ..reader import Rejected, allclose, as_tensor, call_watched, checker, draw_int, passed_unless, verdict
from .scores import SCORES, max_error, quoting_failure, two_lengths

__all__ = ["check_dot_scores"]

CASES = (  # L != S everywhere: a transposed result cannot pass
    ("batched (B, H, L, E)", dict(lead=(2, 3), L=4, S=6, E=5)),
    ("batched, other sizes", dict(lead=(3, 2), L=7, S=3, E=4)),
    ("plain (L, E) matrices", dict(lead=(), L=5, S=3, E=7)),
)

MISTAKES = (
    Mistake("ch02.dot.scaled", lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))),
    Mistake("ch02.dot.batch_mixed", lambda q, k: q @ k.flip(0).transpose(-2, -1) if q.dim() > 2 else None),
    Mistake("ch02.dot.batch_mixed", lambda q, k: q @ k.flip(1).transpose(-2, -1) if q.dim() > 3 else None),
)

_SHAPE_ERRORS = ("size mismatch", "must match", "shapes cannot", "dimension")


def _fresh(gen: torch.Generator) -> dict[str, object]:
    L, S = two_lengths(3, 9, gen)
    return dict(lead=(draw_int(2, 3, gen), draw_int(2, 4, gen)), L=L, S=S, E=draw_int(3, 12, gen))


@checker
def check_dot_scores(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(query, key) -> scores``: every query against every key, ``q_i . k_j``.

    Named cases: two batched ``(B, H, L, E)``/``(B, H, S, E)`` with ``L != S``, then plain matrices (the
    same line of code must work for any number of leading dimensions); then a fresh batched case. Compared with
    :func:`helpers.scores.dot_scores`, which the answer may not call (nor any other function of the package).

    Args:
        fn: The reader's function.

    Returns:
        The verdict, naming the mistake (transposed result, wrong transpose, scale, batch mix-up).
    """
    def one(case: Case) -> CheckResult | None:
        lead, L, S, E = case["lead"], case["L"], case["S"], case["E"]
        query, key = case.randn(*lead, L, E, dtype=torch.float64), case.randn(*lead, S, E, dtype=torch.float64)
        expected = query @ key.transpose(-2, -1)  # (..., L, S)
        if not lead:  # the same line must work on plain matrices: a failure there quotes the reason
            with quoting_failure("ch02.dot.matrices_failed"):
                result = as_tensor(call_watched(fn, query, key), SCORES)
            return None if allclose(result, expected) else verdict(False, "ch02.dot.matrices_wrong",
                                                                   shape=tuple(result.shape))
        try:
            result = as_tensor(call_watched(fn, query, key), SCORES)
        except Rejected as rejected:
            english = rejected.verdict.in_language("en").message  # the hint depends on the error, not the language
            if rejected.verdict.key == "reader.raised" and any(words in english for words in _SHAPE_ERRORS):
                return verdict(False, "ch02.dot.transpose_hint", failure=quoted(rejected.verdict))
            raise
        if result.shape == expected.transpose(-2, -1).shape and allclose(result, expected.transpose(-2, -1)):
            return verdict(False, "ch02.dot.transposed", shape=tuple(result.shape))
        if result.shape != expected.shape:
            return verdict(False, "ch02.dot.shape", query=tuple(query.shape), key=tuple(key.shape),
                           expected=tuple(expected.shape), got=tuple(result.shape))
        if allclose(result, expected):
            return None
        mistake = first_mistake(result, MISTAKES, query, key, same=allclose)
        if mistake is not None:
            return verdict(False, mistake.key)
        return verdict(False, "ch02.dot.values", error=max_error(result, expected))

    return passed_unless(each_case(one, CASES, seed=2100, fresh=_fresh), "ch02.dot.passed")
