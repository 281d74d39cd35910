"""Exercise 2 of lab 6.1-6.2: find the collapsed and the dead head in the entropy monitor.

Contract (stated in the lab): ``find_broken_heads(run)`` reads ``run.entropy_table()`` (``(P, N, H)``: each probe's
normalised entropy of every layer and head) and returns ``(collapsed, dead)``, two ``(layer, head)`` pairs. The run
it gets holds the monitor only (``run.model`` is ``None``); only ``run.entropy_table`` of the package may be called.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ... import seeding
from ...experiments.broken_heads import HEADS, LAYERS, BrokenHeadsRun, default_broken, trained
from .. import CheckResult
from ..catalogue.ch06_training import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase, quoted
from ..reader import call_watched, checker, draw_int, verdict

__all__ = ["check_broken_heads"]


def _head_of(value: Any) -> tuple[int, int] | None:
    try:
        layer, head = (int(v) for v in value)
    except (TypeError, ValueError):
        return None
    return (layer, head) if 0 <= layer < LAYERS and 0 <= head < HEADS else None


def _judge(answer: Any, run: BrokenHeadsRun, truth: tuple[tuple[int, int], tuple[int, int]],
           fresh: bool) -> CheckResult | None:
    """``None`` if ``answer`` names ``truth``'s collapsed and dead heads, else what is wrong."""
    form = verdict(False, "ch06_training.heads.form", last_layer=LAYERS - 1, last_head=HEADS - 1, got=repr(answer))
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return form
    collapsed, dead = _head_of(answer[0]), _head_of(answer[1])
    if collapsed is None or dead is None:
        return form
    if (collapsed, dead) == truth:
        return None
    true_collapsed, true_dead = truth
    which = phrase("ch06_training.heads.fresh_run" if fresh else "ch06_training.heads.lab_run", seed=run.seed)
    table = run.entropy_table()  # (P, N, H)
    if (collapsed, dead) == (true_dead, true_collapsed):
        return verdict(False, "ch06_training.heads.swapped", run=which)

    def named(key: str, head: tuple[int, int]) -> CheckResult:
        series = table[:, head[0], head[1]]
        history = phrase("ch06_training.heads.history", start=float(series[0]), end=float(series[-1]))
        return verdict(False, f"ch06_training.heads.{key}", run=which, head=head, history=history)

    if collapsed != true_collapsed:
        if collapsed == true_dead:
            return named("dead_not_collapsed", collapsed)
        start, end = table[0, collapsed[0], collapsed[1]], table[-1, collapsed[0], collapsed[1]]
        return named("specialised" if start > 0.5 and end < 0.3 else "not_collapsed", collapsed)
    return named("collapsed_not_dead" if dead == true_collapsed else "not_dead", dead)


@dataclass(frozen=True)
class _Unreadable:
    """The reader's function read what the run it got does not hold (``key``: ``private`` or ``no_model``)."""

    key: str
    name: str


def _monitor_only(run: BrokenHeadsRun) -> BrokenHeadsRun:
    """A copy of ``run`` with the monitor's record and no model (the reader's function may change it freely)."""
    return dataclasses.replace(run, model=None, probe_tokens=run.probe_tokens.clone(), loss=list(run.loss),
                               probe_step=list(run.probe_step), head_entropy=[e.clone() for e in run.head_entropy])


@checker
def check_broken_heads(fn: Callable[[BrokenHeadsRun], Any], run: BrokenHeadsRun) -> CheckResult:
    """Check ``fn(run) -> (collapsed, dead)``, each a ``(layer, head)`` pair, on ``run`` (the lab's, from
    :func:`~helpers.experiments.broken_heads.train_broken_heads` with its default heads), then on a fresh run: a
    seed and two broken heads drawn when the checker runs (its seed in the verdict when the answer fails there).

    Each run is handed over as a copy with the monitor's record only; which heads are broken is known to the checker
    because it broke them, and is stored nowhere the answer could read. The messages name the typical confusions:
    a head that specialised taken for a collapsed one, the two heads swapped, a head whose entropy moved taken for
    the dead one.

    Args:
        fn: The reader's function.
        run: The run from ``train_broken_heads`` (default heads).

    Returns:
        The verdict.
    """
    if not isinstance(run, BrokenHeadsRun):
        return verdict(False, "ch06_training.heads.not_a_run", type=type(run).__name__)
    truth = default_broken(run.seed)
    lab = trained(run.seed, *truth, 100, 1e-2)  # the checker's own record of the lab's run, not the reader's
    if not callable(fn):
        return verdict(False, "reader.not_callable", type=type(fn).__name__)

    def answer(copy: BrokenHeadsRun) -> Any:
        try:
            return fn(copy)
        except AttributeError as error:  # what the copy does not have: private state, or the model
            name = getattr(error, "name", None)
            if isinstance(name, str) and name.startswith("_"):
                return _Unreadable("private", name)
            if getattr(error, "obj", False) is None:
                return _Unreadable("no_model", str(name))
            raise

    gen = seeding.fresh_generator()
    seed = draw_int(1_000, 10**6, gen)
    while True:  # other heads than the lab's run, so that no answer typed for it passes
        order = torch.randperm(LAYERS * HEADS, generator=gen).tolist()
        fresh_truth = (divmod(order[0], HEADS), divmod(order[1], HEADS))
        if fresh_truth[0] != truth[0] and fresh_truth[1] != truth[1]:
            break
    for each, heads, fresh in ((lab, truth, False), (None, fresh_truth, True)):
        each = each or trained(seed, *fresh_truth, 100, 1e-2)
        result = call_watched(answer, _monitor_only(each), allowed=(BrokenHeadsRun.entropy_table,),
                              passthrough=(answer,))
        failure = verdict(False, f"ch06_training.heads.{result.key}", name=result.name) \
            if isinstance(result, _Unreadable) else _judge(result, each, heads, fresh)
        if failure is not None:
            return verdict(False, "cases.fresh", seed=gen.initial_seed(), verdict=quoted(failure)) if fresh else failure
    table = lab.entropy_table()
    c, d = truth
    return verdict(True, "ch06_training.heads.passed", seed=lab.seed, collapsed=c,
                   collapsed_start=float(table[0, c[0], c[1]]), dead=d, dead_min=float(table[:, d[0], d[1]].min()),
                   other_seed=seed)
