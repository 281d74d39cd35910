"""Chapter 3: give a :class:`~helpers.multihead.MultiHeadAttention` any factor on ``q . k``, fixed or learned.

:class:`LogitScale` and :func:`with_logit_scale` change a real attention layer's scale without
touching the layer (used by :mod:`helpers.experiments.qk_gradient`); :func:`logit_scale_of`
reads it back. Explained in chapter 3 (``book/03-scaling``).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ..multihead import MultiHeadAttention

__all__ = ["LogitScale", "with_logit_scale", "logit_scale_of"]


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

