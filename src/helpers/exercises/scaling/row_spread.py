"""Exercise 2 of lab 3: measure the spread the softmax sees, within a row (after a prediction).

Contract (stated in the lab): record ``predict(ROW_SPREAD_KEY, "smaller" | "same" | "larger")`` first;
``my_row_spread(queries, keys)`` takes ``queries`` ``(N, E)`` and ``keys`` ``(N, S, E)`` (query ``i`` has its own
keys ``keys[i]``) and returns one number: the variance of ``keys[i] @ queries[i]`` over the keys, averaged over
the queries (either variance convention). The package is refused while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from ... import seeding
from .. import CheckResult
from ..cases import Case, each_case
from ..catalogue.ch03 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..predictions import reveal
from ..reader import call_watched, checker, draw_int, verdict
from .common import number, prediction

__all__ = ["ROW_SPREAD_KEY", "check_row_spread"]

ROW_SPREAD_KEY = "ch03.row_spread"
"""The prediction of exercise 2 — ``"smaller"``, ``"same"`` or ``"larger"`` than ``3 d_k``."""

_CHOICES = ("smaller", "same", "larger")

CASES = (("100 queries, 24 keys each, d_k = 64", dict(n=100, s=24, d_k=64)),
         ("60 queries, 32 keys each, d_k = 128", dict(n=60, s=32, d_k=128)),
         ("150 queries, 12 keys each, d_k = 16", dict(n=150, s=12, d_k=16)))


def _candidates(q: Tensor, k: Tensor) -> list[tuple[float, str]]:
    """The right values (both variance conventions) and the usual wrong ones, measured on ``q``, ``k``."""
    scores = (k @ q.unsqueeze(-1)).squeeze(-1)  # (N, S, E) x (N, E, 1) -> (N, S): query i against its own keys
    flat = scores.flatten()
    all_keys = q @ k.reshape(-1, k.shape[-1]).T  # (N, N*S): every query against every key
    centred = ((k - 1) @ (q - 1).unsqueeze(-1)).squeeze(-1)  # (N, S): entries of mean 0
    d_k = q.shape[-1]
    values = []
    for correction in (1, 0):
        right = float(scores.var(-1, correction=correction).mean())
        values += [(right, "right"), (math.sqrt(right), "std"),
                   (float(flat.var(correction=correction)), "across_pairs"),
                   (float(scores.var(0, correction=correction).mean()), "over_queries"),
                   (float(all_keys.var(-1, correction=correction).mean()), "all_keys"),
                   (float(centred.var(-1, correction=correction).mean()), "zero_mean"),
                   (float(scores.std(-1, correction=correction).mean()), "std")]
    return values + [(float(scores.pow(2).mean(-1).mean()), "second_moment"), (float(flat.std()), "std_across"),
                     (2.0 * d_k, "formula"), (3.0 * d_k, "formula"), (float(d_k), "formula")]


def _reading(fn: Callable[[Tensor, Tensor], float], case: Case) -> tuple[str, dict[str, Any]]:
    """``("right" | a mistake | "off", the message's fields)`` for one case: the nearest of the right values and
    the mistakes, within 1e-4 (an answer computed in float32 is that exact)."""
    n, s, d_k = case["n"], case["s"], case["d_k"]
    q = case.randn(n, d_k, dtype=torch.float64) + 1  # (N, E), entries N(1, 1)
    k = case.randn(n, s, d_k, dtype=torch.float64) + 1  # (N, S, E)
    value = number(call_watched(fn, q.clone(), k.clone()), phrase("ch03.what.row_variance", n=n, s=s, d_k=d_k))
    distance, nearest = min((abs(value - c) / max(abs(c), 1e-12), name) for c, name in _candidates(q, k))
    return (nearest if distance <= 1e-4 else "off"), {"n": n, "s": s, "d_k": d_k, "value": value}


@checker
def check_row_spread(fn: Callable[[Tensor, Tensor], float]) -> CheckResult:
    """Check ``fn(queries, keys) -> variance`` of the scores *within a softmax row*, and the prediction.

    The softmax of a row sees one query against its keys, so the spread that matters is the variance of
    ``keys[i] @ queries[i]`` over the keys, averaged over the queries, near ``|q|^2 ~ 2 d_k``; the variance across
    independent pairs is ``3 d_k``, the extra ``d_k`` being the row's common shift, which the softmax ignores.
    Three named cases (entries ``N(1, 1)``), then a fresh one; the answer must equal the checker's own measurement
    on the same vectors. A mistake is named only when the three named cases all show it (one made-up value can
    land near a mistake by chance in one case).

    Args:
        fn: The reader's function.

    Returns:
        The verdict, naming the mistake and whether the prediction was right.
    """
    record = prediction(ROW_SPREAD_KEY, "ch03.predict.choice")
    if record.value not in _CHOICES:
        return verdict(False, "ch03.row.bad_choice", value=repr(record.value),
                       choices=", ".join(repr(c) for c in _CHOICES))
    readings = [_reading(fn, Case(name, params, seeding.generator(3200 + i))) for i, (name, params) in enumerate(CASES)]
    wrong = [(reading, fields) for reading, fields in readings if reading != "right"]
    if wrong:  # a mistake is named when every named case shows it
        key = wrong[0][0] if len({reading for reading, _ in readings}) == 1 else "off"
        return verdict(False, f"ch03.row.{key}", **wrong[0][1])

    def fresh(case: Case) -> CheckResult | None:
        reading, fields = _reading(fn, case)
        readings.append((reading, fields))
        return None if reading == "right" else verdict(False, f"ch03.row.{reading}", **fields)

    failure = each_case(fresh, (), seed=3200, fresh=lambda gen: dict(n=draw_int(40, 160, gen), s=draw_int(8, 40, gen),
                                                                     d_k=draw_int(8, 160, gen)))
    if failure is not None:
        return failure
    measured, fields = readings[-1][1]["value"], readings[-1][1]
    reveal(ROW_SPREAD_KEY)
    if record.late:
        judged = phrase("ch03.row.late")
    elif record.value == "smaller":
        judged = phrase("ch03.row.predicted")
    else:
        judged = phrase("ch03.row.surprised", choice=record.value)
    d_k = fields["d_k"]
    return verdict(True, "ch03.row.passed", measured=measured, d_k=d_k, twice=2 * d_k, thrice=3 * d_k, judged=judged)
