"""Checkers for the labs' exercises.

Each checker takes the reader's answer (a tensor, a number or a function), never raises on a wrong
answer, and returns a :class:`CheckResult` whose message says *what* is wrong (a shape, a scale, a
mask, a sign...), not only that something is. One module per chapter: :mod:`helpers.exercises.ch01`, ...
"""

from __future__ import annotations

import html
from dataclasses import dataclass

__all__ = ["CheckResult"]


@dataclass(frozen=True)
class CheckResult:
    """The verdict of an exercise checker.

    Attributes:
        passed: Whether the answer is right.
        message: What is right or wrong, in one or two sentences a student can act on.
    """

    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return ("✅ Correct: " if self.passed else "❌ Not yet: ") + self.message

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#b3261e"
        return f'<p style="color:{colour}; font-weight:600">{html.escape(str(self))}</p>'
