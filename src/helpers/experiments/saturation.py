"""Chapter 3: without the scale, softmax rows turn one-hot as ``d_k`` grows, and their Jacobian vanishes.

- :func:`saturation_sweep`, :func:`softmax_row_frames`: largest weight, entropy and fraction of
  saturated rows of ``softmax(q . k)`` against ``d_k``, with and without ``1/sqrt(d_k)``; one
  row drawn at growing ``d_k``.
- :func:`jacobian_norm_sweep`: the softmax Jacobian ``diag(p) - p p^T`` against the logits' spread.

Figures: :mod:`helpers.figures.saturation`.

Shape legend::

    N   softmax rows       S   keys in a row
    E   vector size d_k    F   frames (one per d_k)

Seeded and deterministic. Explained in chapter 3 (``book/03-scaling``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from .. import seeding
from ..checks import check_positive_ints
from ..diagnostics import saturation_stats, softmax_jacobian_norm

__all__ = ["SaturationSweep", "saturation_sweep", "softmax_row_frames", "jacobian_norm_sweep"]


@dataclass
class SaturationSweep:
    """Saturation of ``softmax(q . k * scale)`` rows against ``d_k`` (see :func:`saturation_sweep`).

    Attributes:
        d_k: The sizes measured.
        num_keys: Keys per softmax row, S.
        scaled: Whether the scores were divided by ``sqrt(d_k)``.
        max_weight: Mean largest weight of a row.
        entropy: Mean entropy of a row, in nats (``log S`` is uniform, 0 one-hot).
        saturated_fraction: Fraction of rows whose largest weight exceeds ``threshold``.
        jacobian_norm: Mean Frobenius norm of the rows' softmax Jacobians.
        threshold: The threshold of ``saturated_fraction``.
    """

    d_k: list[int]
    num_keys: int
    scaled: bool
    max_weight: list[float] = field(default_factory=list)
    entropy: list[float] = field(default_factory=list)
    saturated_fraction: list[float] = field(default_factory=list)
    jacobian_norm: list[float] = field(default_factory=list)
    threshold: float = 0.99


def _gaussian_scores(d_k: int, num_rows: int, num_keys: int, scaled: bool, gen: torch.Generator) -> Tensor:
    """Scores of ``num_rows`` Gaussian queries against ``num_keys`` Gaussian keys each."""
    query = torch.randn(num_rows, 1, d_k, generator=gen)  # (N, 1, E)
    key = torch.randn(num_rows, num_keys, d_k, generator=gen)  # (N, S, E)
    scale = 1 / math.sqrt(d_k) if scaled else 1.0
    return (query @ key.transpose(-2, -1)).squeeze(-2) * scale  # (N, 1, E) x (N, E, S) -> (N, S)


def saturation_sweep(
    d_ks: Sequence[int] = (1, 4, 16, 64, 256, 1024),
    *,
    scaled: bool,
    num_keys: int = 16,
    num_rows: int = 2000,
    threshold: float = 0.99,
    seed: int = 0,
) -> SaturationSweep:
    """How one-hot softmax rows get as ``d_k`` grows, with and without the ``1/sqrt(d_k)`` scale.

    Each row is one query against ``num_keys`` keys, all with independent N(0, 1) entries, so the
    unscaled scores have standard deviation ``sqrt(d_k)``. Summarised by
    :func:`helpers.diagnostics.saturation_stats`. Explained in chapter 3.

    Args:
        d_ks: The sizes to measure.
        scaled: Divide the scores by ``sqrt(d_k)``.
        num_keys: Keys per row, S.
        num_rows: Rows per size.
        threshold: A row is saturated when its largest weight exceeds this.
        seed: Seed of the sampler.

    Returns:
        A :class:`SaturationSweep`.
    """
    gen = seeding.generator(seed)
    sweep = SaturationSweep(list(d_ks), num_keys, scaled, threshold=threshold)
    for d_k in d_ks:
        stats = saturation_stats(_gaussian_scores(d_k, num_rows, num_keys, scaled, gen), threshold=threshold)
        sweep.max_weight.append(stats.max_weight)
        sweep.entropy.append(stats.entropy)
        sweep.saturated_fraction.append(stats.saturated_fraction)
        sweep.jacobian_norm.append(stats.jacobian_norm)
    return sweep


def softmax_row_frames(
    d_ks: Sequence[int] = (1, 4, 16, 64, 256, 1024), *, num_keys: int = 8, seed: int = 0
) -> dict[str, Tensor]:
    """One query's scores against ``num_keys`` keys, and their softmax, for each ``d_k``.

    The vectors are nested: one query and ``num_keys`` keys of size ``max(d_ks)`` are drawn
    once, and the frame for ``d_k`` uses their first ``d_k`` coordinates. So the frames show
    the same row growing, a real dot product at every size, rather than a fresh draw each time.
    Explained in chapter 3 (the slider over ``d_k``).

    Args:
        d_ks: The sizes, increasing.
        num_keys: Keys in the row, S.
        seed: Seed of the sampler.

    Returns:
        ``{"d_k", "scores", "weights", "scaled_scores", "scaled_weights"}``; ``d_k`` is an int
        tensor, the others float32.

    Shape:
        ``d_k``: ``(F,)``; the others ``(F, S)``, one row per size.
    """
    sizes = check_positive_ints("d_ks", d_ks)
    if sorted(sizes) != sizes:
        raise ValueError(f"d_ks must be increasing, got {sizes}")
    gen = seeding.generator(seed)
    query = torch.randn(sizes[-1], generator=gen)  # (E_max,)
    keys = torch.randn(num_keys, sizes[-1], generator=gen)  # (S, E_max)
    scores = torch.stack([keys[:, :d] @ query[:d] for d in sizes])  # (F, S)
    roots = torch.tensor([math.sqrt(d) for d in sizes])[:, None]  # (F, 1)
    return {
        "d_k": torch.tensor(sizes),
        "scores": scores,
        "weights": torch.softmax(scores, dim=-1),
        "scaled_scores": scores / roots,
        "scaled_weights": torch.softmax(scores / roots, dim=-1),
    }



def jacobian_norm_sweep(
    logit_stds: Sequence[float], *, num_keys: int = 16, num_rows: int = 2000, seed: int = 0
) -> dict[str, list[float]]:
    """Mean norms of the softmax Jacobian ``diag(p) - p p^T`` against the spread of the logits.

    Rows of ``num_keys`` logits ``sigma * z`` with ``z ~ N(0, 1)``: ``sigma = 1`` is a scaled
    dot product, ``sigma = sqrt(d_k)`` an unscaled one. At ``sigma = 0`` the softmax is uniform
    and the Frobenius norm is ``sqrt(S - 1) / S``; as ``sigma`` grows it tends to 0. Explained in
    chapter 3.

    Args:
        logit_stds: The standard deviations ``sigma`` to measure.
        num_keys: Logits per row, S.
        num_rows: Rows per value.
        seed: Seed of the sampler (the same ``z`` for every ``sigma``).

    Returns:
        ``{"logit_std", "frobenius", "median_frobenius", "spectral", "max_weight"}``, one list entry per
        ``sigma``: the mean over rows, except ``median_frobenius``, the median row's Frobenius norm (at a large
        spread the mean is held up by the few rows near a tie, while the typical row passes almost nothing).
    """
    gen = seeding.generator(seed)
    base = torch.randn(num_rows, num_keys, generator=gen)  # (N, S)
    out: dict[str, list[float]] = {"logit_std": [], "frobenius": [], "median_frobenius": [], "spectral": [],
                                   "max_weight": []}
    for sigma in logit_stds:
        logits = base * float(sigma)  # (N, S)
        out["logit_std"].append(float(sigma))
        frobenius = softmax_jacobian_norm(logits)  # (N,)
        out["frobenius"].append(frobenius.mean().item())
        out["median_frobenius"].append(frobenius.median().item())
        out["spectral"].append(softmax_jacobian_norm(logits, ord="spectral").mean().item())
        out["max_weight"].append(torch.softmax(logits, dim=-1).amax(-1).mean().item())
    return out

