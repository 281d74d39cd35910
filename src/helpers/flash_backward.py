"""Attention whose backward pass recomputes its score blocks: memory linear in n, with gradients.

:func:`helpers.chunked.online_softmax_attention` never holds an ``L x S`` score matrix in the
forward pass, but autograd keeps every block it computed for the backward pass: trained through
it, memory is quadratic again. FlashAttention's answer is a backward pass of its own that keeps
only the inputs, the output ``O`` and one number per query row, the log-sum-exp of its scores
``lse = m + log l``, and recomputes each block of probabilities from them:
``P = exp(scale * Q K^T - lse)``. With ``D = rowsum(dO * O)``, per key block::

    dV = P^T dO        dP = dO V^T        dS = P * (dP - D)        dQ += scale * dS K        dK = scale * dS^T Q

Only one ``L x block_size`` block of scores exists at a time, forward or backward. This is the
readable version (all queries at once, a loop over key blocks, in PyTorch); the real kernels also
tile the queries and keep blocks in on-chip memory.

Paper: Dao et al. (2022), "FlashAttention", section 3.1 and appendix B (the backward pass);
Dao (2023), "FlashAttention-2", section 3.1 (only the log-sum-exp is saved). Explained in chapter 6.

Shape legend (as in :func:`torch.nn.functional.scaled_dot_product_attention`):
    B  batch   H  query heads   H_kv  key/value heads   L  queries   S  keys   E  head size   Ev  value size
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from .attention import default_scale, repeat_kv
from .checks import check_positive_int, check_qkv, check_scale

__all__ = ["recomputing_attention"]


def _block_scores(q: Tensor, k: Tensor, start: int, is_causal: bool) -> Tensor:
    """Scaled scores of all queries against one key block, future keys at ``-inf`` when causal."""
    scores = q @ k.transpose(-2, -1)  # (B, H, L, E) x (B, H, E, ck) -> (B, H, L, ck)
    if is_causal:
        q_pos = torch.arange(q.size(-2), device=q.device)[:, None]  # (L, 1)
        k_pos = torch.arange(start, start + k.size(-2), device=q.device)[None, :]  # (1, ck)
        scores = scores.masked_fill(k_pos > q_pos, float("-inf"))  # (B, H, L, ck)
    return scores


class _RecomputingAttention(torch.autograd.Function):
    """Forward: the online softmax over key blocks; saves ``q``, ``k``, ``v``, ``O`` and ``lse``.
    Backward: each block's probabilities recomputed from ``lse``, never stored."""

    @staticmethod
    def forward(ctx: Any, q: Tensor, k: Tensor, v: Tensor, block_size: int, is_causal: bool) -> Tensor:
        # q is already scaled; q, k, v in the accumulation dtype; k, v already expanded to H heads
        row_max = q.new_full((*q.shape[:-1], 1), float("-inf"))  # m: (B, H, L, 1)
        row_sum = q.new_zeros((*q.shape[:-1], 1))  # l: (B, H, L, 1)
        out = q.new_zeros((*q.shape[:-1], v.size(-1)))  # (B, H, L, Ev)
        for start in range(0, k.size(-2), block_size):
            scores = _block_scores(q, k[:, :, start:start + block_size], start, is_causal)  # (B, H, L, ck)
            new_max = torch.maximum(row_max, scores.amax(dim=-1, keepdim=True))  # (B, H, L, 1)
            rescale = torch.exp(row_max - new_max)
            p = torch.exp(scores - new_max)  # (B, H, L, ck)
            row_sum = row_sum * rescale + p.sum(dim=-1, keepdim=True)
            out = out * rescale + p @ v[:, :, start:start + block_size]  # (B, H, L, ck) x (B, H, ck, Ev)
            row_max = new_max
        out = out / row_sum  # (B, H, L, Ev)
        lse = row_max + torch.log(row_sum)  # (B, H, L, 1): all FlashAttention-2 keeps per row
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.block_size, ctx.is_causal = block_size, is_causal
        return out

    @staticmethod
    def backward(ctx: Any, grad_out: Tensor) -> tuple[Tensor, Tensor, Tensor, None, None]:
        q, k, v, out, lse = ctx.saved_tensors
        grad_out = grad_out.to(out.dtype)
        delta = (grad_out * out).sum(dim=-1, keepdim=True)  # D = rowsum(dO * O): (B, H, L, 1)
        grad_q = torch.zeros_like(q)  # (B, H, L, E)
        grad_k, grad_v = torch.zeros_like(k), torch.zeros_like(v)  # (B, H, S, E), (B, H, S, Ev)
        for start in range(0, k.size(-2), ctx.block_size):
            block = slice(start, start + ctx.block_size)
            k_j, v_j = k[:, :, block], v[:, :, block]  # (B, H, ck, E), (B, H, ck, Ev)
            p = torch.exp(_block_scores(q, k_j, start, ctx.is_causal) - lse)  # recomputed: (B, H, L, ck)
            grad_v[:, :, block] = p.transpose(-2, -1) @ grad_out  # (B, H, ck, L) x (B, H, L, Ev)
            grad_p = grad_out @ v_j.transpose(-2, -1)  # (B, H, L, Ev) x (B, H, Ev, ck) -> (B, H, L, ck)
            grad_s = p * (grad_p - delta)  # softmax's Jacobian, row by row: (B, H, L, ck)
            grad_q += grad_s @ k_j  # (B, H, L, ck) x (B, H, ck, E)
            grad_k[:, :, block] = grad_s.transpose(-2, -1) @ q  # (B, H, ck, L) x (B, H, L, E)
        return grad_q, grad_k, grad_v, None, None


def recomputing_attention(query: Tensor, key: Tensor, value: Tensor, *, block_size: int, is_causal: bool = False,
                          scale: float | None = None) -> Tensor:
    """Exact softmax attention whose forward and backward passes hold one block of scores at a time.

    The forward pass is the online softmax of :func:`helpers.chunked.online_softmax_attention`;
    the backward pass recomputes each block's probabilities from the saved per-row log-sum-exp
    (FlashAttention's recomputation), so that training through it needs memory linear in the
    sequence length. Gradients equal those of dense attention up to float rounding.

    Args:
        query: Queries.
        key: Keys (``H_kv`` must divide ``H``).
        value: Values.
        block_size: Keys per block (any positive size; need not divide ``S``).
        is_causal: Top-left causal mask, as PyTorch's ``is_causal``.
        scale: Score scale; default ``1 / sqrt(E)``.

    Returns:
        The attention output in the value's dtype (computed in at least float32).

    Shape:
        query ``(B, H, L, E)``, key ``(B, H_kv, S, E)``, value ``(B, H_kv, S, Ev)`` -> ``(B, H, L, Ev)``.
    """
    n_rep = check_qkv(query, key, value)  # H / H_kv
    check_positive_int("block_size", block_size)
    check_scale("scale", scale)
    dtype = torch.promote_types(query.dtype, torch.float32)
    q = query.to(dtype) * (default_scale(query.size(-1)) if scale is None else scale)  # (B, H, L, E)
    k = repeat_kv(key, n_rep).to(dtype)  # (B, H, S, E): autograd sums the shared heads' gradients back
    v = repeat_kv(value, n_rep).to(dtype)  # (B, H, S, Ev)
    return _RecomputingAttention.apply(q, k, v, block_size, is_causal).to(value.dtype)
