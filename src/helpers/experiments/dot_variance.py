"""Chapter 3: ``Var(q . k) = d_k``, measured for several input distributions against closed forms.

:func:`dot_product_variance` measures the variance of ``q . k`` and of ``q . k / sqrt(d_k)``
for Gaussian, non-Gaussian, correlated, LayerNorm-ed and projected inputs
(:data:`DISTRIBUTIONS`), each against its closed form (:func:`theoretical_dot_variance`).
Figures: :mod:`helpers.figures.dot_variance`.

Shape legend::

    N   number of samples (pairs)
    E   vector size d_k

Seeded and deterministic. Explained in chapter 3 (``book/03-scaling``, first section).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ..checks import check_int, check_positive_int

__all__ = ["DISTRIBUTIONS", "sample_entries", "theoretical_dot_variance", "VarianceSweep", "dot_product_variance"]

#: Input distributions of :func:`dot_product_variance`, with what each one tests.
DISTRIBUTIONS: dict[str, str] = {
    "gaussian": "independent N(0, 1) entries: the textbook assumption",
    "uniform": "independent uniform entries on [-sqrt(3), sqrt(3)] (mean 0, variance 1)",
    "rademacher": "independent +-1 entries (mean 0, variance 1)",
    "laplace": "independent Laplace entries, rescaled to variance 1 (heavy tails, kurtosis 6)",
    "shifted": "independent N(1, 1) entries: mean 1, so E[q_i k_i]^2 no longer vanishes",
    "correlated": "N(0, 1) entries with correlation 0.1 between every two features of a vector",
    "layernorm": "LayerNorm (no affine) of raw features N(3, 5^2): mean 0, variance 1 per vector",
    "projected": "LayerNorm-ed 64-dim inputs through nn.Linear(64, d_k) at PyTorch's default init",
}

_CORRELATION = 0.1
_PROJECTED_INPUT_DIM = 64


def sample_entries(distribution: str, num_samples: int, d_k: int, *, generator: torch.Generator) -> Tensor:
    """Draw ``num_samples`` vectors of size ``d_k`` from one of :data:`DISTRIBUTIONS`.

    ``"projected"`` draws a fresh ``nn.Linear(64, d_k)`` weight (PyTorch's default init,
    uniform on ``+-1/sqrt(64)``, variance ``1 / (3 * 64)``) for each call, so a call gives
    queries (or keys) of one layer. Explained in chapter 3.

    Args:
        distribution: A key of :data:`DISTRIBUTIONS`.
        num_samples: Number of vectors N.
        d_k: Their size.
        generator: The random generator to draw from.

    Returns:
        Float32 samples.

    Shape:
        ``(N, d_k)``.
    """
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {sorted(DISTRIBUTIONS)}, got {distribution!r}")
    check_positive_int("num_samples", num_samples)
    check_int("d_k", d_k, 2 if distribution == "layernorm" else 1)  # LayerNorm of one feature is 0
    shape = (num_samples, d_k)
    if distribution == "gaussian":
        return torch.randn(shape, generator=generator)
    if distribution == "uniform":
        return (torch.rand(shape, generator=generator) * 2 - 1) * math.sqrt(3.0)
    if distribution == "rademacher":
        return torch.randint(0, 2, shape, generator=generator).float() * 2 - 1
    if distribution == "laplace":
        magnitude = -torch.log1p(-torch.rand(shape, generator=generator))  # Exp(1), variance 1
        sign = torch.randint(0, 2, shape, generator=generator).float() * 2 - 1
        return sign * magnitude / math.sqrt(2.0)  # Laplace(0, 1) has variance 2
    if distribution == "shifted":
        return torch.randn(shape, generator=generator) + 1.0
    if distribution == "correlated":
        shared = torch.randn(num_samples, 1, generator=generator)  # (N, 1): one factor per vector
        own = torch.randn(shape, generator=generator)  # (N, d_k)
        return math.sqrt(_CORRELATION) * shared + math.sqrt(1 - _CORRELATION) * own
    if distribution == "layernorm":
        raw = 3.0 + 5.0 * torch.randn(shape, generator=generator)
        return nn.functional.layer_norm(raw, (d_k,))
    raw = torch.randn(num_samples, _PROJECTED_INPUT_DIM, generator=generator)
    normed = nn.functional.layer_norm(raw, (_PROJECTED_INPUT_DIM,))  # (N, 64)
    bound = 1 / math.sqrt(_PROJECTED_INPUT_DIM)  # nn.Linear's default: U(-1/sqrt(in), 1/sqrt(in))
    weight = (torch.rand(d_k, _PROJECTED_INPUT_DIM, generator=generator) * 2 - 1) * bound  # (d_k, 64)
    return normed @ weight.T  # (N, 64) x (64, d_k) -> (N, d_k)


def theoretical_dot_variance(distribution: str, d_k: int) -> float:
    """Closed form of ``Var(q . k)`` for independent ``q``, ``k`` drawn from ``distribution``.

    - independent entries of mean ``m`` and variance ``s^2``: ``d_k (s^4 + 2 m^2 s^2)``, which is
      ``d_k`` for mean 0 and variance 1, and ``3 d_k`` for ``"shifted"``;
    - ``"correlated"`` (covariance ``C = (1 - r) I + r 1 1^T``): ``tr(C^2) = d_k (1 - r^2) + r^2 d_k^2``,
      quadratic in ``d_k``;
    - ``"layernorm"``: a LayerNorm-ed vector lies on the sphere of radius ``sqrt(d_k)`` orthogonal
      to ``1``, so ``E[k k^T] = d_k / (d_k - 1) P`` and ``Var = d_k^2 / (d_k - 1)``;
    - ``"projected"``: each query/key entry has variance ``64 * 1 / (3 * 64) = 1/3``, so
      ``Var = d_k / 9`` (in expectation over the weights).

    Explained in chapter 3.

    Args:
        distribution: A key of :data:`DISTRIBUTIONS`.
        d_k: The vectors' size.

    Returns:
        The variance.
    """
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {sorted(DISTRIBUTIONS)}, got {distribution!r}")
    if distribution in ("gaussian", "uniform", "rademacher", "laplace"):
        return float(d_k)
    if distribution == "shifted":
        return 3.0 * d_k
    if distribution == "correlated":
        r = _CORRELATION
        return d_k * (1 - r**2) + r**2 * d_k**2
    if distribution == "layernorm":
        return d_k**2 / (d_k - 1)
    return d_k / 9.0


@dataclass
class VarianceSweep:
    """Measured ``Var(q . k)`` against ``d_k`` for one input distribution.

    Attributes:
        distribution: The key of :data:`DISTRIBUTIONS`.
        d_k: The sizes measured.
        measured: Sample variance of ``q . k`` at each size.
        scaled: Sample variance of ``q . k / sqrt(d_k)``.
        theory: :func:`theoretical_dot_variance` at each size.
    """

    distribution: str
    d_k: list[int]
    measured: list[float]
    scaled: list[float]
    theory: list[float]

    @property
    def ratio(self) -> list[float]:
        """``measured / theory`` at each size (1 when the closed form holds)."""
        return [m / t for m, t in zip(self.measured, self.theory)]


def dot_product_variance(
    d_ks: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
    *,
    distribution: str = "gaussian",
    num_samples: int = 4096,
    seed: int = 0,
) -> VarianceSweep:
    """Measure ``Var(q . k)`` and ``Var(q . k / sqrt(d_k))`` for independent pairs ``(q, k)``.

    ``q . k = sum_i q_i k_i`` is a sum of ``d_k`` independent products, each of variance
    ``E[q_i^2] E[k_i^2] - E[q_i]^2 E[k_i]^2 = 1`` for mean-0, variance-1 entries, so the
    variance of the sum is ``d_k`` and dividing by ``sqrt(d_k)`` brings it back to 1 (Vaswani
    et al., 2017, footnote 4). Explained in chapter 3.

    Args:
        d_ks: The sizes to measure.
        distribution: A key of :data:`DISTRIBUTIONS` (``"layernorm"`` skips ``d_k = 1``, where
            LayerNorm returns zeros).
        num_samples: Number of pairs per size.
        seed: Seed of the sampler.

    Returns:
        A :class:`VarianceSweep`.
    """
    check_int("num_samples", num_samples, 2)
    gen = torch.Generator().manual_seed(seed)
    sizes = [d for d in d_ks if not (distribution == "layernorm" and d < 2)]
    measured, scaled, theory = [], [], []
    for d_k in sizes:
        q = sample_entries(distribution, num_samples, d_k, generator=gen)  # (N, E)
        k = sample_entries(distribution, num_samples, d_k, generator=gen)  # (N, E)
        dots = (q.double() * k.double()).sum(-1)  # (N,)
        measured.append(dots.var().item())
        scaled.append((dots / math.sqrt(d_k)).var().item())
        theory.append(theoretical_dot_variance(distribution, d_k))
    return VarianceSweep(distribution, list(sizes), measured, scaled, theory)

