"""Exercise 2 of lab 2: the operation count of ``Q Kᵀ``.

Contract (stated in the lab): ``dot_flops(L, S, E)`` returns a number: ``2 L S E`` (a multiply and an add
per term), or the exact ``L S (2E - 1)``. The package (``score_cost.score_flops``) is refused while it runs.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .. import CheckResult
from ..cases import Case, each_case
from ..catalogue.ch02 import MESSAGES  # noqa: F401 (registers its messages)
from ..reader import call_watched, checker, draw_int, passed_unless, verdict
from .scores import two_lengths

__all__ = ["check_dot_flops", "flops_counts"]

CASES = (  # every miscount the checker names gives a number of its own at these sizes (tested)
    ("6 queries, 11 keys, E = 9", dict(L=6, S=11, E=9)),
    ("13 queries, 4 keys, E = 20", dict(L=13, S=4, E=20)),
    ("3 queries, 17 keys, E = 50", dict(L=3, S=17, E=50)),
)


def flops_counts(L: int, S: int, E: int) -> dict[str, set[int]]:
    """The right operation counts of ``Q K^T`` and each miscount the checker names, by verdict."""
    return {"right": {2 * L * S * E, L * S * (2 * E - 1)}, "multiplies_only": {L * S * E}, "scores_only": {L * S},
            "l_and_s": {2 * L * L * E, 2 * S * S * E, L * L * E, S * S * E},
            "e_squared": {2 * L * S * E * E, L * S * E * E}}


def told_apart(L: int, S: int, E: int) -> bool:
    """Whether every count of :func:`.flops_counts` is a number of its own at these sizes."""
    counts = list(flops_counts(L, S, E).values())
    return sum(len(c) for c in counts) == len(set().union(*counts))


def _fresh(gen: torch.Generator) -> dict[str, int]:
    """Fresh ``(L, S, E)`` for which every miscount gives a number of its own (not ``S = 2L``...)."""
    while True:
        L, S = two_lengths(2, 40, gen)
        E = draw_int(3, 128, gen)
        if told_apart(L, S, E):
            return dict(L=L, S=S, E=E)


@checker
def check_dot_flops(fn: Callable[[int, int, int], int]) -> CheckResult:
    """Check ``fn(L, S, E) -> int``: floating-point operations of ``Q K^T`` (``2 L S E``; the exact
    ``L S (2E - 1)`` is accepted too), at three named sizes and a fresh one.

    Args:
        fn: The reader's function.

    Returns:
        The verdict, naming the mistake (multiplies only, L and S confused, E forgotten).
    """
    def one(case: Case) -> CheckResult | None:
        L, S, E = case["L"], case["S"], case["E"]
        result = call_watched(fn, L, S, E)
        if result is None:
            return verdict(False, "ch02.flops.none")
        if not isinstance(result, (int, float)) or isinstance(result, bool):
            return verdict(False, "ch02.flops.not_number", type=type(result).__name__)
        counts = flops_counts(L, S, E)
        if result in counts["right"]:
            return None
        for name, fields in (("multiplies_only", dict(L=L, S=S, E=E)), ("scores_only", {}), ("l_and_s", dict(L=L, S=S)),
                             ("e_squared", {})):
            if result in counts[name]:
                return verdict(False, f"ch02.flops.{name}", result=result, **fields)
        return verdict(False, "ch02.flops.wrong", L=L, S=S, E=E, result=result, expected=2 * L * S * E)

    return passed_unless(each_case(one, CASES, seed=2200, fresh=_fresh), "ch02.flops.passed")
