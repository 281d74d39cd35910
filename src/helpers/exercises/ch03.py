"""Checkers for the exercises of chapter 3, "Why scale by sqrt(d_k)" (``notebooks/03-scaling-lab.ipynb``).

Each checker takes the reader's answer, never raises on a wrong one (exceptions from the
reader's code are caught and reported), and returns a :class:`~helpers.exercises.CheckResult`
whose message names the mistake: a standard deviation for a variance, ``d_model`` for
``head_dim``, a missing square root, a sign, the variance across pairs for the one within a row,
a softmax over the wrong axis. A checker that takes a function runs it under the guard
(:func:`helpers.exercises.reader.call_watched`): every function of the package is off limits,
and so are the third-party equivalents of what the exercise practises (autograd for the
Jacobian, PyTorch's attention for the bug hunt); an answer that reaches one fails, by name, by
whatever route it reaches it. Inputs (sizes, values, head layouts, weights) are drawn afresh at
each call (:func:`helpers.exercises.reader.fresh_generator`), so no table of answers passes.

Predictions are recorded before the result is shown (:func:`helpers.exercises.predictions.predict`,
under the keys :data:`VARIANCE_KEY`, :data:`ROW_SPREAD_KEY`, :data:`LEARNING_RATES_KEY`,
:data:`ENTROPY_KEY`); the checker refuses a missing one, says whether it was right, and marks a
late one as such.

The lab's exercises, in its order:

1. :func:`check_predicted_variance`: ``Var(q . k)`` for entries of variance ``sigma^2`` (predicted on
   paper, then measured by the checker).
2. :func:`check_row_spread`: measure the spread the softmax sees, within a row (after a prediction).
3. :func:`check_softmax_jacobian`: write the softmax Jacobian ``diag(p) - p p^T``.
4. :func:`check_lr_prediction`: predict the usable learning rates, run
   :func:`run_learning_rate_sweep`, then read them off the runs (one run is trained again).
5. :func:`check_attention_scale`: the right scale for a head layout (MHA, GQA, MQA).
6. :func:`check_multihead_fix`: find and fix the scaling bug in :func:`buggy_multihead_attention`.

Not in the lab (a teacher's extra): :func:`check_entropy_prediction`, the attention entropy for a
given ``d_k``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from typing import Any

import torch
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch03 import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.guard import ATTENTION, AUTOGRAD
from helpers.exercises.messages import phrase
from helpers.exercises.predictions import Prediction, recorded, reveal
from helpers.exercises.reader import Rejected, call_watched, checker, fresh_generator, fresh_int
from helpers.experiments.recall import RecallRun
from helpers.experiments.scale_training import LearningRateSweep, learning_rate_sweep, recall_config, train_seeds
from helpers.multihead import MultiHeadAttention
from helpers.train import TrainingHistory

from .. import seeding

__all__ = [
    "MIN_SEEDS",
    "MIN_LEARNING_RATES",
    "RETRAINED_STEPS",
    "VARIANCE_KEY",
    "ROW_SPREAD_KEY",
    "LEARNING_RATES_KEY",
    "ENTROPY_KEY",
    "check_predicted_variance",
    "check_row_spread",
    "check_softmax_jacobian",
    "run_learning_rate_sweep",
    "check_lr_prediction",
    "check_attention_scale",
    "buggy_multihead_attention",
    "check_multihead_fix",
    "expected_entropy",
    "check_entropy_prediction",
]

VARIANCE_KEY = "ch03.variance"
"""The prediction of exercise 1 — a number, ``Var(q . k)``."""
ROW_SPREAD_KEY = "ch03.row_spread"
"""The prediction of exercise 2 — ``"smaller"``, ``"same"`` or ``"larger"`` than ``3 d_k``."""
LEARNING_RATES_KEY = "ch03.learning_rates"
"""The prediction of exercise 4 — ``{"scaled": n, "no scale": m}``, usable learning rates of each head."""
ENTROPY_KEY = "ch03.entropy"
"""The prediction of the extra exercise — a mean entropy in nats."""


def _as_number(answer: Any, what: dict[str, str], language: str | None) -> float:
    """``answer`` as a finite number, else :class:`Rejected` naming ``what`` was expected."""
    if isinstance(answer, Tensor) and answer.numel() == 1:
        answer = answer.item()
    if answer is None or isinstance(answer, bool) or not isinstance(answer, (int, float)):
        raise Rejected(CheckResult.of(False, "ch03.number.expected", language, what=what,
                                      type=type(answer).__name__, value=repr(answer)))
    if not math.isfinite(answer):
        raise Rejected(CheckResult.of(False, "ch03.number.finite", language, what=what, value=repr(answer)))
    return float(answer)


def _near(value: float, target: float, rtol: float) -> bool:
    return abs(value - target) <= rtol * abs(target) + 1e-12


def _prediction(key: str, what: str, language: str | None) -> Prediction:
    """The prediction recorded under ``key``, else :class:`Rejected` saying how to record one (nothing revealed).

    ``what`` names the catalogue's phrase for what the prediction is (``"ch03.predict.number"``...).
    """
    prediction = recorded(key)
    if prediction is None or prediction.value is ...:
        raise Rejected(CheckResult.of(False, "ch03.predict.missing", language, key=key, what=phrase(what)))
    return prediction


# --------------------------------------------------------------------------------------------
# Exercise 1: predict Var(q . k)
# --------------------------------------------------------------------------------------------


def _measured_variance(d_k: int, sigma: float, samples: int = 20_000) -> float:
    """``Var(q . k)`` over ``samples`` fresh pairs with ``N(0, sigma^2)`` entries (float64)."""
    gen = fresh_generator()
    q = sigma * torch.randn(samples, d_k, generator=gen, dtype=torch.float64)  # (N, E)
    k = sigma * torch.randn(samples, d_k, generator=gen, dtype=torch.float64)  # (N, E)
    return float((q * k).sum(-1).var())


@checker
def check_predicted_variance(*, d_k: int = 64, sigma: float = 0.5, language: str | None = None) -> CheckResult:
    """Check the predicted ``Var(q . k)`` for independent entries ``q_i, k_i ~ N(0, sigma^2)``.

    The prediction is the number recorded with ``predict(VARIANCE_KEY, value)`` before this call
    (:mod:`helpers.exercises.predictions`); without one the checker refuses and shows nothing.
    Then it measures the variance on fresh samples, shows it, and compares. The right answer is
    ``d_k * sigma^4``: each product ``q_i k_i`` has variance ``E[q_i^2] E[k_i^2] = sigma^2 *
    sigma^2``, and the ``d_k`` independent products add up. Explained in chapter 3.

    Args:
        d_k: The vectors' size in the question.
        sigma: The entries' standard deviation in the question.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (a standard deviation, one factor of ``sigma^2``,
        ``d_k`` squared, a missing sum), and saying whether the prediction came late.
    """
    prediction = _prediction(VARIANCE_KEY, "ch03.predict.number", language)
    value = _as_number(prediction.value, phrase("ch03.what.variance"), language)
    measured = _measured_variance(d_k, sigma)
    reveal(VARIANCE_KEY)
    right = d_k * sigma**4
    shown = phrase("ch03.variance.shown", measured=measured, right=right)
    if _near(value, right, 0.02):
        key = "ch03.variance.late" if prediction.late else "ch03.variance.passed"
        return CheckResult.of(True, key, language, d_k=d_k, sigma=sigma, right=right, measured=measured)
    wrong = [
        (math.sqrt(right), "std"),
        (d_k * sigma**2, "sigma_once"),
        (float(d_k), "unit"),
        (sigma**4, "one_product"),
        (d_k**2 * sigma**4, "squared"),
        (math.sqrt(d_k) * sigma**2, "sqrt"),
        (d_k * sigma, "sigma_for_variance"),
    ]
    mistake = next((name for candidate, name in wrong if _near(value, candidate, 0.02)), "other")
    diagnosis = phrase(f"ch03.variance.{mistake}", value=value, d_k=d_k, sigma_squared=sigma**2)
    return CheckResult.of(False, "ch03.variance.wrong", language, diagnosis=diagnosis, shown=shown)


# --------------------------------------------------------------------------------------------
# Exercise 2: measure the spread the softmax sees
# --------------------------------------------------------------------------------------------

_ROW_CHOICES = ("smaller", "same", "larger")


def _row_candidates(q: Tensor, k: Tensor) -> tuple[list[float], list[tuple[float, str]]]:
    """The right values (both variance conventions) and the usual wrong ones, measured on ``q``, ``k``."""
    scores = (k @ q.unsqueeze(-1)).squeeze(-1)  # (N, S, E) x (N, E, 1) -> (N, S): query i against its own keys
    flat = scores.flatten()
    right = [float(scores.var(-1).mean()), float(scores.var(-1, correction=0).mean())]
    all_keys = q @ k.reshape(-1, k.shape[-1]).T  # (N, N*S): every query against every key
    centred = ((k - 1) @ (q - 1).unsqueeze(-1)).squeeze(-1)  # (N, S): entries of mean 0
    d_k = q.shape[-1]
    wrong = [(float(v), name) for v, name in [
        (flat.var(), "across_pairs"), (flat.var(correction=0), "across_pairs"),
        (scores.var(0).mean(), "over_queries"), (scores.var(0, correction=0).mean(), "over_queries"),
        (all_keys.var(-1).mean(), "all_keys"), (all_keys.var(-1, correction=0).mean(), "all_keys"),
        (centred.var(-1).mean(), "zero_mean"), (centred.var(-1, correction=0).mean(), "zero_mean"),
        (scores.pow(2).mean(-1).mean(), "second_moment"),
        (scores.std(-1).mean(), "std"), (scores.std(-1, correction=0).mean(), "std"),
        (math.sqrt(right[0]), "std"), (math.sqrt(right[1]), "std"),
        (flat.std(), "std_across"),
    ]]
    wrong += [(2.0 * d_k, "formula"), (3.0 * d_k, "formula"), (float(d_k), "formula")]
    return right, wrong


def _row_draw(fn: Callable[[Tensor, Tensor], float], gen: torch.Generator,
              language: str | None) -> tuple[str, dict[str, Any]]:
    """One fresh draw for :func:`check_row_spread`: ``("right" | a mistake | "off", the message's fields)``."""
    n, s, d_k = fresh_int(40, 160, gen), fresh_int(8, 40, gen), fresh_int(8, 160, gen)
    q = torch.randn(n, d_k, generator=gen, dtype=torch.float64) + 1  # (N, E)
    k = torch.randn(n, s, d_k, generator=gen, dtype=torch.float64) + 1  # (N, S, E)
    right, wrong = _row_candidates(q, k)
    result = call_watched(fn, q.clone(), k.clone(), language=language)
    value = _as_number(result, phrase("ch03.what.row_variance", n=n, s=s, d_k=d_k), language)
    # the nearest of the right values and the mistakes, within 1e-4 (an answer computed in float32 is exact)
    candidates = [(r, "right") for r in right] + wrong
    distance, nearest = min((abs(value - c) / max(abs(c), 1e-12), name) for c, name in candidates)
    return (nearest if distance <= 1e-4 else "off"), {"n": n, "s": s, "d_k": d_k, "value": value}


@checker
def check_row_spread(fn: Callable[[Tensor, Tensor], float], *, language: str | None = None) -> CheckResult:
    """Check ``fn(queries, keys) -> variance`` of the scores *within a softmax row*, and the prediction.

    The checker draws ``queries`` ``(N, E)`` and ``keys`` ``(N, S, E)`` (query ``i`` has its own
    ``S`` keys ``keys[i]``), entries ``N(1, 1)``, with fresh sizes and values at each call, three
    times. The softmax of a row sees one query against its keys, so the spread that matters is
    the variance of ``keys[i] @ queries[i]`` over the keys, averaged over the queries, near
    ``|q|^2 ~ 2 d_k``; the variance across independent pairs is ``3 d_k``, the extra ``d_k``
    being the row's common shift ``q . E[k]``, which the softmax ignores. The answer must equal
    the checker's own measurement on the same vectors (either variance convention); it may not
    reach the package. Before the run, the reader records with ``predict(ROW_SPREAD_KEY, choice)``
    whether the spread within a row is ``"smaller"``, ``"same"`` or ``"larger"`` than ``3 d_k``.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (the variance across pairs or over the queries, every
        key instead of the row's own, zero-mean entries, an uncentred second moment, a standard
        deviation, a formula instead of a measurement), and whether the prediction was right.
    """
    prediction = _prediction(ROW_SPREAD_KEY, "ch03.predict.choice", language)
    if prediction.value not in _ROW_CHOICES:
        return CheckResult.of(False, "ch03.row.bad_choice", language, value=repr(prediction.value),
                              choices=", ".join(repr(c) for c in _ROW_CHOICES))
    gen = fresh_generator()
    measured = 0.0
    for _ in range(3):
        verdict, fields = _row_draw(fn, gen, language)
        if verdict == "right":
            measured = fields["value"]
            continue
        if verdict != "off" and _row_draw(fn, gen, language)[0] != verdict:
            # one value can land within 1e-4 of a mistake by chance (a made-up 2.02 d_k is that close to the
            # variance over every key in about 1 draw in 140): a mistake is named only when a second fresh
            # draw shows the same one
            verdict = "off"
        return CheckResult.of(False, f"ch03.row.{verdict}", language, **fields)
    d_k = fields["d_k"]
    reveal(ROW_SPREAD_KEY)
    if prediction.late:
        judged = phrase("ch03.row.late")
    elif prediction.value == "smaller":
        judged = phrase("ch03.row.predicted")
    else:
        judged = phrase("ch03.row.surprised", choice=prediction.value)
    return CheckResult.of(True, "ch03.row.passed", language, measured=measured, d_k=d_k, twice=2 * d_k,
                          thrice=3 * d_k, judged=judged)


# --------------------------------------------------------------------------------------------
# Exercise 3: the softmax Jacobian
# --------------------------------------------------------------------------------------------


def _jacobian_logits(gen: torch.Generator) -> Tensor:
    """Fresh logits ``(B1, B2, S)``: spread rows, one saturated row (entries of ±1000), one uniform row."""
    batch = fresh_int(1, 3, gen)
    shape = (batch, fresh_int(3 if batch == 1 else 2, 4, gen), fresh_int(3, 9, gen))  # a spread row always
    logits = 3 * torch.randn(*shape, generator=gen, dtype=torch.float64)
    signs = torch.randint(0, 2, (shape[-1],), generator=gen, dtype=torch.float64) * 2 - 1
    signs[fresh_int(0, shape[-1] - 1, gen)] = 1.0  # at least one +1000
    logits[0, 0] = 1000.0 * signs  # saturated: p is (nearly) one-hot, naive exponentials overflow
    logits[-1, -1] = 0.0  # uniform
    return logits


@checker
def check_softmax_jacobian(fn: Callable[[Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(logits) -> J`` with ``J[..., i, j] = d p_i / d z_j = p_i (delta_ij - p_j)``.

    Tried on fresh logits ``(B1, B2, S)`` (fresh sizes and values at each call), one row of which
    is saturated (logits of ±1000: a naive ``exp`` overflows) and one uniform. Compared with the
    closed form ``diag(p) - p p^T`` (itself tested against autograd). The package and autograd
    (:data:`~helpers.exercises.guard.AUTOGRAD`: ``torch.autograd``, ``torch.func``) are off limits
    while ``fn`` runs: the exercise asks for the formula.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (a missing ``diag(p)`` or ``p p^T``, a sign, logits used
        for probabilities, a lost batch dimension, an overflow in the saturated row).
    """
    logits = _jacobian_logits(fresh_generator())
    p = torch.softmax(logits, dim=-1)  # (..., S)
    outer = p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., S, S)
    expected = torch.diag_embed(p) - outer  # (..., S, S)
    result = call_watched(fn, logits.clone(), forbidden=AUTOGRAD, language=language)
    if not isinstance(result, Tensor):
        key = "ch03.jacobian.returned_none" if result is None else "ch03.jacobian.not_tensor"
        return CheckResult.of(False, key, language, type=type(result).__name__)
    if result.shape != expected.shape:
        return CheckResult.of(False, "ch03.jacobian.shape", language, shape=tuple(result.shape),
                              logits_shape=tuple(logits.shape), expected=tuple(expected.shape))
    result = result.double()
    if not bool(torch.isfinite(result).all()):
        return CheckResult.of(False, "ch03.jacobian.overflow", language)
    if torch.allclose(result, expected, atol=1e-6):
        return CheckResult.of(True, "ch03.jacobian.passed", language)
    z_outer = logits.unsqueeze(-1) * logits.unsqueeze(-2)
    wrong = [
        (-expected, "sign"),
        (torch.diag_embed(p), "only_diag"),
        (-outer, "only_outer"),
        (torch.diag_embed(logits) - z_outer, "logits"),
        (torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-1).transpose(-2, -1).sum(-1, keepdim=True),
         "not_outer"),
        (torch.diag_embed(p * (1 - p)), "only_diagonal_entries"),
        (torch.diag_embed(p) - p.pow(2).sum(-1, keepdim=True).unsqueeze(-1).expand_as(outer), "not_outer"),
    ]
    for candidate, mistake in wrong:
        if candidate.shape == result.shape and torch.allclose(result, candidate, atol=1e-6):
            return CheckResult.of(False, f"ch03.jacobian.{mistake}", language)
    return CheckResult.of(False, "ch03.jacobian.differs", language,
                          max_error=float((result - expected).abs().max()))


# --------------------------------------------------------------------------------------------
# Exercise 4: predict the usable learning rates, run the sweep, then read them off the runs
# --------------------------------------------------------------------------------------------

MIN_SEEDS = 3
"""Seeds a sweep needs at each learning rate, the same for both heads — one seed proves nothing."""
MIN_LEARNING_RATES = 2
"""Learning rates a sweep needs — one learning rate is not a range."""


def run_learning_rate_sweep(lrs: tuple[float, ...] | list[float], *, d_k: int = 128, steps: int = 300,
                            seeds: tuple[int, ...] | list[int] = (0, 1, 2)) -> LearningRateSweep:
    """Exercise 4's runs: :func:`~helpers.experiments.scale_training.learning_rate_sweep`, which shows the result.

    A prediction for :data:`LEARNING_RATES_KEY` recorded after this call is marked late
    (:func:`helpers.exercises.predictions.reveal`). Explained in chapter 3.

    Args:
        lrs: Learning rates, increasing.
        d_k: Head size (one head).
        steps: Step budget per run.
        seeds: Seeds of each learning rate (at least :data:`MIN_SEEDS`).

    Returns:
        The :class:`~helpers.experiments.scale_training.LearningRateSweep`.
    """
    reveal(LEARNING_RATES_KEY)
    sweep = learning_rate_sweep(tuple(lrs), d_k=d_k, steps=steps, seeds=tuple(seeds))
    _PRODUCED.add(_digest(sweep))
    return sweep


_PRODUCED: set[str] = set()
"""Digests of the sweeps :func:`run_learning_rate_sweep` returned in this session: a sweep edited since is refused."""


def _digest(sweep: LearningRateSweep) -> str:
    """A digest of everything the checker reads from ``sweep`` (settings, seeds, every run's history)."""
    digest = hashlib.sha256(repr((sweep.d_k, list(sweep.lrs), sweep.threshold)).encode())
    for label in sorted(sweep.runs):
        for runs in sweep.runs[label]:
            for run in runs:
                digest.update(repr((label, run.label, run.seed, run.config, run.history.accuracy, run.history.loss,
                                    run.score_std)).encode())
    return digest.hexdigest()


def _fake_run(final: float) -> RecallRun:
    return RecallRun("x", recall_config(4), 0, TrainingHistory(accuracy=[final] * 50), 0)


def _made_up_sweep(gen: torch.Generator) -> LearningRateSweep:
    """A fresh made-up sweep of 4 or 5 learning rates where, for each head, the mean over seeds passes at one learning
    rate while one seed fails, one seed passes at another while the mean fails, every seed fails at a third and
    passes at a fourth."""
    count = fresh_int(4, 5, gen)
    lrs = sorted({round(10 ** (-4 + 3 * float(torch.rand((), generator=gen))), 6) for _ in range(count)})
    while len(lrs) < count:  # two equal draws (rare): another, distinct learning rate
        lrs = sorted(set(lrs) | {round(lrs[-1] * 1.5, 6)})
    runs: dict[str, list[list[RecallRun]]] = {}
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
            per_lr.append([_fake_run(finals[j]) for j in order])
        runs[label] = per_lr
    return LearningRateSweep(4, lrs, runs, 0.9)


def _check_sweep(sweep: Any, language: str | None) -> None:
    """Refuse a sweep that is not a fair, complete one (stated minimums), or that training did not produce."""
    if not isinstance(sweep, LearningRateSweep):
        raise Rejected(CheckResult.of(False, "ch03.lr.not_a_sweep", language, type=type(sweep).__name__))
    if set(sweep.runs) != {"scaled", "no scale"} or len(sweep.lrs) < MIN_LEARNING_RATES:
        raise Rejected(CheckResult.of(False, "ch03.lr.too_few_lrs", language, count=len(sweep.lrs),
                                      minimum=MIN_LEARNING_RATES))
    for label, scale in (("scaled", None), ("no scale", 1.0)):
        if len(sweep.runs[label]) != len(sweep.lrs):
            raise Rejected(CheckResult.of(False, "ch03.lr.unfair", language, label=label))
        for lr, runs in zip(sweep.lrs, sweep.runs[label]):
            seeds = [run.seed for run in runs] if all(isinstance(r, RecallRun) for r in runs) else []
            if len(set(seeds)) < MIN_SEEDS or len(set(seeds)) != len(runs):
                raise Rejected(CheckResult.of(False, "ch03.lr.too_few_seeds", language, label=label, lr=lr,
                                              count=len(set(seeds)), minimum=MIN_SEEDS))
            first = sweep.runs["scaled"][sweep.lrs.index(lr)]
            if sorted(seeds) != sorted(run.seed for run in first) or any(
                    run.config.lr != lr or run.config.scale != scale or run.config.head_dim != sweep.d_k
                    or run.config.target != sweep.threshold or run.label != label
                    or run.config.steps != first[0].config.steps for run in runs):
                raise Rejected(CheckResult.of(False, "ch03.lr.unfair", language, label=label))


RETRAINED_STEPS = 40
"""Steps of a sweep's run the checker trains again (a constant learning rate — the start of a run does not
depend on how long it goes on); an edit anywhere else is caught by the sweep's digest."""


def _trained_again(run: RecallRun, steps: int = RETRAINED_STEPS) -> bool:
    """Whether the first ``steps`` steps of ``run``'s settings, trained again with its seed, give the start of its
    history (the global random state is kept)."""
    with torch.random.fork_rng(devices=[]):
        again = train_seeds(replace(run.config, steps=min(steps, run.config.steps), stop_after_target=None),
                            (run.seed,), label=run.label)[0]
    done = len(again.history.loss)
    return (len(run.history.loss) >= done and again.history.accuracy == run.history.accuracy[:done]
            and again.history.loss == run.history.loss[:done]
            and again.score_std == run.score_std[:len(again.score_std)])


@checker
def check_lr_prediction(fn: Callable[[LearningRateSweep, str], list[float]], sweep: LearningRateSweep, *,
                        language: str | None = None) -> CheckResult:
    """Check ``fn(sweep, label) -> usable learning rates``, and the prediction recorded before the runs.

    A learning rate is usable when *every* seed's final accuracy reaches ``sweep.threshold``
    (one seed in three failing is a learning rate nobody can rely on). The prediction, recorded
    with ``predict(LEARNING_RATES_KEY, {"scaled": n, "no scale": m})`` before
    :func:`run_learning_rate_sweep` showed the runs, says how many of ``sweep.lrs`` each head can
    use; without one the checker refuses. ``sweep`` must be a fair sweep (at least
    :data:`MIN_LEARNING_RATES` learning rates, :data:`MIN_SEEDS` seeds at each, the same seeds,
    steps and head size for both heads), returned by :func:`run_learning_rate_sweep` and unchanged
    since, and the first :data:`RETRAINED_STEPS` steps of one of its runs, drawn at random, are trained
    again and must give the same history: a made-up or edited sweep is refused. ``fn`` is tried on a fresh
    made-up sweep where the mean over seeds and the worst seed disagree, then on ``sweep``;
    it may not reach the package (except
    :meth:`~helpers.experiments.scale_training.LearningRateSweep.final_accuracy_by_seed`, which reads
    the runs). A wrong prediction does not fail the exercise; the verdict says so.

    Args:
        fn: The reader's function.
        sweep: The lab's :class:`~helpers.experiments.scale_training.LearningRateSweep`.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names a missing prediction, an unfair or untrained sweep, the mean over
        seeds...
    """
    prediction = _prediction(LEARNING_RATES_KEY, "ch03.predict.counts", language)
    _check_sweep(sweep, language)
    count = len(sweep.lrs)
    value = prediction.value
    if (not isinstance(value, dict) or set(value) != {"scaled", "no scale"}
            or any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= count for v in value.values())):
        return CheckResult.of(False, "ch03.lr.no_prediction", language, count=count, prediction=repr(value))
    if _digest(sweep) not in _PRODUCED:
        return CheckResult.of(False, "ch03.lr.not_from_run", language)
    gen = fresh_generator()
    label = ("scaled", "no scale")[fresh_int(0, 1, gen)]
    i = fresh_int(0, count - 1, gen)
    run = sweep.runs[label][i][fresh_int(0, len(sweep.runs[label][i]) - 1, gen)]
    if not _trained_again(run):
        return CheckResult.of(False, "ch03.lr.not_trained", language, label=label, lr=sweep.lrs[i], seed=run.seed)
    allowed = (LearningRateSweep.final_accuracy_by_seed,)
    for probe, name in ((_made_up_sweep(gen), phrase("ch03.lr.made_up_sweep")), (sweep, phrase("ch03.lr.labs_sweep"))):
        for label in ("scaled", "no scale"):
            result = call_watched(fn, probe, label, allowed=allowed, language=language)
            if not isinstance(result, (list, tuple)) or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in result):
                return CheckResult.of(False, "ch03.lr.not_a_list", language, result=repr(result))
            right = probe.usable(label)
            if sorted(float(v) for v in result) == right:
                continue
            by_seed = probe.final_accuracy_by_seed(label)
            mean_based = [lr for lr, a in zip(probe.lrs, by_seed) if sum(a) / len(a) >= probe.threshold]
            any_based = [lr for lr, a in zip(probe.lrs, by_seed) if max(a) >= probe.threshold]
            if sorted(float(v) for v in result) in (mean_based, any_based):
                key = "ch03.lr.mean_over_seeds" if sorted(result) == mean_based else "ch03.lr.any_seed"
                return CheckResult.of(False, key, language, name=name, label=repr(label))
            return CheckResult.of(False, "ch03.lr.wrong", language, name=name, label=repr(label), right=str(right),
                                  returned=str(list(result)))
    reveal(LEARNING_RATES_KEY)
    measured = {label: len(sweep.usable(label)) for label in ("scaled", "no scale")}
    if prediction.late:
        key = "ch03.lr.passed_late"
    else:
        key = "ch03.lr.passed_predicted" if measured == value else "ch03.lr.passed_surprised"
    return CheckResult.of(True, key, language, scaled=str(sweep.usable("scaled")),
                          unscaled=str(sweep.usable("no scale")), lrs=str(sweep.lrs),
                          predicted_scaled=value["scaled"], predicted_unscaled=value["no scale"],
                          measured_scaled=measured["scaled"], measured_unscaled=measured["no scale"])


# --------------------------------------------------------------------------------------------
# Exercise 5: the right scale for a head layout
# --------------------------------------------------------------------------------------------


def _scale_mistakes(embed_dim: int, num_heads: int, num_kv_heads: int) -> list[tuple[float, str]]:
    """The scale each usual mistake gives for one head layout, with the mistake's key."""
    head_dim, kv_dim = embed_dim // num_heads, embed_dim // num_kv_heads
    return [
        (1 / math.sqrt(embed_dim), "model_dim"),
        (math.sqrt(head_dim), "multiplier"),
        (1 / head_dim, "no_sqrt"),
        (1 / math.sqrt(kv_dim), "kv_heads"),
        (1 / math.sqrt(num_heads), "num_heads"),
        (math.sqrt(embed_dim), "two_mistakes"),
    ]


def _mistakes_are_told_apart(embed_dim: int, num_heads: int, num_kv_heads: int) -> bool:
    """Whether every mistake that misses the right scale gives a number of its own (no two alike).

    ``head_dim = 4`` with ``num_heads = 16``, say, gives ``1/head_dim = 1/sqrt(num_heads)``: such a
    layout could not say which mistake was made.
    """
    right = 1 / math.sqrt(embed_dim // num_heads)
    values = [v for v, _ in _scale_mistakes(embed_dim, num_heads, num_kv_heads) if not _near(v, right, 1e-6)]
    return all(not _near(a, b, 1e-6) for i, a in enumerate(values) for b in values[i + 1:])


def _fresh_layouts(gen: torch.Generator) -> list[tuple[int, int, int]]:
    """Fresh ``(embed_dim, num_heads, num_kv_heads)``: GQA, MHA, MQA and one head, ``head_dim`` never 1 nor
    ``num_heads``.

    The GQA layout comes first, and there every usual mistake misses the right scale and gives a number of its own
    (:func:`_mistakes_are_told_apart`), so a wrong answer is named there. In the others some mistakes coincide by
    their nature (with one key/value head, ``d_model / num_kv_heads`` is ``d_model``; with one head, ``sqrt(head_dim)``
    is ``sqrt(d_model)``).
    """
    layouts = []
    for kind in ("gqa", "mha", "mqa", "one"):
        heads = {"gqa": (4, 6, 8, 12, 16)[fresh_int(0, 4, gen)], "one": 1}.get(kind) or fresh_int(2, 16, gen)
        if kind == "gqa":
            divisors = [d for d in range(2, heads) if heads % d == 0]
            kv = divisors[fresh_int(0, len(divisors) - 1, gen)]
        else:
            kv = {"mha": heads, "mqa": 1, "one": 1}[kind]
        while True:
            head_dim = fresh_int(2, 48, gen)
            if head_dim != heads and (kind != "gqa" or _mistakes_are_told_apart(heads * head_dim, heads, kv)):
                break
        layouts.append((heads * head_dim, heads, kv))
    return layouts


@checker
def check_attention_scale(fn: Callable[[int, int, int], float], *, language: str | None = None) -> CheckResult:
    """Check ``fn(embed_dim, num_heads, num_kv_heads) -> scale`` on fresh head layouts.

    The factor on ``q . k`` must be ``1 / sqrt(head_dim)`` with ``head_dim = embed_dim /
    num_heads``: each head's dot product runs over ``head_dim`` features, whatever the number of
    key/value heads (GQA and MQA share keys between query heads but do not change their size).
    The layouts (GQA, MHA, MQA, one head) are drawn afresh at each call. The package is off
    limits while ``fn`` runs (``logit_scale_of``, ``MultiHeadAttention``...): reading the answer off
    it fails, by name.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (``d_model`` for ``head_dim``, a missing square root,
        a multiplier instead of a divisor, the key/value heads).
    """
    for embed_dim, num_heads, num_kv_heads in _fresh_layouts(fresh_generator()):
        layout = f"embed_dim={embed_dim}, num_heads={num_heads}, num_kv_heads={num_kv_heads}"
        result = call_watched(fn, embed_dim, num_heads, num_kv_heads, language=language)
        value = _as_number(result, phrase("ch03.what.scale", layout=layout), language)
        head_dim = embed_dim // num_heads
        right = 1 / math.sqrt(head_dim)
        if _near(value, right, 1e-6):
            continue
        kv_dim = embed_dim // num_kv_heads
        wrong = _scale_mistakes(embed_dim, num_heads, num_kv_heads)
        for candidate, mistake in wrong:
            if _near(value, candidate, 1e-6):
                return CheckResult.of(False, f"ch03.scale.{mistake}", language, layout=layout, value=value,
                                      embed_dim=embed_dim, head_dim=head_dim, kv_dim=kv_dim)
        return CheckResult.of(False, "ch03.scale.wrong", language, layout=layout, right=right, value=value)
    return CheckResult.of(True, "ch03.scale.passed", language)


# --------------------------------------------------------------------------------------------
# Exercise 6: find and fix the scaling bug
# --------------------------------------------------------------------------------------------


def buggy_multihead_attention(x: Tensor, layer: MultiHeadAttention) -> Tensor:
    """Multi-head self-attention with ``layer``'s weights, and one bug (exercise 6 of the lab).

    Find it: the output differs from ``layer(x)[0]``. The bug is easy to write and nothing
    fails when it is there; chapter 3 measures what it costs.

    Args:
        x: Input tokens.
        layer: A :class:`~helpers.multihead.MultiHeadAttention` (no GQA) whose projections to use.

    Returns:
        The attention output.

    Shape:
        x ``(B, L, D)`` -> ``(B, L, D)``.
    """
    batch, length, d_model = x.shape
    num_heads = layer.num_heads
    head_dim = d_model // num_heads
    q = layer.q_proj(x).view(batch, length, num_heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    k = layer.k_proj(x).view(batch, length, num_heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    v = layer.v_proj(x).view(batch, length, num_heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_model)  # (B, H, L, E) x (B, H, E, L) -> (B, H, L, L)
    weights = torch.softmax(scores, dim=-1)  # (B, H, L, L)
    out = weights @ v  # (B, H, L, L) x (B, H, L, E) -> (B, H, L, E)
    out = out.transpose(1, 2).reshape(batch, length, d_model)  # (B, L, D): heads concatenated
    return layer.o_proj(out)  # (B, L, D)


_STRUCTURE = ("right", "softmax_axis", "split", "merge", "no_o_proj", "transposed_scores")
"""The head-handling bugs the checker names, on top of a wrong scale."""


def _variant(x: Tensor, layer: MultiHeadAttention, scale: float, bug: str = "right") -> Tensor:
    """``layer``'s self-attention with the factor ``scale`` on ``q . k`` and one head-handling ``bug``, in torch."""
    batch, length, d_model = x.shape
    heads = layer.num_heads
    head_dim = d_model // heads

    def split(t: Tensor) -> Tensor:
        if bug == "split":  # view straight to (B, H, L, E): heads mixed with positions
            return t.reshape(batch, heads, length, head_dim)
        return t.view(batch, length, heads, head_dim).transpose(1, 2)  # (B, H, L, E)

    q, k, v = split(layer.q_proj(x)), split(layer.k_proj(x)), split(layer.v_proj(x))
    if bug == "transposed_scores":  # keys against queries: row j holds key j's scores
        scores = k @ q.transpose(-2, -1) * scale  # (B, H, L, E) x (B, H, E, L) -> (B, H, L, L), transposed
    else:
        scores = q @ k.transpose(-2, -1) * scale  # (B, H, L, L)
    weights = torch.softmax(scores, dim=-2 if bug == "softmax_axis" else -1)  # (B, H, L, L)
    out = weights @ v  # (B, H, L, E)
    if bug == "merge":  # reshape without moving the heads back next to the features
        out = out.reshape(batch, length, d_model)
    else:
        out = out.transpose(1, 2).reshape(batch, length, d_model)  # (B, L, D)
    return out if bug == "no_o_proj" else layer.o_proj(out)


def _fresh_layer(gen: torch.Generator) -> tuple[MultiHeadAttention, Tensor]:
    """A float64 layer with fresh weights and a fresh input: ``head_dim`` not 1 nor ``num_heads``, ``L != head_dim``,
    and no two usual scale mistakes alike (:func:`_mistakes_are_told_apart`; ``head_dim = 2`` with
    ``num_heads = 4`` gives ``1/head_dim = 1/sqrt(num_heads)``)."""
    while True:
        num_heads, head_dim = fresh_int(2, 8, gen), fresh_int(2, 12, gen)
        length = fresh_int(3, 7, gen)
        if head_dim not in (num_heads, length) and _mistakes_are_told_apart(num_heads * head_dim, num_heads,
                                                                            num_heads):
            break
    embed_dim = num_heads * head_dim
    with torch.random.fork_rng(devices=[]):
        seeding.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
        layer = MultiHeadAttention(embed_dim, num_heads).double()
    x = torch.randn(fresh_int(1, 3, gen), length, embed_dim, generator=gen, dtype=torch.float64)
    return layer, x


@checker
def check_multihead_fix(fn: Callable[[Tensor, MultiHeadAttention], Tensor], *,
                        language: str | None = None) -> CheckResult:
    """Check the reader's fix of :func:`buggy_multihead_attention`: ``fn(x, layer) -> output``.

    Compared with ``layer(x)[0]`` (:class:`~helpers.multihead.MultiHeadAttention`) on two fresh
    layouts with fresh weights and inputs; a wrong output is matched against each head-handling
    bug (softmax over the queries, heads split by a bare ``view``, heads merged without moving
    them back, no output projection, the score matrix transposed), each with the right or one of
    the usual wrong scales, and named. The package and PyTorch's attention
    (:data:`~helpers.exercises.guard.ATTENTION`: ``scaled_dot_product_attention``,
    ``nn.MultiheadAttention``...) are off limits while ``fn`` runs: ``layer(x)[0]`` is not a fix.

    Args:
        fn: The reader's function, with the signature of :func:`buggy_multihead_attention`.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake.
    """
    gen = fresh_generator()
    for _ in range(2):
        layer, x = _fresh_layer(gen)
        embed_dim, num_heads = layer.embed_dim, layer.num_heads
        head_dim = embed_dim // num_heads
        with torch.no_grad():  # the reference and the usual mistakes, computed before the answer runs
            expected, _ = layer(x)
            scales = [(1 / math.sqrt(head_dim), "right"), (1 / math.sqrt(embed_dim), "model_scale"), (1.0, "unscaled"),
                      (1 / head_dim, "no_sqrt"), (math.sqrt(head_dim), "multiplier"),
                      (1 / math.sqrt(num_heads), "num_heads")]
            wrong = [(_variant(x, layer, scale, bug), bug, scale_name)
                     for bug in _STRUCTURE for scale, scale_name in scales if (bug, scale_name) != ("right", "right")]
            result = call_watched(fn, x.clone(), layer, forbidden=ATTENTION, language=language)
        if isinstance(result, tuple) and result and isinstance(result[0], Tensor):
            result = result[0]  # (output, weights), as MultiHeadAttention returns
        if not isinstance(result, Tensor):
            key = "ch03.fix.returned_none" if result is None else "ch03.fix.not_tensor"
            return CheckResult.of(False, key, language, type=type(result).__name__)
        if result.shape != expected.shape:
            return CheckResult.of(False, "ch03.fix.shape", language, expected=tuple(expected.shape),
                                  got=tuple(result.shape))
        result = result.detach().double()
        if torch.allclose(result, expected, atol=1e-8):
            continue
        for candidate, bug, scale_name in wrong:
            if torch.allclose(result, candidate, atol=1e-8):
                if bug == "right":
                    return CheckResult.of(False, f"ch03.fix.{scale_name}", language, embed_dim=embed_dim,
                                          num_heads=num_heads)
                also = phrase("ch03.fix.also_right" if scale_name == "right" else "ch03.fix.also_scale")
                return CheckResult.of(False, f"ch03.fix.{bug}", language, embed_dim=embed_dim, num_heads=num_heads,
                                      also=also)
        max_error = float((result - expected).abs().max())
        return CheckResult.of(False, "ch03.fix.differs", language, embed_dim=embed_dim, num_heads=num_heads,
                              max_error=max_error)
    return CheckResult.of(True, "ch03.fix.passed", language)


# --------------------------------------------------------------------------------------------
# Extra (not in the lab): predict the entropy for a given d_k
# --------------------------------------------------------------------------------------------


def _mean_entropy(scores: Tensor) -> float:
    p = torch.softmax(scores, dim=-1)  # (N, S)
    return float(-torch.special.xlogy(p, p).sum(-1).mean())


@lru_cache(maxsize=32)
def expected_entropy(d_k: int, num_keys: int = 16, *, scaled: bool = False, num_rows: int = 40_000) -> float:
    """Mean entropy (nats) of ``softmax(q . k_j * scale)`` over ``num_keys`` keys, N(0, 1) entries.

    A Monte Carlo estimate with ``num_rows`` rows and a fixed seed (standard error about 0.003
    nats). Given ``q``, the scores ``q . k_j`` are independent ``N(0, |q|^2)`` with
    ``|q|^2 ~ chi^2(d_k)``, so the rows are drawn that way (cheap for any ``d_k``); the global
    random state is left as it was. Explained in chapter 3.

    Args:
        d_k: Size of queries and keys.
        num_keys: Keys per row.
        scaled: Divide the scores by ``sqrt(d_k)``.
        num_rows: Rows averaged.

    Returns:
        The mean entropy in nats.
    """
    if not isinstance(d_k, int) or d_k < 1:
        raise ValueError(f"d_k must be a positive int, got {d_k!r}")
    with torch.random.fork_rng(devices=[]):
        seeding.manual_seed(12345)
        squared_norm = torch.distributions.Chi2(torch.tensor(float(d_k), dtype=torch.float64)).sample((num_rows, 1))
        scores = torch.randn(num_rows, num_keys, dtype=torch.float64) * squared_norm.sqrt()  # (N, S)
    if scaled:
        scores = scores / math.sqrt(d_k)
    return _mean_entropy(scores)


@lru_cache(maxsize=32)
def _entropy_at_std(std: float, num_keys: int, num_rows: int = 40_000) -> float:
    """Mean entropy of rows of ``num_keys`` independent ``N(0, std^2)`` scores."""
    gen = seeding.generator(54321)
    return _mean_entropy(torch.randn(num_rows, num_keys, generator=gen, dtype=torch.float64) * std)


@checker
def check_entropy_prediction(*, d_k: int = 256, num_keys: int = 16, scaled: bool = False,
                             language: str | None = None) -> CheckResult:
    """Check the predicted mean attention entropy (nats) for random queries and keys of size ``d_k``.

    The prediction is the number recorded with ``predict(ENTROPY_KEY, value)`` before this call;
    without one the checker refuses and shows nothing. The reference is :func:`expected_entropy`
    (the checker's own run, shown once the prediction is compared); a prediction within 0.03 nats
    (or 3%) passes, so a reader's own simulation with a few thousand rows is enough.

    Args:
        d_k: Size of queries and keys in the question.
        num_keys: Keys per softmax row.
        scaled: Whether the question's scores are divided by ``sqrt(d_k)``.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (scaled vs unscaled, bits vs nats, variance vs standard
        deviation, the uniform entropy), and saying whether the prediction came late.
    """
    prediction = _prediction(ENTROPY_KEY, "ch03.predict.nats", language)
    value = _as_number(prediction.value, phrase("ch03.what.entropy"), language)
    right = expected_entropy(d_k, num_keys, scaled=scaled)
    reveal(ENTROPY_KEY)
    tolerance = max(0.03, 0.03 * right)
    setting = phrase("ch03.entropy.setting_scaled" if scaled else "ch03.entropy.setting_unscaled", d_k=d_k,
                      num_keys=num_keys)
    if abs(value - right) <= tolerance:
        return CheckResult.of(True, "ch03.entropy.late" if prediction.late else "ch03.entropy.passed", language,
                              right=right, setting=setting, num_keys=num_keys, log_keys=math.log(num_keys))
    if value < 0:
        return CheckResult.of(False, "ch03.entropy.negative", language)
    if abs(value - right / math.log(2)) <= tolerance / math.log(2):
        return CheckResult.of(False, "ch03.entropy.bits", language, value=value)
    other = expected_entropy(d_k, num_keys, scaled=not scaled)
    if abs(value - other) <= tolerance:
        if scaled:
            return CheckResult.of(False, "ch03.entropy.unscaled", language, value=value)
        return CheckResult.of(False, "ch03.entropy.scaled", language, value=value, sqrt_d_k=math.sqrt(d_k))
    if not scaled and abs(value - _entropy_at_std(float(d_k), num_keys)) <= tolerance:
        return CheckResult.of(False, "ch03.entropy.std_d_k", language, value=value, d_k=d_k, sqrt_d_k=math.sqrt(d_k))
    if abs(value - math.log(num_keys)) <= 0.02:
        return CheckResult.of(False, "ch03.entropy.uniform", language, value=value, num_keys=num_keys,
                              setting=setting)
    return CheckResult.of(False, "ch03.entropy.too_high" if value > right else "ch03.entropy.too_low", language,
                          value=value)
