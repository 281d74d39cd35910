"""Exercise 5 of lab 6.3-6.6: predict the ranking of the position encodings past twice the training length, then
measure it.

Contract (stated in the lab): record ``predict(RANKING, [best, ..., worst])`` first; ``far_accuracy(runs)`` takes
what ``helpers.experiments.position.extrapolation_runs`` returned (``{encoding: [run per seed]}``) and returns
``{encoding: accuracy}``, the mean over the seeds of the per-position accuracy on the tokens at positions
``2 * train_len`` and later (``run.per_position[t]`` is the accuracy of predicting token ``t + 1``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor

from ... import seeding
from .. import CheckResult
from ..cases import Mistake
from ..catalogue.ch06_memory import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import LANGUAGES, phrase, quoted
from ..predictions import recorded, reveal
from ..reader import call_watched, checker, draw_int, verdict

__all__ = ["RANKING", "check_extrapolation_ranking", "far_accuracy"]

RANKING = "ch06_memory.ranking"
"""The key under which exercise 5's ranking is recorded — ``ex.predict(ex.RANKING, [...])``."""


def far_accuracy(runs: Mapping[str, list[Any]], shift: int = 0, start: Callable[[int], int] | None = None,
                 seeds: int | None = None) -> dict[str, float]:
    """Mean over seeds of the accuracy on the tokens at positions ``2 * train_len`` and later.

    ``shift`` moves the first index by that much (the off-by-one mistakes), ``start`` replaces it
    (``start(train_len)`` is the first index of ``per_position`` counted), ``seeds`` keeps the first runs only."""
    result = {}
    for name, group in runs.items():
        values = []
        for run in group[:seeds]:
            first = start(run.train_len) if start is not None else 2 * run.train_len - 1 + shift
            far = run.per_position[first:]
            values.append(sum(far) / len(far))
        result[name] = sum(values) / len(values)
    return result


MISTAKES = (
    Mistake("ch06_memory.ranking.off_by_one", lambda runs: far_accuracy(runs, shift=1)),
    Mistake("ch06_memory.ranking.off_by_one", lambda runs: far_accuracy(runs, shift=-1)),
    Mistake("ch06_memory.ranking.first_seed", lambda runs: far_accuracy(runs, seeds=1)),
    Mistake("ch06_memory.ranking.from_train_len", lambda runs: far_accuracy(runs, start=lambda t: t - 1)),
    Mistake("ch06_memory.ranking.all_positions", lambda runs: far_accuracy(runs, start=lambda t: 0)),
)


def _probe(names: list[str], gen: torch.Generator) -> dict[str, list[Any]]:
    """Runs made up by the checker: the reader's names in a drawn order, drawn lengths, seeds and accuracies."""
    from helpers.experiments.position import ExtrapolationRun

    train_len = draw_int(3, 10, gen)
    test_len = 2 * train_len + draw_int(3, 12, gen)
    probe = {}
    for rank, i in enumerate(torch.randperm(len(names), generator=gen).tolist()):
        count = draw_int(2, 3, gen) if rank == 0 else draw_int(1, 3, gen)  # one group at least has 2 seeds
        probe[names[i]] = [ExtrapolationRun(names[i], seed, train_len,
                                            torch.rand(test_len - 1, generator=gen, dtype=torch.float64).tolist())
                           for seed in range(count)]
    return probe


def _number(value: Any) -> float | None:
    if isinstance(value, Tensor) and value.numel() == 1:
        return float(value.item())
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _reading(fn: Callable[..., Any], probe: dict[str, list[Any]], names: list[str]) -> CheckResult | None:
    right = far_accuracy(probe)
    result = call_watched(fn, probe)
    if not isinstance(result, dict) or sorted(map(str, result)) != sorted(names):
        return verdict(False, "ch06_memory.ranking.not_dict", names=str(names), got=repr(result))
    values = {n: _number(result[n]) for n in names}
    if any(value is None for value in values.values()):
        return verdict(False, "ch06_memory.ranking.not_number", got=repr(result))
    if all(abs(values[n] - right[n]) < 1e-9 for n in names):
        return None
    for mistake in MISTAKES:
        wrong = mistake.simulate(probe)
        if all(abs(values[n] - wrong[n]) < 1e-9 for n in names):
            return verdict(False, mistake.key)
    name = names[0]
    return verdict(False, "ch06_memory.ranking.differs", name=name, expected=right[name], got=values[name],
                   train_len=probe[name][0].train_len, length=len(probe[name][0].per_position))


def _ranking_verdict(predicted: Any, late: bool, right: dict[str, float]) -> CheckResult:
    names = list(right)
    measured = sorted(names, key=lambda n: -right[n])
    rank = {n: i for i, n in enumerate(measured)}
    hits = sum(a == b for a, b in zip(predicted, measured))
    moved = max(predicted, key=lambda n: abs(rank[n] - list(predicted).index(n)))
    shift = rank[moved] - list(predicted).index(moved)
    surprise = ({language: "" for language in LANGUAGES} if shift == 0 else
                phrase("ch06_memory.ranking.lower" if shift > 0 else "ch06_memory.ranking.higher", moved=moved,
                       places=abs(shift), plural="s" if abs(shift) > 1 else ""))
    outcome = "late" if late else ("right" if hits == len(names) else "wrong")
    return verdict(True, "ch06_memory.ranking.passed", verdict=phrase(f"ch06_memory.ranking.{outcome}",
                                                                      predicted=" > ".join(predicted)),
                   table=" > ".join(f"{n} {right[n]:.2f}" for n in measured), hits=hits, count=len(names),
                   surprise=surprise)


@checker
def check_extrapolation_ranking(fn: Callable[[dict[str, list[Any]]], dict[str, float]],
                                runs: dict[str, list[Any]], settings: Mapping[str, Any]) -> CheckResult:
    """Check ``fn(runs) -> {encoding: accuracy}``, then compare the measured ranking with the prediction.

    ``fn`` is tried on runs the checker makes up (the reader's encodings, drawn lengths, seeds and accuracies, from
    a seeded generator, then a fresh one whose seed the verdict gives when it fails there), so no precomputed answer
    passes. One of ``runs``, drawn afresh, is trained again with ``settings`` and must come out the same: runs that
    training did not produce are refused. The measured ranking is the checker's own computation on ``runs``.

    Args:
        fn: The reader's accuracy past twice the training length.
        runs: The runs, by encoding.
        settings: The keyword arguments ``runs`` was made with (``train_len``, ``test_len``, ``steps``...), besides
            the encodings and the seeds.

    Returns:
        Passes when the accuracies are right; the message says whether the prediction was right, then shows the
        measured ranking.
    """
    from helpers.experiments import position

    if (not isinstance(runs, dict) or not runs or not all(
            isinstance(g, list) and g and all(isinstance(r, position.ExtrapolationRun) for r in g)
            for g in runs.values())):
        return verdict(False, "ch06_memory.ranking.not_runs", got=type(runs).__name__)
    names = list(runs)
    prediction = recorded(RANKING)
    if prediction is None:
        return verdict(False, "ch06_memory.ranking.no_prediction", names=str(names))
    predicted = prediction.value
    if (not isinstance(predicted, (list, tuple)) or sorted(map(str, predicted)) != sorted(names)
            or len(set(predicted)) != len(names)):
        return verdict(False, "ch06_memory.ranking.bad_prediction", names=str(names), got=repr(predicted))
    failure = _reading(fn, _probe(names, seeding.generator(6350)), names)
    if failure is not None:
        return failure
    gen = seeding.fresh_generator()
    failure = _reading(fn, _probe(names, gen), names)
    if failure is not None:
        return verdict(False, "cases.fresh", seed=gen.initial_seed(), verdict=quoted(failure))
    if not isinstance(settings, Mapping) or {"encodings", "seeds"} & set(settings):
        return verdict(False, "ch06_memory.ranking.settings", got=repr(settings))
    flat = [run for group in runs.values() for run in group]
    run = flat[draw_int(0, len(flat) - 1, gen)]
    try:
        again = position.extrapolation_runs((run.positional,), seeds=(run.seed,), **settings)[run.positional][0]
    except (TypeError, ValueError) as error:
        return verdict(False, "ch06_memory.ranking.settings", got=f"{settings!r}: {error}")
    if (again.train_len != run.train_len or len(again.per_position) != len(run.per_position)
            or any(abs(a - b) > 1e-6 for a, b in zip(again.per_position, run.per_position))):
        return verdict(False, "ch06_memory.ranking.not_reproduced", name=run.positional, seed=run.seed)
    reveal(RANKING)
    return _ranking_verdict(list(predicted), prediction.late, far_accuracy(runs))
