"""Chapter 3's experiments: why attention divides ``q . k`` by ``sqrt(d_k)``.

Each function measures one link of the argument, on the package's own code:

1. :func:`dot_product_variance` -- ``Var(q . k) = d_k`` for unit-variance entries, measured for
   several input distributions (Gaussian, non-Gaussian, correlated, LayerNorm-ed, projected),
   each against its closed form.
2. :func:`saturation_sweep`, :func:`softmax_row_frames` -- without the scale, softmax rows turn
   one-hot as ``d_k`` grows (largest weight, entropy, fraction of saturated rows).
3. :func:`jacobian_norm_sweep`, :func:`qk_gradient_sweep` -- the softmax Jacobian
   ``diag(p) - p p^T`` vanishes with the logit scale, and so does the gradient that reaches the
   query and key projections of a real attention layer.
4. :func:`train_lookup`, :func:`dk_training_sweep`, :func:`learning_rate_sweep` -- a tiny
   attention model trained on associative recall at several ``d_k``, with and without the scale.
5. :class:`LogitScale` with ``learned=True`` -- a learned temperature instead of the fixed prior.
6. :func:`multihead_scale_bug` -- scaling by ``sqrt(d_model)`` instead of ``sqrt(head_dim)``.

Shape legend::

    N     number of samples (pairs, rows)
    B     batch size
    H     heads
    P     key-value pairs in a sequence (the keys attended to)
    S     keys in a softmax row
    D     model width (embed_dim)
    E     head dimension d_k (head_dim)

Every function is seeded and deterministic: the same arguments give the same numbers.
Explained in chapter 3.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from ..attention import scaled_dot_product_attention
from ..diagnostics import GradientNormTracker, saturation_stats, softmax_jacobian_norm
from ..multihead import MultiHeadAttention

__all__ = [
    "DISTRIBUTIONS",
    "sample_entries",
    "theoretical_dot_variance",
    "dot_product_variance",
    "saturation_sweep",
    "softmax_row_frames",
    "jacobian_norm_sweep",
    "LogitScale",
    "with_logit_scale",
    "logit_scale_of",
    "qk_gradient_sweep",
]

# --------------------------------------------------------------------------------------------
# 1. Var(q . k) = d_k
# --------------------------------------------------------------------------------------------

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
    if not isinstance(d_k, int) or d_k < 1 or (distribution == "layernorm" and d_k < 2):
        raise ValueError(f"d_k must be an int >= 1 (>= 2 for 'layernorm'), got {d_k!r}")
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
    if num_samples < 2:
        raise ValueError(f"num_samples must be >= 2, got {num_samples}")
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


# --------------------------------------------------------------------------------------------
# 2. Softmax saturates
# --------------------------------------------------------------------------------------------


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
    gen = torch.Generator().manual_seed(seed)
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
    sizes = list(d_ks)
    if not sizes or sorted(sizes) != sizes or sizes[0] < 1:
        raise ValueError(f"d_ks must be positive and increasing, got {sizes}")
    gen = torch.Generator().manual_seed(seed)
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


# --------------------------------------------------------------------------------------------
# 3. The gradient vanishes
# --------------------------------------------------------------------------------------------


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
        ``{"logit_std", "frobenius", "spectral", "max_weight"}``, one list entry per ``sigma``.
    """
    gen = torch.Generator().manual_seed(seed)
    base = torch.randn(num_rows, num_keys, generator=gen)  # (N, S)
    out: dict[str, list[float]] = {"logit_std": [], "frobenius": [], "spectral": [], "max_weight": []}
    for sigma in logit_stds:
        logits = base * float(sigma)  # (N, S)
        out["logit_std"].append(float(sigma))
        out["frobenius"].append(softmax_jacobian_norm(logits).mean().item())
        out["spectral"].append(softmax_jacobian_norm(logits, ord="spectral").mean().item())
        out["max_weight"].append(torch.softmax(logits, dim=-1).amax(-1).mean().item())
    return out


class LogitScale(nn.Module):
    """Give a :class:`~helpers.multihead.MultiHeadAttention` the score scale ``scale`` (fixed or learned).

    ``MultiHeadAttention`` always divides ``q . k`` by ``sqrt(head_dim)``, as PyTorch's kernel
    does. Placed right after its ``q_proj``, this module multiplies the queries by
    ``scale * sqrt(head_dim)``, so the scores become exactly ``q . k * scale``: ``scale = 1``
    is attention without the scale, ``1 / sqrt(d_model)`` the multi-head bug of section 6, and
    ``learned=True`` a learned temperature (a parameter ``log_scale``, kept positive by the
    exponential). Use :func:`with_logit_scale`. Explained in chapter 3.

    Args:
        head_dim: The attention layer's head dimension E.
        scale: The factor applied to ``q . k`` (its initial value when learned), ``> 0``.
        learned: Make ``log(scale)`` a trainable parameter.

    Shape:
        ``(..., H * E)`` -> ``(..., H * E)``.
    """

    def __init__(self, head_dim: int, scale: float, *, learned: bool = False) -> None:
        super().__init__()
        if not (isinstance(scale, (int, float)) and scale > 0 and math.isfinite(scale)):
            raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
        self.head_dim = head_dim
        log_scale = torch.tensor(math.log(scale))
        if learned:
            self.log_scale = nn.Parameter(log_scale)
        else:
            self.register_buffer("log_scale", log_scale)

    @property
    def scale(self) -> float:
        """The current factor applied to ``q . k``."""
        return self.log_scale.exp().item()

    def forward(self, query: Tensor) -> Tensor:
        return query * (self.log_scale.exp() * math.sqrt(self.head_dim))  # (..., H * E)

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, scale={self.scale:.4g}, learned={isinstance(self.log_scale, nn.Parameter)}"


def with_logit_scale(attention: MultiHeadAttention, scale: float, *, learned: bool = False) -> MultiHeadAttention:
    """Make ``attention``'s scores ``q . k * scale`` instead of ``q . k / sqrt(head_dim)``, in place.

    Replaces ``attention.q_proj`` by ``nn.Sequential(q_proj, LogitScale(head_dim, scale))``
    (see :class:`LogitScale`); the layer's weights and everything else are unchanged.
    Explained in chapter 3.

    Args:
        attention: The layer to change.
        scale: The factor applied to ``q . k`` (its initial value when ``learned``).
        learned: Learn the factor (a learned temperature).

    Returns:
        The same layer, for chaining.
    """
    if not isinstance(attention, MultiHeadAttention):
        raise TypeError(f"attention must be a helpers.MultiHeadAttention, got {type(attention).__name__}")
    if isinstance(attention.q_proj, nn.Sequential):
        raise ValueError("this layer already has a LogitScale; build a fresh MultiHeadAttention")
    attention.q_proj = nn.Sequential(attention.q_proj, LogitScale(attention.head_dim, scale, learned=learned))
    return attention


def logit_scale_of(attention: MultiHeadAttention) -> float:
    """The factor ``attention`` applies to ``q . k``: its :class:`LogitScale`, or ``1/sqrt(head_dim)``."""
    if isinstance(attention.q_proj, nn.Sequential):
        return attention.q_proj[1].scale
    return 1 / math.sqrt(attention.head_dim)


@dataclass
class GradientSweep:
    """Gradient norms reaching each projection of an attention layer, against ``d_k``.

    Attributes:
        d_k: The head sizes measured (one head, ``embed_dim = d_k``).
        scaled: Whether the scores were divided by ``sqrt(d_k)``.
        q_proj, k_proj, v_proj, o_proj: Mean (over seeds) Frobenius norm of the gradient of
            each projection's weight.
        logit_std: Mean standard deviation of the scores over keys, at initialisation.
        max_weight: Mean largest attention weight of a row.
        saturated_fraction: Fraction of rows whose largest weight exceeds 0.99.
        median_jacobian_norm: Median over rows of the softmax Jacobian's Frobenius norm: what
            the typical row lets through (the mean is held up by the few rows near a tie).
    """

    d_k: list[int]
    scaled: bool
    q_proj: list[float] = field(default_factory=list)
    k_proj: list[float] = field(default_factory=list)
    v_proj: list[float] = field(default_factory=list)
    o_proj: list[float] = field(default_factory=list)
    logit_std: list[float] = field(default_factory=list)
    max_weight: list[float] = field(default_factory=list)
    saturated_fraction: list[float] = field(default_factory=list)
    median_jacobian_norm: list[float] = field(default_factory=list)


def qk_gradient_sweep(
    d_ks: Sequence[int] = (4, 16, 64, 256, 1024),
    *,
    scaled: bool,
    seq_len: int = 16,
    batch_size: int = 8,
    num_seeds: int = 3,
    seed: int = 0,
) -> GradientSweep:
    """The gradient that reaches ``q_proj`` and ``k_proj`` of a real attention layer, against ``d_k``.

    For each ``d_k``: a one-head :class:`~helpers.multihead.MultiHeadAttention` with
    ``embed_dim = d_k`` at PyTorch's default initialisation, scores scaled by ``1/sqrt(d_k)``
    or not (:func:`with_logit_scale`); LayerNorm-ed Gaussian inputs ``x``; one backward pass
    of the mean squared error against a random target; the weight gradients recorded by
    :class:`~helpers.diagnostics.GradientNormTracker`. Queries and keys only receive gradient
    through the softmax Jacobian, values and the output projection do not: the value/output
    norms are the control. Explained in chapter 3.

    Args:
        d_ks: Head sizes to measure.
        scaled: Divide the scores by ``sqrt(d_k)``.
        seq_len: Tokens per sequence (self-attention, L = S).
        batch_size: Sequences per batch.
        num_seeds: Independent layers (and batches) averaged per size.
        seed: Base seed.

    Returns:
        A :class:`GradientSweep`.
    """
    sweep = GradientSweep(list(d_ks), scaled)
    for d_k in d_ks:
        sums = dict.fromkeys(
            ("q_proj", "k_proj", "v_proj", "o_proj", "logit_std", "max_weight", "saturated_fraction", "median_jacobian_norm"),
            0.0,
        )
        for offset in range(num_seeds):
            torch.manual_seed(seed + offset)
            layer = with_logit_scale(
                MultiHeadAttention(d_k, 1, bias=False), 1 / math.sqrt(d_k) if scaled else 1.0
            )
            gen = torch.Generator().manual_seed(10_000 + seed + offset)
            x = nn.functional.layer_norm(torch.randn(batch_size, seq_len, d_k, generator=gen), (d_k,))  # (B, L, D)
            target = torch.randn(batch_size, seq_len, d_k, generator=gen)  # (B, L, D)
            with GradientNormTracker(layer) as tracker:
                out, weights = layer(x, need_weights=True)  # (B, L, D), (B, 1, L, L)
                nn.functional.mse_loss(out, target).backward()
            norms = tracker.latest()
            for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
                sums[name] += sum(v for k, v in norms.items() if k.startswith(name + "."))
            with torch.no_grad():
                scores = layer.q_proj(x) @ layer.k_proj(x).transpose(-2, -1) / math.sqrt(d_k)  # (B, L, L)
            stats = saturation_stats(scores)
            sums["logit_std"] += scores.std(dim=-1).mean().item()
            sums["max_weight"] += stats.max_weight
            sums["saturated_fraction"] += stats.saturated_fraction
            sums["median_jacobian_norm"] += softmax_jacobian_norm(scores).median().item()
        for name, total in sums.items():
            getattr(sweep, name).append(total / num_seeds)
    return sweep
