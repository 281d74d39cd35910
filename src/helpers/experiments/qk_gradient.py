"""Chapter 3: the gradient that reaches ``q_proj`` and ``k_proj`` of a real attention layer, against ``d_k``.

:func:`qk_gradient_sweep` runs one backward pass through a one-head
:class:`~helpers.multihead.MultiHeadAttention`, with and without the ``1/sqrt(d_k)`` scale
(:func:`~helpers.experiments.logit_scale.with_logit_scale`), and records the gradient norm of
each projection. Figures: :mod:`helpers.figures.qk_gradient`.

Shape legend::

    B   batch size      L   tokens (self-attention, L = S)
    D   model width, D = d_k (one head)

Seeded and deterministic. Explained in chapter 3 (``book/03-scaling``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from .. import seeding
from ..diagnostics import GradientNormTracker, saturation_stats, softmax_jacobian_norm
from ..multihead import MultiHeadAttention
from .logit_scale import with_logit_scale

__all__ = ["GradientSweep", "qk_gradient_sweep"]


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
        unsaturated_gradient_share: Share of the gradient reaching ``W_Q`` that comes from rows
            whose largest weight is at most 0.99: query ``i``'s row contributes ``g_i x_i^T`` to
            the gradient of ``W_Q`` (``g_i`` the gradient of its query vector), and the share is
            ``sum over those rows of |g_i x_i^T|`` over the same sum for all rows.
        unsaturated_row_gradient: Mean over the rows that are not saturated of ``|g'_i|``, the gradient of
            the query as the scores use it (the scores are ``q'_i . k_j / sqrt(d_k)``, with ``q'_i = q_i`` in
            the scaled layer and ``sqrt(d_k) q_i`` in the unscaled one): what the row's softmax lets through,
            without the factor ``sqrt(d_k)`` by which the unscaled scores are more sensitive to ``W_Q``.
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
    unsaturated_gradient_share: list[float] = field(default_factory=list)
    unsaturated_row_gradient: list[float] = field(default_factory=list)


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
    or not (:func:`~helpers.experiments.logit_scale.with_logit_scale`); LayerNorm-ed Gaussian inputs ``x``; one
    backward pass of the mean squared error against a random target; the weight gradients recorded by
    :class:`~helpers.diagnostics.GradientNormTracker`. Queries and keys only receive gradient
    through the softmax Jacobian, values and the output projection do not: the value/output
    norms are the control. Each query's row of the softmax feeds only its own query vector, so
    the gradient of ``W_Q`` splits into one term per row, and
    :attr:`GradientSweep.unsaturated_gradient_share` measures which rows it comes from.
    Explained in chapter 3.

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
            ("q_proj", "k_proj", "v_proj", "o_proj", "logit_std", "max_weight", "saturated_fraction",
             "median_jacobian_norm", "unsaturated_gradient_share", "unsaturated_row_gradient"),
            0.0,
        )
        for offset in range(num_seeds):
            seeding.manual_seed(seed + offset)
            layer = with_logit_scale(
                MultiHeadAttention(d_k, 1, bias=False), 1 / math.sqrt(d_k) if scaled else 1.0
            )
            gen = seeding.generator(10_000 + seed + offset)
            x = nn.functional.layer_norm(torch.randn(batch_size, seq_len, d_k, generator=gen), (d_k,))  # (B, L, D)
            target = torch.randn(batch_size, seq_len, d_k, generator=gen)  # (B, L, D)
            queries = []  # the query vectors as the scores use them (after the LogitScale), to read their gradient
            hook = layer.q_proj.register_forward_hook(lambda module, args, output: queries.append(output))
            with GradientNormTracker(layer) as tracker:
                out, weights = layer(x, need_weights=True)  # (B, L, D), (B, 1, L, L)
                queries[0].retain_grad()
                nn.functional.mse_loss(out, target).backward()
            hook.remove()
            row_share = queries[0].grad.norm(dim=-1) * x.norm(dim=-1)  # (B, L): |g_i x_i^T| = |g_i| |x_i|
            unsaturated = weights.detach().amax(-1).squeeze(1) <= 0.99  # (B, L)
            sums["unsaturated_gradient_share"] += (row_share[unsaturated].sum() / row_share.sum()).item()
            sums["unsaturated_row_gradient"] += queries[0].grad.norm(dim=-1)[unsaturated].mean().item()
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

