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
4. :func:`train_recall`, :func:`dk_training_sweep`, :func:`learning_rate_sweep` -- a tiny
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import plotly.graph_objects as go
import torch
from torch import Tensor, nn

from .. import viz
from ..diagnostics import GradientNormTracker, attention_entropy, saturation_stats, softmax_jacobian_norm
from ..multihead import MultiHeadAttention
from ..tasks import associative_recall_task
from ..train import TrainingHistory, num_threads, set_seed, train

__all__ = [
    "DISTRIBUTIONS",
    "sample_entries",
    "theoretical_dot_variance",
    "VarianceSweep",
    "dot_product_variance",
    "SaturationSweep",
    "saturation_sweep",
    "softmax_row_frames",
    "jacobian_norm_sweep",
    "LogitScale",
    "with_logit_scale",
    "logit_scale_of",
    "GradientSweep",
    "qk_gradient_sweep",
    "RecallConfig",
    "RecallAttention",
    "steps_to_accuracy",
    "final_accuracy",
    "train_recall",
    "RecallRun",
    "run_recall",
    "dk_training_sweep",
    "LearningRateSweep",
    "learning_rate_sweep",
    "learned_temperature_runs",
    "ScaleBugReport",
    "multihead_scale_bug",
    "variance_figure",
    "variance_table",
    "softmax_row_figure",
    "saturation_figure",
    "jacobian_figure",
    "gradient_figure",
    "training_figure",
    "training_table",
    "learning_rate_figure",
    "temperature_figure",
    "accuracy_figure",
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


# --------------------------------------------------------------------------------------------
# 4-6. Training with and without the scale, a learned temperature, the multi-head bug
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecallConfig:
    """The associative-recall task and batches of the training experiments.

    Attributes:
        num_pairs: Key-value pairs per sequence, P (the keys a query chooses among).
        num_keys: Distinct key tokens.
        num_values: Distinct value tokens (the classes to predict).
        batch_size: Sequences per training step.
        seed: Seed of the data stream (step ``t`` uses ``seed + t``).
    """

    num_pairs: int = 8
    num_keys: int = 16
    num_values: int = 16
    batch_size: int = 64
    seed: int = 1234

    def make_batch(self, step: int) -> tuple[Tensor, Tensor]:
        """Batch ``step``: tokens ``(B, 2P + 1)`` and the value index to predict ``(B,)``."""
        tokens, target = associative_recall_task(
            self.batch_size, self.num_pairs, self.num_keys, self.num_values, seed=self.seed + step
        )
        return tokens, target - self.num_keys


class RecallAttention(nn.Module):
    """One attention layer that answers associative recall: the query key looks up its value.

    The sequence ``k_1 v_1 ... k_P v_P q`` of :func:`~helpers.tasks.associative_recall_task` is
    read as a dictionary: the query token ``q`` attends over the keys ``k_j`` and reads the
    values ``v_j`` (cross-attention in a :class:`~helpers.multihead.MultiHeadAttention`), and a
    linear readout names the value. The task is solved exactly when the scores pick the key
    equal to ``q``, which makes it a clean test of the score function and its scale. Explained
    in chapter 3.

    Args:
        num_keys: Distinct key tokens (the first ``num_keys`` token ids).
        num_values: Distinct value tokens (the next ``num_values`` ids).
        embed_dim: Model width D; with one head, ``d_k = D``.
        num_heads: Heads H; ``head_dim = D / H``.
        scale: Factor applied to ``q . k``; ``None`` is ``1 / sqrt(head_dim)`` (the standard
            layer, unchanged); anything else goes through :func:`with_logit_scale`.
        learned_scale: Learn the factor, starting from ``scale`` (``1/sqrt(head_dim)`` if None).

    Attributes:
        need_weights: Return the attention weights (the readable kernel); when ``False`` (the
            default) the fused PyTorch kernel runs and ``None`` is returned in their place.

    Shape:
        tokens ``(B, 2P + 1)`` -> logits ``(B, num_values)``, weights ``(B, H, 1, P)``.
    """

    def __init__(
        self,
        num_keys: int,
        num_values: int,
        embed_dim: int,
        num_heads: int = 1,
        *,
        scale: float | None = None,
        learned_scale: bool = False,
    ) -> None:
        super().__init__()
        self.num_keys = num_keys
        self.key_embed = nn.Embedding(num_keys, embed_dim)
        self.value_embed = nn.Embedding(num_values, embed_dim)
        self.attention = MultiHeadAttention(embed_dim, num_heads, bias=False)
        if scale is not None or learned_scale:
            initial = 1 / math.sqrt(self.attention.head_dim) if scale is None else scale
            with_logit_scale(self.attention, initial, learned=learned_scale)
        self.readout = nn.Linear(embed_dim, num_values)
        self.need_weights = False

    def forward(self, tokens: Tensor) -> tuple[Tensor, Tensor | None]:
        keys = self.key_embed(tokens[:, 0:-1:2])  # (B, P, D)
        values = self.value_embed(tokens[:, 1:-1:2] - self.num_keys)  # (B, P, D)
        query = self.key_embed(tokens[:, -1:])  # (B, 1, D)
        out, weights = self.attention(query, keys, values, need_weights=self.need_weights)  # (B, 1, D), (B, H, 1, P)
        return self.readout(out[:, 0]), weights  # (B, V), (B, H, 1, P)


def steps_to_accuracy(history: TrainingHistory, target: float = 0.9, *, window: int = 20) -> int | None:
    """First step at which the batch accuracy, averaged over the last ``window`` steps, reaches ``target``.

    Args:
        history: What :func:`helpers.train.train` recorded.
        target: The accuracy to reach.
        window: Length of the moving average (batch accuracy is noisy).

    Returns:
        The step index, or ``None`` if the run never got there.
    """
    accuracy = history.accuracy
    running = 0.0
    for step, value in enumerate(accuracy):
        running += value
        if step >= window:
            running -= accuracy[step - window]
        if step >= window - 1 and running / window >= target:
            return step
    return None


def final_accuracy(history: TrainingHistory, *, last: int = 50) -> float:
    """Mean batch accuracy over the last ``last`` steps of a run."""
    tail = history.accuracy[-last:]
    return sum(tail) / len(tail)


def train_recall(
    d_k: int,
    *,
    scaled: bool = True,
    lr: float = 3e-3,
    steps: int = 300,
    num_heads: int = 1,
    scale: float | None = None,
    learned_scale: bool = False,
    config: RecallConfig = RecallConfig(),
    seed: int = 0,
    record_attention_entropy: bool = False,
    callback: Callable[[int, RecallAttention, TrainingHistory], bool | None] | None = None,
) -> tuple[RecallAttention, TrainingHistory]:
    """Train a :class:`RecallAttention` with head size ``d_k`` on associative recall.

    The model has ``num_heads`` heads of size ``d_k`` (``embed_dim = num_heads * d_k``) at
    PyTorch's default initialisation, trained by :func:`helpers.train.train` (AdamW, no
    warm-up, no clipping) on the batches of ``config``. Explained in chapter 3.

    Args:
        d_k: Head size.
        scaled: Divide ``q . k`` by ``sqrt(d_k)``; ``False`` trains without any scale.
        lr: Learning rate.
        steps: Optimisation steps.
        num_heads: Heads.
        scale: An explicit factor on ``q . k`` (overrides ``scaled``), e.g. ``1/sqrt(embed_dim)``.
        learned_scale: Learn the factor, starting from the fixed one.
        config: Task and batch settings.
        seed: Seed of the model's initialisation.
        record_attention_entropy: Record the attention entropy per step.
        callback: Passed to :func:`helpers.train.train`.

    Returns:
        ``(model, history)``.
    """
    if scale is None and not scaled:
        scale = 1.0
    set_seed(seed)
    model = RecallAttention(
        config.num_keys, config.num_values, num_heads * d_k, num_heads, scale=scale, learned_scale=learned_scale
    )
    model.need_weights = record_attention_entropy
    with num_threads(1):  # tiny operations: one thread is faster on a busy machine
        history = train(
            model,
            config.make_batch,
            steps=steps,
            lr=lr,
            seed=seed,
            record_attention_entropy=record_attention_entropy,
            callback=callback,
        )
    return model, history


@dataclass
class RecallRun:
    """One training run of :func:`train_recall`, summarised.

    Attributes:
        label: What the run is (e.g. ``"scaled"``, ``"no scale"``, ``"bug: 1/sqrt(d_model)"``).
        d_k: Head size.
        num_heads: Heads.
        lr: Learning rate.
        scale: Factor on ``q . k`` at the start (``1/sqrt(d_k)`` for the standard layer).
        history: What :func:`helpers.train.train` recorded.
        steps_to_target: :func:`steps_to_accuracy` at ``target`` (``None``: never reached).
        final_accuracy: :func:`final_accuracy` (mean of the last 50 steps).
        target: The accuracy of ``steps_to_target``.
        scale_trajectory: The factor on ``q . k`` after each step (only for learned scales).
    """

    label: str
    d_k: int
    num_heads: int
    lr: float
    scale: float
    history: TrainingHistory
    steps_to_target: int | None
    final_accuracy: float
    target: float
    scale_trajectory: list[float] = field(default_factory=list)


def run_recall(
    label: str,
    d_k: int,
    *,
    scale: float | None = None,
    learned_scale: bool = False,
    num_heads: int = 1,
    lr: float = 1e-3,
    steps: int = 300,
    target: float = 0.9,
    config: RecallConfig = RecallConfig(),
    seed: int = 0,
) -> RecallRun:
    """Train one :class:`RecallAttention` (:func:`train_recall`) and summarise it as a :class:`RecallRun`.

    Args:
        label: Name of the run, for tables and legends.
        d_k: Head size.
        scale: Factor on ``q . k``; ``None`` is the standard ``1/sqrt(d_k)``.
        learned_scale: Learn the factor (its trajectory is recorded).
        num_heads: Heads.
        lr: Learning rate.
        steps: Optimisation steps.
        target: Accuracy for :attr:`RecallRun.steps_to_target`.
        config: Task and batch settings.
        seed: Seed of the initialisation.

    Returns:
        The run.
    """
    trajectory: list[float] = []

    def record_scale(step: int, model: RecallAttention, history: TrainingHistory) -> None:
        trajectory.append(logit_scale_of(model.attention))

    _, history = train_recall(
        d_k,
        lr=lr,
        steps=steps,
        num_heads=num_heads,
        scale=scale,
        learned_scale=learned_scale,
        config=config,
        seed=seed,
        callback=record_scale if learned_scale else None,
    )
    return RecallRun(
        label=label,
        d_k=d_k,
        num_heads=num_heads,
        lr=lr,
        scale=1 / math.sqrt(d_k) if scale is None else scale,
        history=history,
        steps_to_target=steps_to_accuracy(history, target),
        final_accuracy=final_accuracy(history),
        target=target,
        scale_trajectory=trajectory,
    )


def dk_training_sweep(
    d_ks: Sequence[int] = (16, 64, 256),
    *,
    lr: float = 1e-3,
    steps: int = 300,
    target: float = 0.9,
    config: RecallConfig = RecallConfig(),
    seed: int = 0,
) -> list[RecallRun]:
    """Train at each ``d_k`` with the ``1/sqrt(d_k)`` scale (``"scaled"``) and without (``"no scale"``).

    Same data, same initialisation, same learning rate: only the factor on ``q . k`` differs.
    Explained in chapter 3.

    Args:
        d_ks: Head sizes (one head, ``embed_dim = d_k``).
        lr: Learning rate.
        steps: Optimisation steps per run.
        target: Accuracy for the steps-to-target count.
        config: Task and batch settings.
        seed: Seed of the initialisation.

    Returns:
        ``2 * len(d_ks)`` runs, ``"scaled"`` then ``"no scale"`` for each ``d_k``.
    """
    runs = []
    for d_k in d_ks:
        for label, scale in (("scaled", None), ("no scale", 1.0)):
            runs.append(run_recall(label, d_k, scale=scale, lr=lr, steps=steps, target=target, config=config, seed=seed))
    return runs


@dataclass
class LearningRateSweep:
    """Final accuracy against the learning rate, with and without the scale (see :func:`learning_rate_sweep`).

    Attributes:
        d_k: Head size.
        lrs: The learning rates tried.
        runs: ``{"scaled": [...], "no scale": [...]}``, one :class:`RecallRun` per learning rate.
        threshold: Final accuracy a learning rate needs to count as usable.
    """

    d_k: int
    lrs: list[float]
    runs: dict[str, list[RecallRun]]
    threshold: float

    def final_accuracy(self, label: str) -> list[float]:
        """Final accuracy of each learning rate for ``label`` (``"scaled"`` or ``"no scale"``)."""
        return [run.final_accuracy for run in self.runs[label]]

    def usable(self, label: str) -> list[float]:
        """The learning rates whose final accuracy reaches :attr:`threshold`."""
        return [lr for lr, run in zip(self.lrs, self.runs[label]) if run.final_accuracy >= self.threshold]

    def usable_decades(self, label: str) -> float:
        """Width of the usable range in decades, ``log10(max / min)`` over :meth:`usable`.

        ``0`` when one learning rate works, ``nan`` when none does. The grid limits it: the
        true range is at least this wide and at most one grid step wider on each side.
        """
        usable = self.usable(label)
        return math.log10(max(usable) / min(usable)) if usable else math.nan


def learning_rate_sweep(
    lrs: Sequence[float] = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2),
    *,
    d_k: int = 256,
    steps: int = 300,
    threshold: float = 0.9,
    config: RecallConfig = RecallConfig(),
    seed: int = 0,
    reuse: Sequence[RecallRun] = (),
) -> LearningRateSweep:
    """Train at each learning rate with and without the scale; which learning rates work?

    A learning rate counts as usable when the final accuracy (mean of the last 50 steps)
    reaches ``threshold`` within ``steps``. Explained in chapter 3.

    Args:
        lrs: Learning rates, increasing.
        d_k: Head size (one head).
        steps: Optimisation steps per run.
        threshold: Final accuracy of a usable learning rate.
        config: Task and batch settings.
        seed: Seed of the initialisation.
        reuse: Runs already trained with the same settings (e.g. by :func:`dk_training_sweep`,
            same ``config`` and ``seed``): a run with this ``d_k``, learning rate, label and
            number of steps is taken from here instead of being trained again.

    Returns:
        A :class:`LearningRateSweep`.
    """
    runs: dict[str, list[RecallRun]] = {"scaled": [], "no scale": []}
    for lr in lrs:
        for label, scale in (("scaled", None), ("no scale", 1.0)):
            done = [
                r for r in reuse
                if (r.label, r.d_k, r.num_heads, r.lr, len(r.history.accuracy)) == (label, d_k, 1, lr, steps)
            ]
            if done:
                run = done[0]
                run = RecallRun(run.label, run.d_k, run.num_heads, run.lr, run.scale, run.history,
                                steps_to_accuracy(run.history, threshold), run.final_accuracy, threshold)
            else:
                run = run_recall(label, d_k, scale=scale, lr=lr, steps=steps, target=threshold, config=config, seed=seed)
            runs[label].append(run)
    return LearningRateSweep(d_k, list(lrs), runs, threshold)


def learned_temperature_runs(
    d_k: int = 256,
    *,
    lr: float = 1e-3,
    steps: int = 300,
    target: float = 0.9,
    config: RecallConfig = RecallConfig(),
    seed: int = 0,
) -> list[RecallRun]:
    """Replace the fixed ``1/sqrt(d_k)`` by a learned factor on ``q . k`` (a learned temperature).

    Two runs, both learning ``log(scale)`` with the other weights: one starts from ``1`` (no
    prior: the unscaled layer, free to learn its scale), one from ``1/sqrt(d_k)`` (the prior,
    free to move away from it). Compare with :func:`dk_training_sweep`'s fixed runs at the
    same ``d_k``, learning rate and seed. Explained in chapter 3.

    Args:
        d_k: Head size (one head).
        lr: Learning rate (the same for the temperature as for the weights).
        steps: Optimisation steps per run.
        target: Accuracy for the steps-to-target count.
        config: Task and batch settings.
        seed: Seed of the initialisation.

    Returns:
        The two runs, with their :attr:`RecallRun.scale_trajectory`.
    """
    common = dict(learned_scale=True, lr=lr, steps=steps, target=target, config=config, seed=seed)
    return [
        run_recall("learned, from 1", d_k, scale=1.0, **common),
        run_recall("learned, from 1/√d_k", d_k, scale=1 / math.sqrt(d_k), **common),
    ]


@dataclass
class ScaleBugReport:
    """What scaling by ``sqrt(d_model)`` instead of ``sqrt(head_dim)`` does (see :func:`multihead_scale_bug`).

    Attributes:
        embed_dim: Model width ``d_model``.
        num_heads: Heads H.
        head_dim: ``d_model / H``, the size each dot product runs over.
        score_variance: ``{"1/sqrt(head_dim)": ..., "1/sqrt(d_model)": ...}``: measured variance
            of the scores for unit-variance queries and keys of size ``head_dim``.
        init_entropy: Mean attention entropy (nats) of the model at initialisation, per label.
        max_entropy: ``log P``, the entropy of uniform attention over the P keys.
        runs: The training runs, labelled ``"÷ √head_dim (right)"`` then ``"÷ √d_model (bug)"``.
    """

    embed_dim: int
    num_heads: int
    head_dim: int
    score_variance: dict[str, float]
    init_entropy: dict[str, float]
    max_entropy: float
    runs: list[RecallRun]


def multihead_scale_bug(
    embed_dim: int = 128,
    num_heads: int = 16,
    *,
    lr: float = 1e-3,
    steps: int = 300,
    target: float = 0.9,
    num_samples: int = 8192,
    config: RecallConfig = RecallConfig(),
    seed: int = 0,
) -> ScaleBugReport:
    """Measure the multi-head bug: dividing by ``sqrt(d_model)`` where ``sqrt(head_dim)`` is meant.

    Each head's dot product runs over ``head_dim = d_model / H`` features, so its variance is
    ``head_dim``; dividing by ``sqrt(d_model)`` leaves ``head_dim / d_model = 1 / H``: the
    scores are ``sqrt(H)`` times too small and the attention starts (and stays) flatter. The
    model can make up for it by growing ``W_q`` and ``W_k``, which takes steps. Measured: the
    score variance for unit-variance vectors, the attention entropy of the model at
    initialisation, and two training runs that differ only in the scale. Explained in chapter 3.

    Args:
        embed_dim: Model width ``d_model``.
        num_heads: Heads H (must divide ``embed_dim``).
        lr: Learning rate.
        steps: Optimisation steps per run.
        target: Accuracy for the steps-to-target count.
        num_samples: Query/key pairs for the variance measurement.
        config: Task and batch settings.
        seed: Seed of the initialisation and of the samples.

    Returns:
        A :class:`ScaleBugReport`.
    """
    if embed_dim % num_heads:
        raise ValueError(f"num_heads={num_heads} must divide embed_dim={embed_dim}")
    head_dim = embed_dim // num_heads
    scales = {"1/sqrt(head_dim)": 1 / math.sqrt(head_dim), "1/sqrt(d_model)": 1 / math.sqrt(embed_dim)}
    labels = {"1/sqrt(head_dim)": "÷ √head_dim (right)", "1/sqrt(d_model)": "÷ √d_model (bug)"}
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(num_samples, head_dim, generator=gen)  # (N, E)
    k = torch.randn(num_samples, head_dim, generator=gen)  # (N, E)
    dots = (q * k).sum(-1)  # (N,)
    variance = {label: (dots * scale).var().item() for label, scale in scales.items()}
    tokens, _ = config.make_batch(0)
    entropy = {}
    for label, scale in scales.items():
        set_seed(seed)
        model = RecallAttention(config.num_keys, config.num_values, embed_dim, num_heads, scale=scale)
        model.need_weights = True
        with torch.no_grad():
            _, weights = model(tokens)  # (B, H, 1, P)
        entropy[label] = attention_entropy(weights).mean().item()
    runs = [
        run_recall(labels[label], head_dim, scale=scale, num_heads=num_heads, lr=lr, steps=steps, target=target,
                   config=config, seed=seed)
        for label, scale in scales.items()
    ]
    return ScaleBugReport(embed_dim, num_heads, head_dim, variance, entropy, math.log(config.num_pairs), runs)


# --------------------------------------------------------------------------------------------
# Figures and tables of the chapter (drawn with helpers.viz)
# --------------------------------------------------------------------------------------------


def _smooth(values: Sequence[float], window: int) -> list[float]:
    """Trailing moving average (shorter at the start)."""
    out, running = [], 0.0
    for index, value in enumerate(values):
        running += value
        if index >= window:
            running -= values[index - window]
        out.append(running / min(index + 1, window))
    return out


def _rounded(values: Sequence[float], digits: int = 4) -> list[float]:
    return [float(f"{v:.{digits}g}") for v in values]


def _legend_below(fig: go.Figure) -> go.Figure:
    """Put the legend under the plot, where it can wrap on a narrow screen without covering the title."""
    fig.update_layout(legend=dict(orientation="h", x=0.0, xanchor="left", y=-0.22, yanchor="top"),
                      margin=dict(b=40))
    return fig


def _dashed(fig: go.Figure, *names: str, color: str | None = None) -> go.Figure:
    """Draw the named traces dashed (reference lines: closed forms, thresholds, priors)."""
    for trace in fig.data:
        if trace.name in names:
            trace.line.dash = "dash"
            if color is not None:
                trace.line.color = color
                trace.marker.color = color
    return fig


def variance_figure(sweeps: dict[str, VarianceSweep]) -> go.Figure:
    """Measured ``Var(q . k)``, its closed form and the scaled variance, with a slider over the inputs.

    Args:
        sweeps: Distribution name -> :class:`VarianceSweep`, all over the same sizes.

    Returns:
        A :func:`helpers.viz.line_sweep` figure (log-log).
    """
    sizes = next(iter(sweeps.values())).d_k
    if any(s.d_k != sizes for s in sweeps.values()):
        raise ValueError("every sweep must cover the same d_k values (start at 2 to include 'layernorm')")
    curves = {
        name: {
            "Var(q·k)": _rounded(s.measured),
            "closed form": _rounded(s.theory),
            "Var(q·k/√d_k)": _rounded(s.scaled),
        }
        for name, s in sweeps.items()
    }
    fig = viz.line_sweep(
        sizes, curves, param_name="inputs", x_title="d_k", y_title="variance", log_x=True, log_y=True,
        title="Var(q·k) against d_k (slider: how q and k are drawn)",
    )
    return _dashed(fig, "closed form")


def variance_table(sweeps: dict[str, VarianceSweep]) -> str:
    """A Markdown table: per distribution, measured/closed form at the largest ``d_k``, and the scaled variance."""
    rows = [
        "| inputs | what they test | Var(q·k) at d_k = {d} | closed form | Var(q·k / √d_k) |".format(
            d=next(iter(sweeps.values())).d_k[-1]
        ),
        "|---|---|---:|---:|---:|",
    ]
    for name, s in sweeps.items():
        rows.append(
            f"| `{name}` | {DISTRIBUTIONS[name]} | {s.measured[-1]:,.0f} | {s.theory[-1]:,.0f} | {s.scaled[-1]:.2f} |"
        )
    return "\n".join(rows)


def softmax_row_figure(frames: dict[str, Tensor]) -> go.Figure:
    """One softmax row with and without the scale, with a slider over ``d_k`` (see :func:`softmax_row_frames`)."""
    keys = list(range(1, frames["weights"].shape[1] + 1))
    curves = {
        int(d): {"no scale": _rounded(w.tolist(), 3), "scaled (÷ √d_k)": _rounded(sw.tolist(), 3)}
        for d, w, sw in zip(frames["d_k"], frames["weights"], frames["scaled_weights"])
    }
    sizes = list(curves)
    fig = viz.line_sweep(
        keys, curves, param_name="d_k", x_title="key", y_title="softmax weight",
        title="One query, 8 keys: the softmax row as d_k grows",
        active=64 if 64 in curves else sizes[len(sizes) // 2],  # open where the two rows differ
    )
    _dashed(fig, "scaled (÷ √d_k)")
    fig.update_yaxes(range=[0, 1.02])
    fig.update_xaxes(dtick=1)
    return fig


def saturation_figure(unscaled: SaturationSweep, scaled: SaturationSweep) -> go.Figure:
    """Largest weight and normalised entropy of softmax rows against ``d_k``, with and without the scale."""
    log_s = math.log(unscaled.num_keys)
    fig = viz.line_plot(
        unscaled.d_k,
        {
            "top weight, no scale": _rounded(unscaled.max_weight),
            "top weight, scaled": _rounded(scaled.max_weight),
            "entropy / log S, no scale": _rounded([e / log_s for e in unscaled.entropy]),
            "entropy / log S, scaled": _rounded([e / log_s for e in scaled.entropy]),
        },
        x_title="d_k", y_title="mean over rows", log_x=True,
        title=f"Saturation of a softmax over {unscaled.num_keys} keys",
    )
    return _legend_below(_dashed(fig, "top weight, scaled", "entropy / log S, scaled"))


def jacobian_figure(sweep: dict[str, list[float]]) -> go.Figure:
    """Norms of the softmax Jacobian against the standard deviation of the logits (see :func:`jacobian_norm_sweep`)."""
    fig = viz.line_plot(
        sweep["logit_std"],
        {
            "‖J‖ (Frobenius)": _rounded(sweep["frobenius"]),
            "‖J‖ (spectral)": _rounded(sweep["spectral"]),
            "top weight": _rounded(sweep["max_weight"]),
        },
        x_title="std of the logits (1 = scaled, √d_k = unscaled)", y_title="mean over rows",
        log_x=True, title="Softmax Jacobian J = diag(p) − ppᵀ against the logits' spread",
    )
    return _legend_below(fig)


def gradient_figure(scaled: GradientSweep, unscaled: GradientSweep) -> go.Figure:
    """Gradient norms at ``W_q``, ``W_k`` and ``W_v`` against ``d_k``, with and without the scale."""
    fig = viz.line_plot(
        scaled.d_k,
        {
            "W_Q, no scale": _rounded(unscaled.q_proj),
            "W_Q, scaled": _rounded(scaled.q_proj),
            "W_V, no scale": _rounded(unscaled.v_proj),
            "W_V, scaled": _rounded(scaled.v_proj),
        },
        x_title="d_k (one head, d_model = d_k)", y_title="gradient norm at init",
        log_x=True, log_y=True, title="Gradient reaching W_Q and W_V of one attention layer",
    )
    return _legend_below(_dashed(fig, "W_Q, scaled", "W_V, scaled"))


def training_figure(runs: Sequence[RecallRun], *, every: int = 5, window: int = 20) -> go.Figure:
    """Training accuracy (moving average) with and without the scale, with a slider over ``d_k``."""
    sizes = sorted({run.d_k for run in runs})
    steps = len(runs[0].history.accuracy)
    x = list(range(0, steps, every))
    curves = {}
    for d_k in sizes:
        curves[d_k] = {
            run.label: _rounded(_smooth(run.history.accuracy, window)[::every], 3) for run in runs if run.d_k == d_k
        }
    return viz.line_sweep(
        x, curves, param_name="d_k", x_title="training step", y_title=f"batch accuracy ({window}-step average)",
        title="Associative recall, one attention head (menu: d_k)", control="dropdown",
    )


def training_table(runs: Sequence[RecallRun]) -> str:
    """A Markdown table of steps to the target accuracy and final accuracy, per run."""
    target = runs[0].target
    rows = [f"| d_k | scale | steps to {target:.0%} | final accuracy |", "|---:|---|---:|---:|"]
    for run in runs:
        reached = "never" if run.steps_to_target is None else str(run.steps_to_target)
        rows.append(f"| {run.d_k} | {run.label} | {reached} | {run.final_accuracy:.1%} |")
    return "\n".join(rows)


def learning_rate_figure(sweep: LearningRateSweep) -> go.Figure:
    """Final accuracy against the learning rate, with and without the scale, and the usable threshold."""
    threshold = f"usable: ≥ {sweep.threshold:.0%}"
    fig = viz.line_plot(
        sweep.lrs,
        {
            "scaled": _rounded(sweep.final_accuracy("scaled"), 3),
            "no scale": _rounded(sweep.final_accuracy("no scale"), 3),
            threshold: [sweep.threshold] * len(sweep.lrs),
        },
        x_title="learning rate (AdamW)", y_title="final accuracy (last 50 steps)", log_x=True,
        title=f"Which learning rates work at d_k = {sweep.d_k}",
    )
    fig.update_xaxes(tickvals=sweep.lrs, ticktext=[f"{lr:.0e}" for lr in sweep.lrs])
    return _legend_below(_dashed(fig, threshold, color="#7f7f7f"))


def temperature_figure(runs: Sequence[RecallRun]) -> go.Figure:
    """The learned factor on ``q . k`` during training, for runs with a learned temperature."""
    steps = len(runs[0].scale_trajectory)
    x = list(range(0, steps, 5))
    d_k = runs[0].d_k
    curves = {run.label: _rounded(run.scale_trajectory[::5]) for run in runs}
    prior = "1/√d_k (fixed prior)"
    curves[prior] = [1 / math.sqrt(d_k)] * len(x)
    fig = viz.line_plot(
        x, curves, x_title="training step", y_title="factor on q·k", log_y=True,
        title=f"A learned temperature at d_k = {d_k}",
    )
    return _legend_below(_dashed(fig, prior, color="#7f7f7f"))


def accuracy_figure(runs: Sequence[RecallRun], *, title: str, every: int = 5, window: int = 20) -> go.Figure:
    """Training accuracy (moving average) of several runs on one plot."""
    steps = len(runs[0].history.accuracy)
    x = list(range(0, steps, every))
    fig = viz.line_plot(
        x, {run.label: _rounded(_smooth(run.history.accuracy, window)[::every], 3) for run in runs},
        x_title="training step", y_title=f"batch accuracy ({window}-step average)", title=title,
    )
    return _legend_below(fig)
