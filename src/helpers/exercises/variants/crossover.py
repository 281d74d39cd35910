"""Exercise 5 of lab 5: time dense against windowed attention, and find where the window starts to pay.

Contract (stated in the lab): record ``predict(CROSSOVER, n)`` first; ``time_both(n)`` runs dense attention and
``helpers.efficient.sliding_window_attention`` (window 32) at length ``n`` with one head of size 32, and returns
two positive numbers, ``(dense_seconds, window_seconds)``, measured, not made up.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable
from typing import Any

import torch

from ... import seeding
from .. import CheckResult
from ..catalogue.ch05 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import CallWatch
from ..messages import phrase
from ..predictions import recorded, reveal
from ..reader import call_watched, checker, draw_int, verdict

__all__ = ["CROSSOVER", "check_crossover", "own_times"]

CROSSOVER = "ch05.crossover"
"""The key of exercise 5's prediction — ``predict(ch05.CROSSOVER, n)`` before :func:`.check_crossover`."""

_WINDOW = _HEAD = 32
_TOLERANCE = 5.0
"""How far (a factor) the reader's times may lie outside the checker's own CPU-to-wall band for the same calls."""


def _best_time(fn: Callable[[], Any], repeats: int = 3) -> tuple[float, float]:
    """The best CPU time of this thread and the best wall time of ``repeats`` calls after a warm-up."""
    fn()
    cpu = wall = math.inf
    for _ in range(repeats):
        start, start_wall = time.thread_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.thread_time() - start), min(wall, time.perf_counter() - start_wall)
    return max(cpu, 1e-7), max(wall, cpu, 1e-7)


def own_times(n: int, gen: torch.Generator) -> tuple[tuple[float, float], tuple[float, float]]:
    """``((dense_cpu, dense_wall), (window_cpu, window_wall))`` at length ``n``, one head of size 32."""
    from helpers.efficient import sliding_window_attention

    q, k, v = (torch.randn(1, 1, n, _HEAD, generator=gen) for _ in range(3))
    dense = _best_time(lambda: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(_HEAD), dim=-1) @ v)
    window = _best_time(lambda: sliding_window_attention(q, k, v, _WINDOW))
    return dense, window


def _how_far(theirs: list[float], own: list[tuple[float, float]]) -> float:
    """The geometric mean, over the sizes, of how far the reader's times lie outside the band between the checker's
    CPU and wall times of the same calls (1: inside it), signed: < 1 below, > 1 above."""
    logs = [math.log(t / wall) if t > wall else (math.log(t / cpu) if t < cpu else 0.0)
            for t, (cpu, wall) in zip(theirs, own)]
    return math.exp(sum(logs) / len(logs))


def _is_positive_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) and value > 0


@checker
def check_crossover(time_both: Callable[[int], tuple[float, float]]) -> CheckResult:
    """Run the reader's ``time_both(n) -> (dense_seconds, window_seconds)``, measure the same calls, and compare the
    crossover with the prediction recorded before (``predict(ch05.CROSSOVER, n)``).

    Refused: no prediction recorded (the result is then not shown); ``time_both(n)`` that does not compute dense
    attention at length ``n`` (no ``n x n`` tensor among its PyTorch operations' results), or whose times are more
    than 5 times from the checker's own measurement of the same calls; times where dense does not grow clearly
    faster. The sizes are ``b, 2b, 4b, 8b`` for a fresh ``b`` (a timing cannot be replayed anyway). The package is
    refused in ``time_both`` except :func:`helpers.efficient.sliding_window_attention`, which it times.

    Args:
        time_both: The reader's function.

    Returns:
        The verdict.
    """
    from helpers.efficient import sliding_window_attention
    from helpers.experiments import efficient_cost

    prediction = recorded(CROSSOVER)
    if prediction is None:
        return verdict(False, "ch05.crossover.no_prediction", key=CROSSOVER)
    if not _is_positive_number(prediction.value):
        return verdict(False, "ch05.crossover.bad_prediction", got=repr(prediction.value))
    predicted = float(prediction.value)
    gen = seeding.fresh_generator()
    seed = gen.initial_seed()  # the sizes' draw, given in every verdict below (fields["seed"])
    sizes = tuple(draw_int(160, 256, gen) * 2**i for i in range(4))
    probe = draw_int(96, 160, gen)  # a length at which time_both must compute the n x n scores
    watch = CallWatch(allowed=(sliding_window_attention,), arguments=(), count_work=True)
    call_watched(time_both, probe, watch=watch)  # (not timed: counting slows every operation down)
    if watch.max_numel < probe * probe:
        return verdict(False, "ch05.crossover.no_dense", n=probe, seed=seed)
    dense, window = [], []
    for n in sizes:
        result = call_watched(time_both, n, allowed=(sliding_window_attention,))
        if not isinstance(result, (tuple, list)) or len(result) != 2 or not all(_is_positive_number(t) for t in result):
            return verdict(False, "ch05.crossover.not_two_times", n=n, got=repr(result), seed=seed)
        dense.append(float(result[0]))
        window.append(float(result[1]))
    own = [own_times(n, gen) for n in sizes]
    for name, theirs, mine in (("dense", dense, [t[0] for t in own]), ("window", window, [t[1] for t in own])):
        off = _how_far(theirs, mine)
        if not 1 / _TOLERANCE <= off <= _TOLERANCE:
            reveal(CROSSOVER)
            return verdict(False, "ch05.crossover.not_measured", what=phrase(f"ch05.crossover.{name}"), n=sizes[-1],
                           theirs=theirs[-1] * 1e3, cpu=mine[-1][0] * 1e3, wall=mine[-1][1] * 1e3, off=off, seed=seed)
    k_dense, k_window = efficient_cost.fit_exponent(sizes, dense), efficient_cost.fit_exponent(sizes, window)
    if k_dense < k_window + 0.3:
        return verdict(False, "ch05.crossover.not_faster", k_dense=k_dense, k_window=k_window, seed=seed)
    own_dense, own_window = [t[0][0] for t in own], [t[1][0] for t in own]  # CPU times
    n_star, how = efficient_cost.crossover_length(sizes, own_dense, own_window)
    reveal(CROSSOVER)
    if how == "always cheaper":
        measured, right = phrase("ch05.crossover.below", n=sizes[0]), predicted <= 2 * sizes[0]
    elif math.isinf(n_star):
        measured, right = phrase("ch05.crossover.beyond", n=sizes[-1]), predicted >= sizes[-1] / 2
    else:
        measured = phrase("ch05.crossover.about", n=n_star, how=phrase(f"ch05.crossover.how.{how}"))
        right = 0.5 <= predicted / n_star <= 2
    judged = phrase("ch05.crossover.late" if prediction.late else "ch05.crossover.right" if right
                    else "ch05.crossover.wrong", predicted=predicted)
    return verdict(True, "ch05.crossover.passed", k_dense=efficient_cost.fit_exponent(sizes, own_dense),
                   k_window=efficient_cost.fit_exponent(sizes, own_window), measured=measured, judged=judged,
                   seed=seed)
