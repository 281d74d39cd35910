"""Checkers for the exercises of chapter 3, "Why scale by sqrt(d_k)" (``notebooks/03-scaling-lab.ipynb``).

Each checker takes the reader's answer, never raises on a wrong one (exceptions from the
reader's code are caught and reported), and returns a :class:`~helpers.exercises.CheckResult`
whose message names the mistake: a standard deviation for a variance, ``d_model`` for
``head_dim``, a missing square root, a sign, the variance across pairs for the one within a row.
A checker that takes a function runs it with the package's own implementation of the thing
practised switched off (:func:`helpers.exercises.guard.package_disabled`): an answer that
delegates to it fails, by name.

The lab's exercises, in its order:

1. :func:`check_predicted_variance`: ``Var(q . k)`` for entries of variance ``sigma^2`` (on paper).
2. :func:`check_row_spread`: design the measurement of the spread the softmax sees (an experiment).
3. :func:`check_softmax_jacobian`: write the softmax Jacobian ``diag(p) - p p^T``.
4. :func:`check_lr_prediction`: predict the usable learning rates, then read them off the runs.
5. :func:`check_attention_scale`: the right scale for a head layout (MHA, GQA, MQA).
6. :func:`check_multihead_fix`: find and fix the scaling bug in :func:`buggy_multihead_attention`.

Not in the lab (a teacher's extra): :func:`check_entropy_prediction`, the attention entropy for a
given ``d_k``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import torch
from torch import Tensor

from helpers import attention as _attention
from helpers import scores as _scores
from helpers.attention import scaled_dot_product_attention
from helpers.diagnostics import softmax_jacobian, softmax_jacobian_norm
from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch03 import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.messages import phrase
from helpers.exercises.reader import Rejected, call_without_package, checker
from helpers.experiments import dot_variance
from helpers.experiments.logit_scale import logit_scale_of
from helpers.experiments.recall import RecallRun
from helpers.experiments.scale_training import LearningRateSweep, recall_config
from helpers.multihead import MultiHeadAttention
from helpers.train import TrainingHistory

__all__ = [
    "check_predicted_variance",
    "check_row_spread",
    "check_softmax_jacobian",
    "check_lr_prediction",
    "check_attention_scale",
    "buggy_multihead_attention",
    "check_multihead_fix",
    "expected_entropy",
    "check_entropy_prediction",
]


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


# --------------------------------------------------------------------------------------------
# Exercise 1: predict Var(q . k)
# --------------------------------------------------------------------------------------------


@checker
def check_predicted_variance(answer: Any, *, d_k: int = 64, sigma: float = 0.5,
                             language: str | None = None) -> CheckResult:
    """Check a predicted ``Var(q . k)`` for independent entries ``q_i, k_i ~ N(0, sigma^2)``.

    The right answer is ``d_k * sigma^4``: each product ``q_i k_i`` has variance
    ``E[q_i^2] E[k_i^2] = sigma^2 * sigma^2``, and the ``d_k`` independent products add up.

    Args:
        answer: The reader's number.
        d_k: The vectors' size in the question.
        sigma: The entries' standard deviation in the question.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (a standard deviation, one factor of ``sigma^2``,
        ``d_k`` squared, a missing sum).
    """
    value = _as_number(answer, phrase("ch03.what.variance"), language)
    right = d_k * sigma**4
    if _near(value, right, 0.02):
        return CheckResult.of(True, "ch03.variance.passed", language, d_k=d_k, sigma=sigma, right=right)
    wrong = [
        (math.sqrt(right), "std"),
        (d_k * sigma**2, "sigma_once"),
        (float(d_k), "unit"),
        (sigma**4, "one_product"),
        (d_k**2 * sigma**4, "squared"),
        (math.sqrt(d_k) * sigma**2, "sqrt"),
        (d_k * sigma, "sigma_for_variance"),
    ]
    for candidate, mistake in wrong:
        if _near(value, candidate, 0.02):
            return CheckResult.of(False, f"ch03.variance.{mistake}", language, value=value, d_k=d_k,
                                  sigma_squared=sigma**2)
    return CheckResult.of(False, "ch03.variance.other", language, value=value)


# --------------------------------------------------------------------------------------------
# Exercise 5: the right scale for a head layout
# --------------------------------------------------------------------------------------------

_LAYOUTS = [(512, 8, 8), (768, 12, 12), (256, 16, 4), (64, 4, 1), (96, 1, 1)]
_SCALE_SOURCES = (logit_scale_of, _scores.scaled_dot_scores, _attention.scaled_dot_product_attention,
                  MultiHeadAttention)


@checker
def check_attention_scale(fn: Callable[[int, int, int], float], *, language: str | None = None) -> CheckResult:
    """Check ``fn(embed_dim, num_heads, num_kv_heads) -> scale`` on several head layouts.

    The factor on ``q . k`` must be ``1 / sqrt(head_dim)`` with ``head_dim = embed_dim /
    num_heads``: each head's dot product runs over ``head_dim`` features, whatever the number of
    key/value heads (GQA and MQA share keys between query heads but do not change their size).

    The package's own scales are switched off while ``fn`` runs (``logit_scale_of``, the
    default scale of ``scaled_dot_scores`` and ``scaled_dot_product_attention``, and
    ``MultiHeadAttention``): reading the answer off them fails, by name.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (``d_model`` for ``head_dim``, a missing square root,
        a multiplier instead of a divisor, the key/value heads).
    """
    for embed_dim, num_heads, num_kv_heads in _LAYOUTS:
        layout = f"embed_dim={embed_dim}, num_heads={num_heads}, num_kv_heads={num_kv_heads}"
        result = call_without_package(fn, embed_dim, num_heads, num_kv_heads, disabled=_SCALE_SOURCES,
                                      language=language)
        value = _as_number(result, phrase("ch03.what.scale", layout=layout), language)
        head_dim = embed_dim // num_heads
        right = 1 / math.sqrt(head_dim)
        if _near(value, right, 1e-6):
            continue
        kv_dim = embed_dim // num_kv_heads
        wrong = [
            (1 / math.sqrt(embed_dim), "model_dim"),
            (math.sqrt(head_dim), "multiplier"),
            (1 / head_dim, "no_sqrt"),
            (1 / math.sqrt(kv_dim), "kv_heads"),
            (1 / math.sqrt(num_heads), "num_heads"),
            (math.sqrt(embed_dim), "two_mistakes"),
        ]
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


_ATTENTION_IMPLEMENTATIONS = (MultiHeadAttention, _attention.scaled_dot_product_attention, _attention.attention_weights,
                              _scores.scaled_dot_scores)


def _attention_with(x: Tensor, layer: MultiHeadAttention, scale: float) -> Tensor:
    """``layer``'s self-attention with the factor ``scale`` on ``q . k``, via the package's kernel."""
    batch, length, d_model = x.shape
    heads, head_dim = layer.num_heads, layer.head_dim
    q = layer.q_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    k = layer.k_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    v = layer.v_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    out = scaled_dot_product_attention(q, k, v, scale=scale)  # (B, H, L, E)
    return layer.o_proj(out.transpose(1, 2).reshape(batch, length, d_model))  # (B, L, D)


@checker
def check_multihead_fix(fn: Callable[[Tensor, MultiHeadAttention], Tensor], *,
                        language: str | None = None) -> CheckResult:
    """Check the reader's fix of :func:`buggy_multihead_attention`: ``fn(x, layer) -> output``.

    Compared with ``layer(x)[0]`` (:class:`~helpers.multihead.MultiHeadAttention`) on two
    layouts; a wrong output is matched against the usual wrong scales and a head-splitting
    mistake. The reference is computed first; then the reader's function runs with the package's
    attention switched off (``MultiHeadAttention``, ``scaled_dot_product_attention``,
    ``attention_weights``, ``scaled_dot_scores``): ``layer(x)[0]`` is not a fix.

    Args:
        fn: The reader's function, with the signature of :func:`buggy_multihead_attention`.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake.
    """
    for embed_dim, num_heads in ((96, 8), (48, 3)):  # head_dim**2 != d_model, so every wrong scale differs
        torch.manual_seed(3)
        layer = MultiHeadAttention(embed_dim, num_heads).double()
        x = torch.randn(2, 5, embed_dim, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
        head_dim = embed_dim // num_heads
        with torch.no_grad():  # the reference and the usual mistakes, before the package is switched off
            expected, _ = layer(x)
            wrong = [
                (_attention_with(x, layer, 1 / math.sqrt(embed_dim)), "model_scale"),
                (_attention_with(x, layer, 1.0), "unscaled"),
                (_attention_with(x, layer, 1 / head_dim), "no_sqrt"),
                (_attention_with(x, layer, math.sqrt(head_dim)), "multiplier"),
                (_attention_with(x, layer, 1 / math.sqrt(num_heads)), "num_heads"),
            ]
            result = call_without_package(fn, x, layer, disabled=_ATTENTION_IMPLEMENTATIONS,
                                          language=language)
        if isinstance(result, tuple) and result and isinstance(result[0], Tensor):
            result = result[0]  # (output, weights), as MultiHeadAttention returns
        if not isinstance(result, Tensor):
            key = "ch03.fix.returned_none" if result is None else "ch03.fix.not_tensor"
            return CheckResult.of(False, key, language, type=type(result).__name__)
        if result.shape != expected.shape:
            return CheckResult.of(False, "ch03.fix.shape", language, expected=tuple(expected.shape),
                                  got=tuple(result.shape))
        if torch.allclose(result.double(), expected, atol=1e-8):
            continue
        for candidate, mistake in wrong:
            if torch.allclose(result.double(), candidate, atol=1e-8):
                return CheckResult.of(False, f"ch03.fix.{mistake}", language, embed_dim=embed_dim,
                                      num_heads=num_heads)
        max_error = float((result.double() - expected).abs().max())
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
        torch.manual_seed(12345)
        squared_norm = torch.distributions.Chi2(torch.tensor(float(d_k), dtype=torch.float64)).sample((num_rows, 1))
        scores = torch.randn(num_rows, num_keys, dtype=torch.float64) * squared_norm.sqrt()  # (N, S)
    if scaled:
        scores = scores / math.sqrt(d_k)
    return _mean_entropy(scores)


@lru_cache(maxsize=32)
def _entropy_at_std(std: float, num_keys: int, num_rows: int = 40_000) -> float:
    """Mean entropy of rows of ``num_keys`` independent ``N(0, std^2)`` scores."""
    gen = torch.Generator().manual_seed(54321)
    return _mean_entropy(torch.randn(num_rows, num_keys, generator=gen, dtype=torch.float64) * std)


@checker
def check_entropy_prediction(answer: Any, *, d_k: int = 256, num_keys: int = 16, scaled: bool = False,
                             language: str | None = None) -> CheckResult:
    """Check a predicted mean attention entropy (nats) for random queries and keys of size ``d_k``.

    The reference is :func:`expected_entropy`; an answer within 0.03 nats (or 3%) passes, so a
    reader's own simulation with a few thousand rows is enough.

    Args:
        answer: The reader's number.
        d_k: Size of queries and keys in the question.
        num_keys: Keys per softmax row.
        scaled: Whether the question's scores are divided by ``sqrt(d_k)``.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (scaled vs unscaled, bits vs nats, variance vs standard
        deviation, the uniform entropy).
    """
    value = _as_number(answer, phrase("ch03.what.entropy"), language)
    right = expected_entropy(d_k, num_keys, scaled=scaled)
    tolerance = max(0.03, 0.03 * right)
    setting = phrase("ch03.entropy.setting_scaled" if scaled else "ch03.entropy.setting_unscaled", d_k=d_k,
                      num_keys=num_keys)
    if abs(value - right) <= tolerance:
        return CheckResult.of(True, "ch03.entropy.passed", language, right=right, setting=setting, num_keys=num_keys,
                              log_keys=math.log(num_keys))
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


# --------------------------------------------------------------------------------------------
# Exercise 3: the softmax Jacobian
# --------------------------------------------------------------------------------------------


@checker
def check_softmax_jacobian(fn: Callable[[Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(logits) -> J`` with ``J[..., i, j] = d p_i / d z_j = p_i (delta_ij - p_j)``.

    Tried on a batch of rows ``(2, 3, 5)``; compared with :func:`helpers.diagnostics.softmax_jacobian`
    (itself tested against autograd), which is switched off while ``fn`` runs.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (a missing ``diag(p)`` or ``p p^T``, a sign, logits used
        for probabilities, a lost batch dimension).
    """
    logits = torch.randn(2, 3, 5, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    expected = softmax_jacobian(logits).double()  # (2, 3, 5, 5)
    result = call_without_package(fn, logits.clone(), disabled=(softmax_jacobian, softmax_jacobian_norm),
                                  language=language)
    if not isinstance(result, Tensor):
        key = "ch03.jacobian.returned_none" if result is None else "ch03.jacobian.not_tensor"
        return CheckResult.of(False, key, language, type=type(result).__name__)
    if result.shape != expected.shape:
        return CheckResult.of(False, "ch03.jacobian.shape", language, shape=tuple(result.shape))
    result = result.double()
    if torch.allclose(result, expected, atol=1e-6):
        return CheckResult.of(True, "ch03.jacobian.passed", language)
    p = torch.softmax(logits, dim=-1)
    outer = p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., S, S)
    z_outer = logits.unsqueeze(-1) * logits.unsqueeze(-2)
    wrong = [
        (-expected, "sign"),
        (torch.diag_embed(p), "only_diag"),
        (-outer, "only_outer"),
        (torch.diag_embed(logits) - z_outer, "logits"),
        (torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-1).transpose(-2, -1).sum(-1, keepdim=True),
         "not_outer"),
        (torch.diag_embed(p * (1 - p)), "only_diagonal_entries"),
    ]
    for candidate, mistake in wrong:
        if candidate.shape == result.shape and torch.allclose(result, candidate, atol=1e-6):
            return CheckResult.of(False, f"ch03.jacobian.{mistake}", language)
    return CheckResult.of(False, "ch03.jacobian.differs", language,
                          max_error=float((result - expected).abs().max()))


# --------------------------------------------------------------------------------------------
# Exercise 2: design the measurement of the spread the softmax sees
# --------------------------------------------------------------------------------------------

_ROW_SOURCES = (dot_variance.within_row_variance, dot_variance.theoretical_row_variance,
                dot_variance.theoretical_dot_variance, dot_variance.dot_product_variance)


@checker
def check_row_spread(fn: Callable[[int, int], float], *, language: str | None = None) -> CheckResult:
    """Check the reader's experiment ``fn(d_k, seed) -> variance`` of the scores *within a softmax row*.

    Queries and keys have independent ``N(1, 1)`` entries. The softmax of a row sees one query
    against its keys, so the spread that matters is ``Var_k(q . k | q) = |q|^2``, whose mean is
    ``2 d_k``; the variance across independent pairs is ``3 d_k``, the extra ``d_k`` being the
    row's common shift ``q . E[k]``, which the softmax ignores. The answer must be a measurement
    (two seeds give two different numbers, both within 12% of ``2 d_k``), and it may not call the
    package's variance functions (:mod:`helpers.experiments.dot_variance`).

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (the variance across pairs, zero-mean entries, an
        uncentred second moment, a standard deviation, a formula instead of a measurement).
    """
    values = {}
    for d_k, seed in ((32, 0), (32, 1), (128, 0)):
        result = call_without_package(fn, d_k, seed, disabled=_ROW_SOURCES, language=language)
        value = _as_number(result, phrase("ch03.what.row_variance", d_k=d_k, seed=seed), language)
        values[(d_k, seed)] = value
    for (d_k, seed), value in values.items():
        right = 2.0 * d_k
        if _near(value, right, 0.12):
            continue
        wrong = [
            (3.0 * d_k, "across_pairs"),
            (float(d_k), "zero_mean"),
            (d_k**2 + 3.0 * d_k, "second_moment"),
            (math.sqrt(2.0 * d_k), "std"),
            (math.sqrt(3.0 * d_k), "std_across"),
        ]
        for candidate, mistake in wrong:
            if _near(value, candidate, 0.12):
                return CheckResult.of(False, f"ch03.row.{mistake}", language, d_k=d_k, value=value)
        return CheckResult.of(False, "ch03.row.off", language, d_k=d_k, seed=seed, value=value, right=right)
    if values[(32, 0)] == values[(32, 1)]:
        return CheckResult.of(False, "ch03.row.formula", language)
    return CheckResult.of(True, "ch03.row.passed", language, measured=values[(128, 0)])


# --------------------------------------------------------------------------------------------
# Exercise 4: predict the usable learning rates, then read them off the runs
# --------------------------------------------------------------------------------------------


def _fake_run(final: float) -> RecallRun:
    return RecallRun("x", recall_config(4), 0, TrainingHistory(accuracy=[final] * 50), 0)


def _probe_sweep() -> LearningRateSweep:
    """A made-up sweep where the mean over seeds and the worst seed disagree at one learning rate."""
    finals = {"scaled": [(0.95, 0.97, 0.99), (0.99, 0.85, 0.99), (0.5, 0.6, 0.4)],
              "no scale": [(0.91, 0.93, 0.92), (0.2, 0.3, 0.1), (0.1, 0.1, 0.1)]}
    return LearningRateSweep(4, [1e-4, 1e-3, 1e-2],
                             {label: [[_fake_run(a) for a in per_lr] for per_lr in runs]
                              for label, runs in finals.items()},
                             0.9)


@checker
def check_lr_prediction(fn: Callable[[LearningRateSweep, str], list[float]], sweep: LearningRateSweep,
                        prediction: Any, *, language: str | None = None) -> CheckResult:
    """Check ``fn(sweep, label) -> usable learning rates``, and compare the reader's prediction with the runs.

    A learning rate is usable when *every* seed's final accuracy reaches ``sweep.threshold``
    (one seed in three failing is a learning rate nobody can rely on). The function is tried on a
    made-up sweep where the mean over seeds and the worst seed disagree, then on the lab's
    ``sweep``; :meth:`~helpers.experiments.scale_training.LearningRateSweep.usable` is switched off meanwhile.
    ``prediction``, written before the runs, is ``{"scaled": n, "no scale": m}``: how many of ``sweep.lrs`` each head
    can use. A wrong prediction does not fail the exercise; the verdict says how far off it was.

    Args:
        fn: The reader's function.
        sweep: The lab's :class:`~helpers.experiments.scale_training.LearningRateSweep`.
        prediction: The reader's prediction.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names a missing prediction, the mean over seeds, a threshold on steps to target...
    """
    count = len(sweep.lrs)
    if (not isinstance(prediction, dict) or set(prediction) != {"scaled", "no scale"}
            or any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= count for v in prediction.values())):
        return CheckResult.of(False, "ch03.lr.no_prediction", language, count=count, prediction=repr(prediction))
    disabled = (LearningRateSweep.usable, LearningRateSweep.usable_decades)
    for probe, name in ((_probe_sweep(), phrase("ch03.lr.made_up_sweep")), (sweep, phrase("ch03.lr.labs_sweep"))):
        for label in ("scaled", "no scale"):
            result = call_without_package(fn, probe, label, disabled=disabled, language=language)
            if not isinstance(result, (list, tuple)) or not all(isinstance(v, (int, float)) for v in result):
                return CheckResult.of(False, "ch03.lr.not_a_list", language, result=repr(result))
            right = probe.usable(label)
            if sorted(float(v) for v in result) == right:
                continue
            mean_based = [lr for lr, a in zip(probe.lrs, probe.final_accuracy(label)) if a >= probe.threshold]
            if sorted(float(v) for v in result) == mean_based:
                return CheckResult.of(False, "ch03.lr.mean_over_seeds", language, name=name, label=repr(label))
            return CheckResult.of(False, "ch03.lr.wrong", language, name=name, label=repr(label), right=str(right),
                                  returned=str(list(result)))
    measured = {label: len(sweep.usable(label)) for label in ("scaled", "no scale")}
    key = "ch03.lr.passed_predicted" if measured == prediction else "ch03.lr.passed_surprised"
    return CheckResult.of(True, key, language, scaled=str(sweep.usable("scaled")),
                          unscaled=str(sweep.usable("no scale")), lrs=str(sweep.lrs),
                          predicted_scaled=prediction["scaled"], predicted_unscaled=prediction["no scale"],
                          measured_scaled=measured["scaled"], measured_unscaled=measured["no scale"])
