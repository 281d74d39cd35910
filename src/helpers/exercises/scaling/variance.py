"""Exercise 1 of lab 3: predict ``Var(q · k)`` for entries of variance ``sigma^2``, then see it measured.

Contract (stated in the lab): record ``predict(VARIANCE_KEY, number)`` before the checker runs.
"""

from __future__ import annotations

import math

import torch

from ... import seeding
from .. import CheckResult
from ..catalogue.ch03 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..predictions import reveal
from ..reader import checker, verdict
from .common import near, number, prediction

__all__ = ["VARIANCE_KEY", "check_predicted_variance"]

VARIANCE_KEY = "ch03.variance"
"""The prediction of exercise 1 — a number, ``Var(q . k)``."""


def _measured_variance(d_k: int, sigma: float, samples: int = 20_000) -> float:
    """``Var(q . k)`` over ``samples`` pairs with ``N(0, sigma^2)`` entries (float64, seeded)."""
    gen = seeding.generator(3100)
    q = sigma * torch.randn(samples, d_k, generator=gen, dtype=torch.float64)  # (N, E)
    k = sigma * torch.randn(samples, d_k, generator=gen, dtype=torch.float64)  # (N, E)
    return float((q * k).sum(-1).var())


@checker
def check_predicted_variance(*, d_k: int = 64, sigma: float = 0.5) -> CheckResult:
    """Check the predicted ``Var(q . k)`` for independent entries ``q_i, k_i ~ N(0, sigma^2)``.

    The prediction is the number recorded with ``predict(VARIANCE_KEY, value)`` before this call; without one the
    checker refuses and shows nothing. Then it measures the variance on seeded samples, shows it, and compares.
    The right answer is ``d_k * sigma^4``: each product ``q_i k_i`` has variance ``sigma^2 * sigma^2``, and the
    ``d_k`` independent products add up (chapter 3).

    Args:
        d_k: The vectors' size in the question.
        sigma: The entries' standard deviation in the question.

    Returns:
        The verdict, naming the mistake (a standard deviation, one factor of ``sigma^2``, ``d_k`` squared, a
        missing sum), and saying whether the prediction came late.
    """
    record = prediction(VARIANCE_KEY, "ch03.predict.number")
    value = number(record.value, phrase("ch03.what.variance"))
    measured = _measured_variance(d_k, sigma)
    reveal(VARIANCE_KEY)
    right = d_k * sigma**4
    if near(value, right, 0.02):
        return verdict(True, "ch03.variance.late" if record.late else "ch03.variance.passed", d_k=d_k, sigma=sigma,
                       right=right, measured=measured)
    wrong = [(math.sqrt(right), "std"), (d_k * sigma**2, "sigma_once"), (float(d_k), "unit"),
             (sigma**4, "one_product"), (d_k**2 * sigma**4, "squared"), (math.sqrt(d_k) * sigma**2, "sqrt"),
             (d_k * sigma, "sigma_for_variance")]
    mistake = next((name for candidate, name in wrong if near(value, candidate, 0.02)), "other")
    diagnosis = phrase(f"ch03.variance.{mistake}", value=value, d_k=d_k, sigma_squared=sigma**2)
    return verdict(False, "ch03.variance.wrong", diagnosis=diagnosis,
                   shown=phrase("ch03.variance.shown", measured=measured, right=right))
