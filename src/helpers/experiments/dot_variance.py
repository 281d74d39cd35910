"""Chapter 3: ``Var(q . k) = d_k``, measured for several input distributions against closed forms.

:func:`dot_product_variance` measures the variance of ``q . k`` and of ``q . k / sqrt(d_k)``
for Gaussian, non-Gaussian, correlated, LayerNorm-ed and projected inputs
(:data:`DISTRIBUTIONS`), each against its closed form (:func:`theoretical_dot_variance`).
:func:`within_row_variance` measures what the softmax sees instead: the spread of one query's
scores over its keys (:func:`theoretical_row_variance`); :func:`aligned_dot_stats` the mean and
spread of ``q . k`` when the key is aligned with the query. Figures: :mod:`helpers.figures.dot_variance`.

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

from .. import seeding
from ..checks import check_int, check_positive_int

__all__ = ["DISTRIBUTIONS", "sample_entries", "theoretical_dot_variance", "VarianceSweep", "dot_product_variance",
           "theoretical_row_variance", "RowVariance", "within_row_variance", "aligned_dot_stats"]

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
    gen = seeding.generator(seed)
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



def theoretical_row_variance(distribution: str, d_k: int) -> float:
    """Closed form of the variance of ``q . k`` over the keys of one row (``q`` fixed), averaged over ``q``.

    The softmax of a row sees one query against its keys, so the spread that matters is
    ``Var_k(q . k | q) = q^T Cov(k) q``, whose mean over queries is ``E[q^T Cov(k) q]``. By the
    law of total variance it is :func:`theoretical_dot_variance` minus ``Var_q(q . E[k])``, the
    variance of the row's common shift, which the softmax ignores. For zero-mean keys the shift
    is 0 and the two agree; for ``"shifted"`` (mean 1, variance 1) it is
    ``E|q|^2 = d_k (1 + 1) = 2 d_k``, not ``3 d_k``. Explained in chapter 3.

    Args:
        distribution: A key of :data:`DISTRIBUTIONS`.
        d_k: The vectors' size.

    Returns:
        The mean within-row variance.
    """
    if distribution == "shifted":
        return 2.0 * d_k
    return theoretical_dot_variance(distribution, d_k)


@dataclass
class RowVariance:
    """Within-row against across-pair variance of ``q . k`` (see :func:`within_row_variance`).

    Attributes:
        distribution: The key of :data:`DISTRIBUTIONS`.
        d_k: The sizes measured.
        within_row: Mean over queries of the variance of ``q . k`` over that query's keys.
        across_pairs: Variance of ``q . k`` over all (query, key) pairs of the sample.
        theory_row: :func:`theoretical_row_variance` at each size.
        theory_pairs: :func:`theoretical_dot_variance` at each size.
    """

    distribution: str
    d_k: list[int]
    within_row: list[float]
    across_pairs: list[float]
    theory_row: list[float]
    theory_pairs: list[float]


def within_row_variance(
    d_ks: Sequence[int] = (16, 64, 256, 1024),
    *,
    distribution: str = "shifted",
    num_queries: int = 256,
    num_keys: int = 32,
    seed: int = 0,
) -> RowVariance:
    """The spread of scores the softmax sees: variance of ``q . k`` over one query's keys.

    For each size, ``num_queries`` queries each meet ``num_keys`` keys of their own. The variance
    over a row's keys (unbiased) is averaged over the rows; the variance over all pairs is the
    quantity of :func:`dot_product_variance`. The two differ by the variance of the row's mean,
    ``q . E[k]``, a shift that adds the same number to every score of a row and that the softmax
    ignores. Explained in chapter 3 ("A mean shifts the slope").

    Args:
        d_ks: The sizes to measure.
        distribution: A key of :data:`DISTRIBUTIONS`.
        num_queries: Rows per size.
        num_keys: Keys per row.
        seed: Seed of the sampler.

    Returns:
        A :class:`RowVariance`.
    """
    check_int("num_queries", num_queries, 1)
    check_int("num_keys", num_keys, 2)
    gen = seeding.generator(seed)
    sizes = [d for d in d_ks if not (distribution == "layernorm" and d < 2)]
    within, across = [], []
    for d_k in sizes:
        q = sample_entries(distribution, num_queries, d_k, generator=gen).double()  # (N, E)
        k = sample_entries(distribution, num_queries * num_keys, d_k, generator=gen).double()  # (N * S, E)
        scores = (k.view(num_queries, num_keys, d_k) @ q.unsqueeze(-1)).squeeze(-1)  # (N, S, E) x (N, E, 1) -> (N, S)
        within.append(scores.var(dim=-1).mean().item())
        across.append(scores.flatten().var().item())
    return RowVariance(distribution, list(sizes), within, across,
                       [theoretical_row_variance(distribution, d) for d in sizes],
                       [theoretical_dot_variance(distribution, d) for d in sizes])


def aligned_dot_stats(
    d_ks: Sequence[int] = (16, 64, 256, 1024), *, alignment: float = 0.1, num_samples: int = 4096, seed: int = 0
) -> dict[str, list[float]]:
    """Mean and standard deviation of ``q . k`` when the key is aligned with the query.

    ``q ~ N(0, I)`` and ``k = a q + sqrt(1 - a^2) n`` with ``n ~ N(0, I)``: every feature of ``k``
    has correlation ``a`` with the same feature of ``q`` (the features of one vector stay
    independent). Then ``E[q . k] = a d_k`` grows like ``d_k`` while the spread grows like
    ``sqrt(d_k)`` (``Var = d_k (1 + a^2)``): the alignment μP's ``1/d_k`` scale is about.
    Explained in chapter 3.

    Args:
        d_ks: The sizes to measure.
        alignment: The correlation ``a`` between ``q_i`` and ``k_i``, in ``[-1, 1]``.
        num_samples: Pairs per size.
        seed: Seed of the sampler.

    Returns:
        ``{"d_k", "mean", "std", "theory_mean", "theory_std"}``, one entry per size.
    """
    if not -1.0 <= alignment <= 1.0:
        raise ValueError(f"alignment must be in [-1, 1], got {alignment!r}")
    check_int("num_samples", num_samples, 2)
    gen = seeding.generator(seed)
    out: dict[str, list[float]] = {"d_k": [], "mean": [], "std": [], "theory_mean": [], "theory_std": []}
    for d_k in d_ks:
        q = torch.randn(num_samples, d_k, generator=gen, dtype=torch.float64)  # (N, E)
        k = alignment * q + math.sqrt(1 - alignment**2) * torch.randn(num_samples, d_k, generator=gen,
                                                                       dtype=torch.float64)  # (N, E)
        dots = (q * k).sum(-1)  # (N,)
        out["d_k"].append(d_k)
        out["mean"].append(dots.mean().item())
        out["std"].append(dots.std().item())
        out["theory_mean"].append(alignment * d_k)
        out["theory_std"].append(math.sqrt(d_k * (1 + alignment**2)))
    return out
