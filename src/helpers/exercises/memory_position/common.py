"""What lab 6.3-6.6's exercises share: a tolerance, a seeded layer, RoPE's rotation in float64."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from ... import seeding


def close(a: Tensor, b: Tensor, tol: float = 1e-5) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=max(1e-4, tol), atol=tol))


def split(t: Tensor, heads: int, head_dim: int) -> Tensor:
    batch, length, _ = t.shape
    return t.view(batch, length, heads, head_dim).transpose(1, 2)  # (B, heads, L, E)


def seeded_layer(seed: int, d_model: int, heads: int, kv_heads: int | None = None) -> Any:
    """A :class:`~helpers.multihead.MultiHeadAttention` with weights drawn from ``seed``, the global random state
    left as it was."""
    from helpers.multihead import MultiHeadAttention

    with torch.random.fork_rng(devices=[]):
        seeding.manual_seed(seed)
        return MultiHeadAttention(d_model, heads, num_kv_heads=kv_heads).eval()


def rotate(x: Tensor, angle: Tensor) -> Tensor:
    """Half-split rotation of ``x`` ``(..., L, E)`` by ``angle`` ``(L, E/2)``, in float64: feature ``i`` pairs with
    ``i + E/2``."""
    cos, sin = angle.cos(), angle.sin()  # (L, E/2)
    x1, x2 = x.double().chunk(2, dim=-1)  # (..., L, E/2) each
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def theta(head_dim: int, exponent_step: int = 2) -> Tensor:
    """RoPE's frequencies, base 10000: ``(E/2,)``."""
    return 10000.0 ** (-exponent_step * torch.arange(head_dim // 2, dtype=torch.float64) / head_dim)
