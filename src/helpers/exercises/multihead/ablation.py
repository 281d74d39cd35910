"""Exercise 6 of lab 4: predict which head matters most, then ablate each head.

Contract (stated in the lab): record ``predict(ABLATION, head)`` first; ``my_ablation(run)`` returns a
list of ``run.num_heads`` numbers, the R² with head ``h`` removed (``run.score(head_mask)``, where the
float mask multiplies each head's output: 1 keeps a head, 0 removes it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ... import seeding
from .. import CheckResult
from ..catalogue.ch04 import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import ATTENTION
from ..messages import quoted
from ..predictions import recorded, reveal
from ..reader import Rejected, call_watched, checker, draw_int, reject, verdict

__all__ = ["check_head_ablation", "ABLATION"]

ABLATION = "ch04.head_ablation"
"""The key under which exercise 6's prediction is recorded — ``predict(ABLATION, head)``."""


def _ablation(run: Any) -> list[float]:
    """The checker's own ablation: R² with each head's output zeroed in turn."""
    return [run.score(1 - torch.eye(run.num_heads)[h]) for h in range(run.num_heads)]


def _ablation_of(fn: Callable[[Any], Any], run: Any) -> list[float]:
    """Run the reader's ablation on ``run`` and compare with the checker's; :class:`.Rejected` names a mistake."""
    from helpers.experiments.heads_training import FilterRun

    right = _ablation(run)
    result = call_watched(fn, run, forbidden=ATTENTION, allowed=(FilterRun.score,))
    if isinstance(result, torch.Tensor):
        result = result.tolist()
    if not isinstance(result, (list, tuple)) or len(result) != run.num_heads or not all(
            isinstance(a, (int, float)) and not isinstance(a, bool) for a in result):
        raise reject("ch04.ablation.length", n=run.num_heads)
    if all(abs(float(a) - b) <= 1e-4 for a, b in zip(result, right)):
        return right
    if all(abs(float(a) - run.r2) < 1e-4 for a in result):
        raise reject("ch04.ablation.nothing_removed")
    kept_one = [run.score(torch.eye(run.num_heads)[h]) for h in range(run.num_heads)]
    if all(abs(float(a) - b) < 1e-4 for a, b in zip(result, kept_one)):
        raise reject("ch04.ablation.kept_one")
    raise reject("ch04.ablation.differs")


@checker
def check_head_ablation(fn: Callable[[Any], list[float]], run: Any) -> CheckResult:
    """Check ``fn(run) -> [R² with head h removed, for each h]``, and compare the prediction recorded before it.

    A run that :func:`helpers.experiments.heads_training.train_filter` did not return in this session, or one
    changed since (weights, data, R²), is refused. No prediction recorded: refused before anything is run or
    shown. Then ``fn`` runs on ``run``, then on a small model the checker trains itself (a fresh seed, given in
    the verdict when the answer fails there, and a head count other than the run's: no table of numbers
    passes); each result is compared with the checker's own ablation. Only ``run.score`` of the package may
    be called. The result is shown, and the prediction marked as revealed, only once the ablation is right.

    Args:
        fn: The reader's function.
        run: The trained run the reader predicted about.

    Returns:
        The verdict.
    """
    from helpers.experiments import heads_training as ht

    if not isinstance(run, ht.FilterRun) or type(run.model) is not ht.FilterHeads:
        return verdict(False, "ch04.ablation.not_a_run", type=type(run).__name__)
    if not ht.trained_by_train_filter(run):
        return verdict(False, "ch04.ablation.not_trained")
    prediction = recorded(ABLATION)
    if prediction is None:
        return verdict(False, "ch04.ablation.no_prediction", key=ABLATION, last=run.num_heads - 1)
    value = prediction.value
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < run.num_heads:
        return verdict(False, "ch04.ablation.bad_prediction", last=run.num_heads - 1, got=repr(value))
    right = _ablation_of(fn, run)
    gen = seeding.fresh_generator()  # a fresh probe: a table of ablations for the lab's run fails
    heads = [h for h in range(2, 6) if h != run.num_heads][draw_int(0, 2, gen)]
    probe = ht.train_filter(heads, seed=draw_int(0, 10_000, gen), embed_dim=heads * draw_int(2, 4, gen),
                            steps=15, num_test=64)
    try:
        _ablation_of(fn, probe)
    except Rejected as rejected:
        return verdict(False, "cases.fresh", seed=gen.initial_seed(), verdict=quoted(rejected.verdict))
    reveal(ABLATION)
    worst = min(range(run.num_heads), key=lambda h: right[h])
    key = "passed_late" if prediction.late else "passed_predicted" if worst == value else "passed_surprised"
    return verdict(True, f"ch04.ablation.{key}", worst=worst, without=right[worst], full=run.r2, predicted=value)
