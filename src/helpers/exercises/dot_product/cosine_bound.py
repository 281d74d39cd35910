"""Exercise 6 of lab 2: predict, then run: the most weight cosine scores can give one slot.

Contract (stated in the lab): ``cosine_max_weight(S)`` returns a number, the largest softmax weight that scores
in ``[-1, 1]`` can give one of ``S`` slots. Once it is right, the checker trains the chapter's plain-cosine model
itself and shows its largest weight next to the bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .. import CheckResult
from ..cases import Case, Mistake, each_case, first_mistake
from ..catalogue.ch02 import MESSAGES  # noqa: F401 (registers its messages)
from ..reader import as_number, call_watched, checker, draw_int, passed_unless, verdict

__all__ = ["check_cosine_bound"]

CASES = tuple((f"S = {S}", dict(S=S)) for S in (24, 2, 137, 5000, 1))


def bound(S: int) -> float:
    """``e / (e + (S - 1) / e)``: the match at cosine +1, the ``S - 1`` others at -1."""
    return math.e / (math.e + (S - 1) / math.e)


MISTAKES = (
    Mistake("ch02.bound.perpendicular", lambda S: math.e / (math.e + S - 1) if S > 1 else None, ),
    Mistake("ch02.bound.others", lambda S: math.e / (math.e + S / math.e)),
    Mistake("ch02.bound.all_weight", lambda S: 1.0 if S > 1 else None),
    Mistake("ch02.bound.uniform", lambda S: 1 / S if S > 1 else None),
)


@checker
def check_cosine_bound(fn: Callable[[int], float]) -> CheckResult:
    """Check ``fn(S) -> float``: the largest softmax weight that cosine scores give one of ``S`` slots,
    ``e / (e + (S - 1) / e)``; then, the prediction made, train the chapter's plain-cosine model (seed 0) and show
    the largest weight it ever gives a slot next to the bound for its 24 slots.

    Tried at S = 24, 2, 137, 5000 and 1, then at a fresh size up to 20,000. The package (e.g.
    :func:`helpers.experiments.score_learning.cosine_weight_bound`) is refused while ``fn`` runs.

    Args:
        fn: The reader's function.

    Returns:
        The verdict, naming the mistake (others at 0 instead of -1, S instead of S - 1, no bound).
    """
    from helpers.experiments import cosine_runs

    def one(case: Case) -> CheckResult | None:
        S = case["S"]
        result = as_number(call_watched(fn, S), "ch02.bound.not_number")
        if math.isclose(result, bound(S), rel_tol=1e-6):
            return None
        mistake = first_mistake(result, MISTAKES, S, same=lambda a, b: math.isclose(a, b, rel_tol=1e-6))
        if mistake is not None:
            return verdict(False, mistake.key, S=S, others=S - 1, result=result, uniform=1 / S)
        return verdict(False, "ch02.bound.wrong", S=S, result=result, expected=bound(S))

    failure = each_case(one, CASES, seed=2600, fresh=lambda gen: dict(S=draw_int(3, 20_000, gen)))
    if failure is not None:
        return failure
    accuracy, measured = cosine_runs.plain_cosine_run(0)  # the run, after the prediction: trained here
    return passed_unless(None, "ch02.bound.passed", bound_24=bound(24), bound_100=bound(100), measured=measured,
                         accuracy=accuracy, ceiling=cosine_runs.task_ceiling())
