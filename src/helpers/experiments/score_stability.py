"""Chapter 2: dot-product and cosine scores of small vectors, as at initialisation.

:func:`stability_at_init` measures the spread of the scores, the size of their gradient and
their response to a fixed small nudge, against the vectors' length. Figure:
:mod:`helpers.figures.score_stability`.

Shape legend::

    N   random (q, k) pairs      E   feature size

Explained in chapter 2 (``book/02-dot-product``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..attention import cosine_scores, dot_scores

__all__ = ["StabilityResult", "stability_at_init"]


@dataclass
class StabilityResult:
    """Scores and gradients of random vectors of a given length, per score function.

    All statistics are over ``num_pairs`` independent random (q, k) pairs whose entries are
    drawn with standard deviation ``norm / sqrt(E)`` (so ``|q|`` and ``|k|`` are close to
    ``norm``).

    Attributes:
        norms: The vector lengths.
        dim: Feature size E.
        noise: Size of the fixed perturbation used for ``sensitivity``.
        score_std: Name -> standard deviation of the scores at each norm.
        grad_norm: Name -> mean of ``|d score / d q|`` at each norm.
        sensitivity: Name -> mean ``|score(q + delta, k) - score(q, k)|`` for a random ``delta`` of
            length ``noise``, at each norm.
    """

    norms: list[float]
    dim: int
    noise: float
    score_std: dict[str, list[float]]
    grad_norm: dict[str, list[float]]
    sensitivity: dict[str, list[float]]


def stability_at_init(
    norms: tuple[float, ...] = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0, 3.0),
    *,
    dim: int = 16,
    num_pairs: int = 2000,
    noise: float = 1e-3,
    seed: int = 0,
) -> StabilityResult:
    """How dot-product and cosine scores behave when the vectors are small, as at initialisation.

    For each length ``r``: draw pairs ``(q, k)`` with ``|q|, |k| ~ r``; measure the spread of the
    scores, the size of the gradient ``d score / d q`` (by autograd through
    :func:`helpers.attention.dot_scores` and :func:`helpers.attention.cosine_scores`), and how
    far a score moves when ``q`` is nudged by a random vector of fixed length ``noise``.
    Theory: ``d(q.k)/dq = k`` has length ``|k| ~ r``; ``d cos/dq = (k_hat - cos q_hat) / |q|`` has
    length ``sin(angle) / |q| ~ 1/r``. The cosine normalises by the small norm and so divides
    the noise by it.

    Args:
        norms: The vector lengths ``r``.
        dim: Feature size E.
        num_pairs: Number of random pairs per length.
        noise: Length of the perturbation of ``q`` for the sensitivity measurement.
        seed: Seed.

    Returns:
        The measured :class:`StabilityResult`.
    """
    gen = torch.Generator().manual_seed(seed)
    functions = {"dot": dot_scores, "cosine": cosine_scores}
    score_std: dict[str, list[float]] = {n: [] for n in functions}
    grad_norm: dict[str, list[float]] = {n: [] for n in functions}
    sensitivity: dict[str, list[float]] = {n: [] for n in functions}
    for r in norms:
        q = torch.randn(num_pairs, 1, dim, generator=gen, dtype=torch.float64) * (r / math.sqrt(dim))  # (N, 1, E)
        k = torch.randn(num_pairs, 1, dim, generator=gen, dtype=torch.float64) * (r / math.sqrt(dim))  # (N, 1, E)
        delta = torch.randn(num_pairs, 1, dim, generator=gen, dtype=torch.float64)
        delta = delta / delta.norm(dim=-1, keepdim=True) * noise  # (N, 1, E), each of length `noise`
        for name, fn in functions.items():
            q_leaf = q.clone().requires_grad_(True)
            scores = fn(q_leaf, k)  # (N, 1, 1): one score per pair
            (grad,) = torch.autograd.grad(scores.sum(), q_leaf)  # (N, 1, E): d score_n / d q_n
            with torch.no_grad():
                moved = fn(q + delta, k)  # (N, 1, 1)
            score_std[name].append(float(scores.detach().std()))
            grad_norm[name].append(float(grad.norm(dim=-1).mean()))
            sensitivity[name].append(float((moved - scores.detach()).abs().mean()))
    return StabilityResult(list(norms), dim, noise, score_std, grad_norm, sensitivity)

