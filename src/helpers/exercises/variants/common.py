"""What lab 5's attention exercises share: the masked attention they are compared with, and inputs whose scores
lie far below zero, where a finite fill value (-30) is above the real scores and the masked keys take the weight."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ..cases import Case

FILLS = (-5.0, -10.0, -20.0, -30.0)
"""Finite fill values a masked score is often given — each leaves a masked key a weight the tolerance sees on
ordinary scores, or all of it where the real scores are lower (:func:`.low_scores`)."""


def masked_attention(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, scale: float | None = None,
                     fill: float = float("-inf")) -> Tensor:
    """Softmax attention where ``allowed`` (True = may attend) is False the score is ``fill``."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale  # (B, H, L, S)
    return torch.softmax(scores.masked_fill(~allowed, fill), dim=-1) @ v  # (B, H, L, Ev)


def qkv(case: Case, *shape: int, dtype: torch.dtype = torch.float32) -> tuple[Tensor, Tensor, Tensor]:
    return case.randn(*shape, dtype=dtype), case.randn(*shape, dtype=dtype), case.randn(*shape, dtype=dtype)


def low_scores(case: Case, batch: int, heads: int, n: int, e: int) -> tuple[Tensor, Tensor, Tensor]:
    """``q, k, v`` in float64 whose every score ``q·k/√E`` is about -100 (between -130 and -70): a mask filled with
    -30 (any finite number above -70) gives the masked keys nearly all the weight. (In float64: scores of 100 in float32
    carry rounding errors of 1e-5, which two honest ways of computing them do not share.)"""
    q, k, v = qkv(case, batch, heads, n, e, dtype=torch.float64)
    direction = torch.ones(e, dtype=torch.float64) / math.sqrt(e)
    size = math.sqrt(100 * math.sqrt(e))  # q·k/√E = -size²/√E = -100 along the direction, +-noise
    return q * 0.5 + size * direction, k * 0.5 - size * direction, v
