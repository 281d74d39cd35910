"""Exercise 4 of lab 3: predict the usable learning rates, run the sweep, then read them off the runs.

Contract (stated in the lab): record ``predict(LEARNING_RATES_KEY, {"scaled": n, "no scale": m})`` before
:func:`.run_learning_rate_sweep` shows the runs; ``my_usable(sweep, label)`` returns the list of learning rates
of ``sweep.lrs`` at which *every* seed's final accuracy reaches ``sweep.threshold``. Only
``LearningRateSweep.final_accuracy_by_seed`` of the package may be called.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch

from ... import seeding
from .. import CheckResult
from ..catalogue.ch03 import MESSAGES  # noqa: F401 (registers its messages)
from ..messages import phrase
from ..predictions import reveal
from ..reader import call_watched, checker, draw_int, reject, verdict
from .common import prediction

__all__ = ["MIN_SEEDS", "MIN_LEARNING_RATES", "RETRAINED_STEPS", "LEARNING_RATES_KEY", "run_learning_rate_sweep",
           "check_lr_prediction", "made_up_sweep"]

LEARNING_RATES_KEY = "ch03.learning_rates"
"""The prediction of exercise 4 — ``{"scaled": n, "no scale": m}``, usable learning rates of each head."""
MIN_SEEDS = 3
"""Seeds a sweep needs at each learning rate, the same for both heads — one seed proves nothing."""
MIN_LEARNING_RATES = 2
"""Learning rates a sweep needs — one learning rate is not a range."""
RETRAINED_STEPS = 40
"""Steps of a sweep's run the checker trains again (a constant learning rate — the start of a run does not depend
on how long it goes on); an edit anywhere else is caught by the sweep's digest."""

_PRODUCED: set[str] = set()
"""Digests of the sweeps :func:`.run_learning_rate_sweep` returned in this session — a sweep edited since is refused."""


def run_learning_rate_sweep(lrs: tuple[float, ...] | list[float], *, d_k: int = 128, steps: int = 300,
                            seeds: tuple[int, ...] | list[int] = (0, 1, 2)) -> Any:
    """Exercise 4's runs: :func:`~helpers.experiments.scale_training.learning_rate_sweep`, which shows the result.

    A prediction for :data:`.LEARNING_RATES_KEY` recorded after this call is marked late. Explained in chapter 3.

    Args:
        lrs: Learning rates, increasing.
        d_k: Head size (one head).
        steps: Step budget per run.
        seeds: Seeds of each learning rate (at least :data:`.MIN_SEEDS`).

    Returns:
        The :class:`~helpers.experiments.scale_training.LearningRateSweep`.
    """
    from helpers.experiments.scale_training import learning_rate_sweep

    reveal(LEARNING_RATES_KEY)
    sweep = learning_rate_sweep(tuple(lrs), d_k=d_k, steps=steps, seeds=tuple(seeds))
    _PRODUCED.add(_digest(sweep))
    return sweep


def _digest(sweep: Any) -> str:
    """A digest of everything the checker reads from ``sweep`` (settings, seeds, every run's history)."""
    digest = hashlib.sha256(repr((sweep.d_k, list(sweep.lrs), sweep.threshold)).encode())
    for label in sorted(sweep.runs):
        for runs in sweep.runs[label]:
            for run in runs:
                digest.update(repr((label, run.label, run.seed, run.config, run.history.accuracy, run.history.loss,
                                    run.score_std)).encode())
    return digest.hexdigest()


def made_up_sweep(gen: torch.Generator) -> Any:
    """A made-up sweep of 4 or 5 learning rates where, for each head, the mean over seeds passes at one learning
    rate while one seed fails, one seed passes at another while the mean fails, every seed fails at a third and
    passes at a fourth."""
    from helpers.experiments.recall import RecallRun
    from helpers.experiments.scale_training import LearningRateSweep, recall_config
    from helpers.train import TrainingHistory

    count = draw_int(4, 5, gen)
    lrs = sorted({round(10 ** (-4 + 3 * float(torch.rand((), generator=gen))), 6) for _ in range(count)})
    while len(lrs) < count:  # two equal draws (rare): another, distinct learning rate
        lrs = sorted(set(lrs) | {round(lrs[-1] * 1.5, 6)})
    runs: dict[str, list[list[Any]]] = {}
    for label in ("scaled", "no scale"):
        per_lr = []
        mean_trap, any_trap, bad, good = torch.randperm(len(lrs), generator=gen)[:4].tolist()
        for i in range(len(lrs)):
            if i == mean_trap:  # mean >= 0.9, one seed below
                finals = [0.99, 0.99, 0.85]
            elif i == any_trap:  # one seed >= 0.9, the mean below
                finals = [0.95, 0.5, 0.4]
            elif i != bad and (i == good or bool(torch.rand((), generator=gen) < 0.5)):
                finals = [0.91 + 0.08 * float(torch.rand((), generator=gen)) for _ in range(3)]
            else:
                finals = [0.1 + 0.5 * float(torch.rand((), generator=gen)) for _ in range(3)]
            order = torch.randperm(3, generator=gen).tolist()
            per_lr.append([RecallRun("x", recall_config(4), 0, TrainingHistory(accuracy=[finals[j]] * 50), 0)
                           for j in order])
        runs[label] = per_lr
    return LearningRateSweep(4, lrs, runs, 0.9)


def _check_sweep(sweep: Any) -> None:
    """Refuse a sweep that is not a fair, complete one (stated minimums)."""
    from helpers.experiments.recall import RecallRun
    from helpers.experiments.scale_training import LearningRateSweep

    if not isinstance(sweep, LearningRateSweep):
        raise reject("ch03.lr.not_a_sweep", type=type(sweep).__name__)
    if set(sweep.runs) != {"scaled", "no scale"} or len(sweep.lrs) < MIN_LEARNING_RATES:
        raise reject("ch03.lr.too_few_lrs", count=len(sweep.lrs), minimum=MIN_LEARNING_RATES)
    for label, scale in (("scaled", None), ("no scale", 1.0)):
        if len(sweep.runs[label]) != len(sweep.lrs):
            raise reject("ch03.lr.unfair", label=label)
        for lr, runs in zip(sweep.lrs, sweep.runs[label]):
            seeds = [run.seed for run in runs] if all(isinstance(r, RecallRun) for r in runs) else []
            if len(set(seeds)) < MIN_SEEDS or len(set(seeds)) != len(runs):
                raise reject("ch03.lr.too_few_seeds", label=label, lr=lr, count=len(set(seeds)), minimum=MIN_SEEDS)
            first = sweep.runs["scaled"][sweep.lrs.index(lr)]
            if sorted(seeds) != sorted(run.seed for run in first) or any(
                    run.config.lr != lr or run.config.scale != scale or run.config.head_dim != sweep.d_k
                    or run.config.target != sweep.threshold or run.label != label
                    or run.config.steps != first[0].config.steps for run in runs):
                raise reject("ch03.lr.unfair", label=label)


def _trained_again(run: Any, steps: int = RETRAINED_STEPS) -> bool:
    """Whether the first ``steps`` steps of ``run``'s settings, trained again with its seed, give the start of its
    history (the global random state is kept)."""
    from helpers.experiments.scale_training import train_seeds

    with torch.random.fork_rng(devices=[]):
        again = train_seeds(replace(run.config, steps=min(steps, run.config.steps), stop_after_target=None),
                            (run.seed,), label=run.label)[0]
    done = len(again.history.loss)
    return (len(run.history.loss) >= done and again.history.accuracy == run.history.accuracy[:done]
            and again.history.loss == run.history.loss[:done]
            and again.score_std == run.score_std[:len(again.score_std)])


def _reading(fn: Callable[..., Any], probe: Any, name: dict[str, str]) -> CheckResult | None:
    """The reader's usable learning rates of both heads of ``probe``: ``None`` when right, else the mistake."""
    from helpers.experiments.scale_training import LearningRateSweep

    for label in ("scaled", "no scale"):
        result = call_watched(fn, probe, label, allowed=(LearningRateSweep.final_accuracy_by_seed,))
        if not isinstance(result, (list, tuple)) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in result):
            return verdict(False, "ch03.lr.not_a_list", result=repr(result))
        right, given = probe.usable(label), sorted(float(v) for v in result)
        if given == right:
            continue
        by_seed = probe.final_accuracy_by_seed(label)
        mean_based = [lr for lr, a in zip(probe.lrs, by_seed) if sum(a) / len(a) >= probe.threshold]
        any_based = [lr for lr, a in zip(probe.lrs, by_seed) if max(a) >= probe.threshold]
        if given in (mean_based, any_based):
            key = "ch03.lr.mean_over_seeds" if given == mean_based else "ch03.lr.any_seed"
            return verdict(False, key, name=name, label=repr(label))
        return verdict(False, "ch03.lr.wrong", name=name, label=repr(label), right=str(right),
                       returned=str(list(result)))
    return None


@checker
def check_lr_prediction(fn: Callable[[Any, str], list[float]], sweep: Any) -> CheckResult:
    """Check ``fn(sweep, label) -> usable learning rates``, and the prediction recorded before the runs.

    A learning rate is usable when *every* seed's final accuracy reaches ``sweep.threshold``. ``sweep`` must be a
    fair sweep (at least :data:`.MIN_LEARNING_RATES` learning rates, :data:`.MIN_SEEDS` seeds at each, the same seeds,
    steps and head size for both heads), returned by :func:`.run_learning_rate_sweep` and unchanged since; the first
    :data:`.RETRAINED_STEPS` steps of one of its runs (drawn afresh) are trained again and must give the same
    history. ``fn`` is tried on a fresh made-up sweep where the mean over seeds and the worst seed disagree (its seed
    is in the verdict), then on ``sweep``. A wrong prediction does not fail the exercise; the verdict says so.

    Args:
        fn: The reader's function.
        sweep: The lab's :class:`~helpers.experiments.scale_training.LearningRateSweep`.

    Returns:
        The verdict.
    """
    record = prediction(LEARNING_RATES_KEY, "ch03.predict.counts")
    _check_sweep(sweep)
    count, value = len(sweep.lrs), record.value
    if (not isinstance(value, dict) or set(value) != {"scaled", "no scale"}
            or any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= count for v in value.values())):
        return verdict(False, "ch03.lr.no_prediction", count=count, prediction=repr(value))
    if _digest(sweep) not in _PRODUCED:
        return verdict(False, "ch03.lr.not_from_run")
    gen = seeding.fresh_generator()
    label = ("scaled", "no scale")[draw_int(0, 1, gen)]
    i = draw_int(0, count - 1, gen)
    run = sweep.runs[label][i][draw_int(0, len(sweep.runs[label][i]) - 1, gen)]
    if not _trained_again(run):
        return verdict(False, "ch03.lr.not_trained", label=label, lr=sweep.lrs[i], seed=run.seed)
    for probe, name in ((made_up_sweep(gen), phrase("ch03.lr.made_up_sweep", seed=gen.initial_seed())),
                        (sweep, phrase("ch03.lr.labs_sweep"))):
        failure = _reading(fn, probe, name)
        if failure is not None:
            return failure
    reveal(LEARNING_RATES_KEY)
    measured = {label: len(sweep.usable(label)) for label in ("scaled", "no scale")}
    key = "passed_late" if record.late else "passed_predicted" if measured == value else "passed_surprised"
    return verdict(True, f"ch03.lr.{key}", scaled=str(sweep.usable("scaled")), unscaled=str(sweep.usable("no scale")),
                   lrs=str(sweep.lrs), predicted_scaled=value["scaled"], predicted_unscaled=value["no scale"],
                   measured_scaled=measured["scaled"], measured_unscaled=measured["no scale"])
