"""Chapter 2: how each score function behaves when the vectors are small, as a caveat at initialisation.

:func:`stability_at_init` measures, against the vectors' length, the spread of the scores and
the size of their gradient with respect to the query, for every score function of
:mod:`helpers.attention` (general and additive with fixed random parameters, drawn as the recall
model of :mod:`helpers.experiments.recall` draws them). Figure:
:mod:`helpers.figures.score_stability`.

Shape legend::

    N   random (q, k) pairs      E   feature size      A   hidden size of additive scoring

Explained in chapter 2 (``book/02-dot-product``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from .. import seeding
from ..scores import additive_scores, cosine_scores, dot_scores, general_scores, neg_euclidean_scores

__all__ = ["STABILITY_SCORES", "StabilityResult", "stability_at_init"]

STABILITY_SCORES: tuple[str, ...] = ("dot", "cosine", "neg_euclidean", "general", "additive")
"""The score functions :func:`stability_at_init` measures."""


@dataclass
class StabilityResult:
    """Scores and gradients of random vectors of a given length, per score function.

    All statistics are over ``num_pairs`` independent random (q, k) pairs whose entries are
    drawn with standard deviation ``norm / sqrt(E)`` (so ``|q|`` and ``|k|`` are close to
    ``norm``).

    Attributes:
        norms: The vector lengths.
        dim: Feature size E.
        score_std: Name -> standard deviation of the scores at each norm.
        grad_norm: Name -> mean of ``|d score / d q|`` at each norm.
    """

    norms: list[float]
    dim: int
    score_std: dict[str, list[float]]
    grad_norm: dict[str, list[float]]


def _score_functions(dim: int, hidden_dim: int, gen: torch.Generator) -> dict[str, Callable[[Tensor, Tensor], Tensor]]:
    """The score functions, with general and additive parameters drawn as in ``RecallAttention``."""
    double = dict(generator=gen, dtype=torch.float64)
    weight = torch.eye(dim, dtype=torch.float64) + torch.randn(dim, dim, **double) / dim  # (E, E)
    w_q = torch.randn(hidden_dim, dim, **double) / math.sqrt(dim)  # (A, E)
    w_k = torch.randn(hidden_dim, dim, **double) / math.sqrt(dim)  # (A, E)
    v = torch.randn(hidden_dim, **double) / math.sqrt(hidden_dim)  # (A,)
    return {
        "dot": dot_scores,
        "cosine": cosine_scores,
        "neg_euclidean": neg_euclidean_scores,
        "general": lambda q, k: general_scores(q, k, weight),
        "additive": lambda q, k: additive_scores(q, k, w_q, w_k, v),
    }


def stability_at_init(
    norms: tuple[float, ...] = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0, 3.0),
    *,
    dim: int = 16,
    num_pairs: int = 2000,
    hidden_dim: int = 16,
    scores: tuple[str, ...] = STABILITY_SCORES,
    seed: int = 0,
) -> StabilityResult:
    """How the score functions behave when the vectors are small.

    For each length ``r``: draw pairs ``(q, k)`` with ``|q|, |k| ~ r``; measure the spread of the
    scores and the size of the gradient ``d score / d q`` (by autograd through the functions of
    :mod:`helpers.attention`). Theory: ``d(q.k)/dq = k`` has length ``|k| ~ r``;
    ``d cos/dq = (k_hat - cos q_hat) / |q|`` has length ``sin(angle) / |q| ~ 1/r``: the cosine
    divides by the norm, so its gradient grows as the vectors shrink, and its scores keep the
    spread ``1/sqrt(E)`` of random directions at every length. The others' gradients stay
    bounded (``-|q-k|^2``: ``2(k - q)``; additive: ``W_q^T (v * tanh')``, about constant).

    Args:
        norms: The vector lengths ``r``.
        dim: Feature size E.
        num_pairs: Number of random pairs per length.
        hidden_dim: Hidden size A of additive scoring.
        scores: Which of :data:`STABILITY_SCORES` to measure.
        seed: Seed.

    Returns:
        The measured :class:`StabilityResult`.
    """
    unknown = set(scores) - set(STABILITY_SCORES)
    if unknown:
        raise ValueError(f"scores must be among {STABILITY_SCORES}, got {sorted(unknown)}")
    gen = seeding.generator(seed)
    functions = {name: fn for name, fn in _score_functions(dim, hidden_dim, gen).items() if name in scores}
    score_std: dict[str, list[float]] = {n: [] for n in functions}
    grad_norm: dict[str, list[float]] = {n: [] for n in functions}
    for r in norms:
        q = torch.randn(num_pairs, 1, dim, generator=gen, dtype=torch.float64) * (r / math.sqrt(dim))  # (N, 1, E)
        k = torch.randn(num_pairs, 1, dim, generator=gen, dtype=torch.float64) * (r / math.sqrt(dim))  # (N, 1, E)
        for name, fn in functions.items():
            q_leaf = q.clone().requires_grad_(True)
            values = fn(q_leaf, k)  # (N, 1, 1): one score per pair
            (grad,) = torch.autograd.grad(values.sum(), q_leaf)  # (N, 1, E): d score_n / d q_n
            score_std[name].append(float(values.detach().std()))
            grad_norm[name].append(float(grad.norm(dim=-1).mean()))
    return StabilityResult(list(norms), dim, score_std, grad_norm)
