"""Exercise 5 of lab 2: why additive scoring is slower (a choice among stated mechanisms, feedback on each).

Contract (stated in the lab): ``answer`` is one letter of :func:`.additive_options`.
"""

from __future__ import annotations

from typing import Any

from .. import CheckResult
from ..catalogue.ch02 import MESSAGES
from ..messages import LANGUAGES, text
from ..reader import checker, verdict

__all__ = ["ADDITIVE_OPTIONS", "additive_options", "check_why_additive_is_slower", "BREAKDOWN_SIZE"]

ADDITIVE_OPTIONS: dict[str, str] = {letter: MESSAGES[f"ch02.additive.option.{letter}"][LANGUAGES[0]]
                                    for letter in "abcd"}
"""The choices of exercise 5 (why is additive scoring slower than the dot product?), in English."""

_RIGHT = "b"

BREAKDOWN_SIZE = 256
"""L = S of the timing that exercise 5's verdicts report (helpers.experiments.score_cost.additive_time_breakdown)."""


def additive_options(language: str | None = None) -> dict[str, str]:
    """The choices of exercise 5, letter -> the mechanism it states, in ``language``.

    Args:
        language: ``"en"``, ``"zh"``; ``None``: the default (:func:`helpers.exercises.get_language`).

    Returns:
        ``{"a": ..., "b": ..., "c": ..., "d": ...}``.
    """
    return {letter: text(f"ch02.additive.option.{letter}", language) for letter in ADDITIVE_OPTIONS}


@checker
def check_why_additive_is_slower(choice: str) -> CheckResult:
    """Check the answer to "why is additive scoring slower than the dot product?" (a, b, c or d).

    Args:
        choice: One of the keys of :data:`.ADDITIVE_OPTIONS`.

    Returns:
        The verdict, with why each wrong option is wrong; the right answer's (and option d's) with the share of
        each step of additive scoring, timed when the checker runs.
    """
    from helpers.experiments import score_cost

    letter = choice.strip().lower().strip("()") if isinstance(choice, str) else None
    if letter not in ADDITIVE_OPTIONS:
        return verdict(False, "ch02.additive.one_letter", letters=", ".join(sorted(ADDITIVE_OPTIONS)), got=repr(choice))
    fields: dict[str, Any] = {}
    if letter in (_RIGHT, "d"):  # the verdict reports where the time goes, timed now
        steps = score_cost.additive_time_breakdown(BREAKDOWN_SIZE, repeats=3, budget_s=0.5)
        total = sum(steps[name] for name in score_cost.ADDITIVE_STEPS)
        fields = {"n": BREAKDOWN_SIZE, "add": steps["broadcast add"] / total, "tanh": steps["tanh"] / total,
                  "reduce": steps["reduction with v"] / total, "proj": steps["projections"] / total}
    return verdict(letter == _RIGHT, f"ch02.additive.{letter}", **fields)
