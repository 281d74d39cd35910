"""Path length, measured: how strongly the last output depends on each earlier input.

In a recurrent network the signal from input ``x_j`` reaches the last state through every
recurrent step in between, and its gradient is a product of one Jacobian per step: it shrinks
(or grows) roughly geometrically with the distance. In self-attention every input is one step
from every output. Chapter 1 measures both and fits the rate:

- :func:`gradient_by_distance` -- ``||d y_last / d x_j||`` by distance, for a GRU and for one
  self-attention layer at initialisation (Bengio et al., 1994; Pascanu et al., 2013);
- :func:`geometric_decay_rate` -- the factor by which such a curve shrinks per step of distance.

Shape legend::

    L     sequence length
    D     embedding and hidden size
    D_out size of the output whose Jacobian is taken

Seeded and deterministic: the same arguments give the same numbers. Explained in chapter 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ..attention import scaled_dot_product_attention
from ..checks import check_int, check_positive_int
from ..train import num_threads, set_seed

__all__ = [
    "GradientByDistance",
    "gradient_by_distance",
    "geometric_decay_rate",
]


@dataclass(frozen=True)
class GradientByDistance:
    """Gradient norms of the last output with respect to each input, by distance.

    Attributes:
        distance: Distance ``L - 1 - j`` of input position ``j`` from the last position.
        rnn: Mean Frobenius norm of ``d h_{L-1} / d x_j`` for a GRU, per distance.
        attention: The same for one self-attention layer.

    Shape:
        each ``(L,)``.
    """

    distance: Tensor
    rnn: Tensor
    attention: Tensor


def _jacobian_norms(fn: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    """Frobenius norm of d fn(x) / d x[j] for every position j; fn maps (L, D) to (D_out,)."""
    jac = torch.autograd.functional.jacobian(fn, x)  # (D_out, L, D)
    return jac.pow(2).sum((0, 2)).sqrt()  # (L,)


def gradient_by_distance(
    seq_len: int = 32, embed_dim: int = 32, *, seeds: Sequence[int] = (0, 1, 2)
) -> GradientByDistance:
    """How strongly the last output depends on each input, for a GRU and for self-attention.

    At initialisation (PyTorch's default, seeded), with standard-normal input embeddings,
    measure ``||d y_{L-1} / d x_j||_F`` for every position ``j``: ``y`` is the GRU's last hidden
    state, or the last output of one single-head self-attention layer (``W_q, W_k, W_v``, scaled
    dot product, no residual). In the GRU the signal from ``x_j`` passes through ``L - 1 - j``
    recurrent steps and its gradient shrinks roughly geometrically with distance; in attention
    every input is one step away, so the gradient does not depend on distance. Averaged over
    ``seeds``. Explained in chapter 1.

    Args:
        seq_len: Sequence length L (``>= 2``).
        embed_dim: Embedding and hidden size D.
        seeds: Seeds to average over.

    Returns:
        A :class:`GradientByDistance`, indexed by distance ``0 .. L - 1``.

    Shape:
        the inputs are ``(L, D)``; each curve of the result is ``(L,)``.
    """
    check_int("seq_len", seq_len, 2)
    check_positive_int("embed_dim", embed_dim)
    if len(seeds) == 0:
        raise ValueError("seeds must hold at least one seed")
    rnn_norms, attention_norms = [], []
    with num_threads(1):
        for seed in seeds:
            set_seed(seed)
            gru = nn.GRU(embed_dim, embed_dim, batch_first=True)
            q_proj, k_proj, v_proj = (nn.Linear(embed_dim, embed_dim, bias=False) for _ in range(3))
            x = torch.randn(seq_len, embed_dim)  # (L, D)

            def rnn_last(inputs: Tensor) -> Tensor:
                return gru(inputs[None])[0][0, -1]  # (1, L, D) -> (D,)

            def attention_last(inputs: Tensor) -> Tensor:
                q, k, v = q_proj(inputs)[None], k_proj(inputs)[None], v_proj(inputs)[None]  # (1, L, D) each
                return scaled_dot_product_attention(q, k, v)[0, -1]  # (1, L, D) -> (D,)

            rnn_norms.append(_jacobian_norms(rnn_last, x).flip(0))  # index by distance L - 1 - j
            attention_norms.append(_jacobian_norms(attention_last, x).flip(0))
    return GradientByDistance(
        distance=torch.arange(seq_len),
        rnn=torch.stack(rnn_norms).mean(0),  # (seeds, L) -> (L,)
        attention=torch.stack(attention_norms).mean(0),  # (seeds, L) -> (L,)
    )


def geometric_decay_rate(values: Tensor | Sequence[float], distances: Tensor | Sequence[float] | None = None) -> float:
    """The per-step factor ``r`` of a geometric fit ``values ~ c * r ** distance``.

    A least-squares line through ``(distance, log value)``; ``r = exp(slope)``. ``r < 1`` means
    the values shrink by that factor per step of distance (a GRU's gradient in
    :func:`gradient_by_distance`); ``r = 1`` means no decay. Non-positive values are left out of
    the fit. Explained in chapter 1.

    Args:
        values: Positive measurements, e.g. gradient norms by distance.
        distances: Their distances (default ``0, 1, 2, ...``).

    Returns:
        The fitted factor per unit of distance.

    Shape:
        values, distances: ``(n,)``.
    """
    y = torch.as_tensor(values, dtype=torch.float64).flatten()  # (n,)
    if distances is None:
        x = torch.arange(len(y), dtype=torch.float64)  # (n,)
    else:
        x = torch.as_tensor(distances, dtype=torch.float64).flatten()  # (n,)
    if x.shape != y.shape:
        raise ValueError(f"values and distances must have the same length, got {len(y)} and {len(x)}")
    keep = y > 0
    if keep.sum() < 2:
        raise ValueError(f"need at least two positive values to fit a rate, got {keep.sum().item()}")
    x, log_y = x[keep], y[keep].log()
    x_centred = x - x.mean()
    slope = (x_centred * (log_y - log_y.mean())).sum() / x_centred.pow(2).sum()
    return math.exp(slope.item())
