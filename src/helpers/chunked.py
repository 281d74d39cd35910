"""Chunked, exact attention: FlashAttention's online softmax (Dao et al. 2022); chapter 6.

Softmax needs a whole row of scores before it can normalise it -- or so it seems. The online
softmax keeps, per query row, a running maximum ``m``, a running sum ``l = sum exp(s - m)`` and a
running output ``acc = sum exp(s - m) v``; a new chunk of keys that raises the maximum rescales
``l`` and ``acc`` by ``exp(m_old - m_new)``. At the end ``acc / l`` is exactly
``softmax(scale * Q K^T) V``, but only one chunk of scores ever exists.

Two versions sit side by side, as in nanoGPT:

- :func:`online_softmax_attention`, the readable one: all queries at once, one loop over key
  chunks, a dozen lines to study (chapter 6 shows it);
- :func:`chunked_attention`, the tuned one: queries in chunks too (so that only a
  ``chunk_size x chunk_size`` block of scores exists), key chunks above the causal diagonal
  skipped, buffers reused and products accumulated in place without autograd, and gradient
  checkpointing per query chunk with it.

They are tested equal to each other and to :func:`helpers.attention.scaled_dot_product_attention`.

Shape legend (as in :func:`torch.nn.functional.scaled_dot_product_attention`):
    B  batch          H   query heads        H_kv  key/value heads (divides H)
    L  query length   S   key/value length   E     query/key head dim     Ev  value head dim
    c  query rows per chunk                  ck    keys per chunk
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.utils.checkpoint import checkpoint

from .attention import default_scale, repeat_kv
from .checks import check_positive_int, check_qkv, check_scale

__all__ = ["online_softmax_attention", "chunked_attention"]


def _check_chunked_inputs(query: Tensor, key: Tensor, value: Tensor, chunk_size: int, scale: float | None) -> int:
    n_rep = check_qkv(query, key, value)  # H / H_kv
    check_positive_int("chunk_size", chunk_size)
    check_scale("scale", scale)
    return n_rep


def online_softmax_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    *,
    chunk_size: int,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """Exact attention, one chunk of keys at a time, with the online softmax (the readable version).

    For each chunk of ``chunk_size`` keys: compute the scores of every query against the chunk,
    take the new running maximum, rescale the running sum and the running output by
    ``exp(old max - new max)``, and add the chunk's ``exp(scores - new max)`` and its weighted
    values. Only an ``L x chunk_size`` block of scores exists at a time; the result equals
    softmax attention up to float rounding. :func:`chunked_attention` is the same loop, tuned.

    Paper: Dao et al., "FlashAttention: Fast and Memory-Efficient Exact Attention with
    IO-Awareness" (2022); the online softmax of Milakov and Gimelshein (2018). Explained in
    chapter 6.

    Args:
        query: Queries.
        key: Keys (``H_kv`` must divide ``H``).
        value: Values.
        chunk_size: Keys per chunk (any positive size; need not divide ``S``).
        is_causal: Top-left causal mask, as PyTorch's ``is_causal``: query ``i`` sees keys ``j <= i``.
        scale: Score scale; default ``1 / sqrt(E)``.

    Returns:
        The attention output, in the value's dtype (accumulated in at least float32).

    Shape:
        query ``(B, H, L, E)``, key ``(B, H_kv, S, E)``, value ``(B, H_kv, S, Ev)`` ->
        ``(B, H, L, Ev)``.
    """
    n_rep = _check_chunked_inputs(query, key, value, chunk_size, scale)
    key, value = repeat_kv(key, n_rep), repeat_kv(value, n_rep)  # (B, H, S, E), (B, H, S, Ev)
    dtype = torch.promote_types(query.dtype, torch.float32)  # accumulate in float32 (float64 stays)
    q = query.to(dtype) * (default_scale(query.size(-1)) if scale is None else scale)  # (B, H, L, E)
    q_pos = torch.arange(q.size(-2), device=q.device)[:, None]  # (L, 1)

    row_max = q.new_full((*q.shape[:-1], 1), float("-inf"))  # m: (B, H, L, 1)
    row_sum = q.new_zeros((*q.shape[:-1], 1))  # l = sum exp(s - m): (B, H, L, 1)
    out = q.new_zeros((*q.shape[:-1], value.size(-1)))  # acc = sum exp(s - m) v: (B, H, L, Ev)
    for start in range(0, key.size(-2), chunk_size):
        k = key[:, :, start : start + chunk_size].to(dtype)  # (B, H, ck, E)
        v = value[:, :, start : start + chunk_size].to(dtype)  # (B, H, ck, Ev)
        scores = q @ k.transpose(-2, -1)  # (B, H, L, E) x (B, H, E, ck) -> (B, H, L, ck)
        if is_causal:
            k_pos = torch.arange(start, start + k.size(-2), device=q.device)  # (ck,)
            scores = scores.masked_fill(k_pos > q_pos, float("-inf"))  # (B, H, L, ck): no peeking
        new_max = torch.maximum(row_max, scores.amax(dim=-1, keepdim=True))  # (B, H, L, 1)
        rescale = torch.exp(row_max - new_max)  # (B, H, L, 1): old terms were exp(s - m_old)
        p = torch.exp(scores - new_max)  # (B, H, L, ck)
        row_sum = row_sum * rescale + p.sum(dim=-1, keepdim=True)  # (B, H, L, 1)
        out = out * rescale + p @ v  # (B, H, L, ck) x (B, H, ck, Ev) -> (B, H, L, Ev)
        row_max = new_max
    return (out / row_sum).to(value.dtype)  # (B, H, L, Ev): softmax(q k^T) v


def _online_softmax_rows(
    q: Tensor, key_t: Tensor, value: Tensor, q_start: int, chunk_size: int, is_causal: bool
) -> Tensor:
    """Attention of one (pre-scaled) query chunk, looping over key/value chunks.

    Without autograd the score block is written into one reused buffer (``out=``) and the
    output accumulated in place (``baddbmm_``): no fresh score-sized allocation per chunk.
    """
    batch, heads, rows, _ = q.shape
    k_len, v_dim = key_t.shape[-1], value.shape[-1]
    stop = min(k_len, q_start + rows) if is_causal else k_len  # later key chunks are fully masked
    acc_dtype = torch.promote_types(q.dtype, torch.float32)  # float32 for half inputs, float64 stays
    reuse = not torch.is_grad_enabled() and q.dtype == acc_dtype == value.dtype
    buffer = q.new_empty(batch, heads, rows, min(chunk_size, k_len)) if reuse else None  # (B, H, c, ck)
    m = q.new_full((batch, heads, rows, 1), float("-inf"), dtype=acc_dtype)  # running max
    l = q.new_zeros((batch, heads, rows, 1), dtype=acc_dtype)  # running sum of exp
    acc = q.new_zeros((batch, heads, rows, v_dim), dtype=acc_dtype)  # running output
    q_pos = torch.arange(q_start, q_start + rows, device=q.device)[:, None]
    for k0 in range(0, stop, chunk_size):
        k1 = min(k0 + chunk_size, stop)
        if reuse and k1 - k0 == buffer.shape[-1]:
            s = torch.matmul(q, key_t[..., k0:k1], out=buffer)  # (B, H, c, E) x (B, H, E, ck) -> (B, H, c, ck)
        else:
            s = torch.matmul(q, key_t[..., k0:k1]).to(acc_dtype)  # (B, H, c, ck)
        if is_causal and k1 - 1 > q_start:  # the chunk crosses the diagonal
            s.masked_fill_(torch.arange(k0, k1, device=q.device)[None, :] > q_pos, float("-inf"))
        m_new = torch.maximum(m, s.detach().amax(dim=-1, keepdim=True))  # (B, H, c, 1)
        alpha = torch.exp(m - m_new)  # rescales what was accumulated under the old max
        p = s.sub_(m_new).exp_()  # (B, H, c, ck), in place: no second score-sized buffer
        l = l.mul_(alpha).add_(p.sum(dim=-1, keepdim=True))
        v = value[:, :, k0:k1]  # (B, H, ck, Ev)
        if reuse:  # acc += p @ v in place; (B*H, c, ck) x (B*H, ck, Ev)
            acc.mul_(alpha).view(-1, rows, v_dim).baddbmm_(p.view(-1, rows, k1 - k0), v.reshape(-1, k1 - k0, v_dim))
        else:
            acc = acc.mul_(alpha).add_(torch.matmul(p.to(value.dtype), v))  # (B, H, c, ck) x (B, H, ck, Ev)
        m = m_new
    return (acc / l).to(value.dtype)  # (B, H, c, Ev)


def chunked_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    *,
    chunk_size: int,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """Exact attention in chunks with the online softmax: FlashAttention's algorithm in PyTorch.

    The tuned form of :func:`online_softmax_attention`, with the same result. For each chunk of
    ``chunk_size`` queries, loop over chunks of ``chunk_size`` keys and keep, per query row, the
    running maximum ``m``, the running sum ``l = sum exp(s - m)`` and the
    running output ``acc = sum exp(s - m) v``; when a new chunk raises the maximum, the old
    ``l`` and ``acc`` are rescaled by ``exp(m_old - m_new)``. The result ``acc / l`` equals
    ``softmax(scale * Q K^T) V`` exactly (up to float rounding), but only a
    ``chunk_size x chunk_size`` block of scores exists at any time: extra memory
    ``O(chunk_size^2)`` per batch and head instead of ``O(L * S)``. With ``is_causal``
    (top-left aligned, as PyTorch's ``is_causal``: key ``j`` visible to query ``i`` iff
    ``j <= i``) key chunks entirely in the future are skipped, and only chunks crossing the
    diagonal are masked.

    Gradients: ordinary autograd through the chunks, with each query chunk run under
    ``torch.utils.checkpoint`` (``use_reentrant=False``) when a gradient is needed. Forward
    keeps nothing but the inputs of each query chunk; backward recomputes one query chunk at a
    time, so backward memory is ``O(chunk_size * S)`` rather than ``O(L * S)``. (FlashAttention
    proper writes a fused backward that recomputes score blocks from the saved log-sum-exp.)

    Paper: Dao et al., "FlashAttention: Fast and Memory-Efficient Exact Attention with
    IO-Awareness" (2022); Rabe and Staats, "Self-attention Does Not Need O(n^2) Memory" (2021);
    the online softmax of Milakov and Gimelshein (2018). Explained in chapter 6.

    Args:
        query: Queries.
        key: Keys.
        value: Values.
        chunk_size: Queries and keys per chunk (any positive size; need not divide the lengths).
        is_causal: Causal mask, as in PyTorch's ``scaled_dot_product_attention``.
        scale: Score scale; default ``1 / sqrt(E)``.

    Returns:
        The attention output, equal to ``F.scaled_dot_product_attention``.

    Shape:
        query ``(B, H, L, E)``, key ``(B, H_kv, S, E)``, value ``(B, H_kv, S, Ev)`` ->
        ``(B, H, L, Ev)``.
    """
    n_rep = _check_chunked_inputs(query, key, value, chunk_size, scale)
    key, value = repeat_kv(key, n_rep), repeat_kv(value, n_rep)  # (B, H, S, E), (B, H, S, Ev)
    q_all = query * (default_scale(query.size(-1)) if scale is None else scale)  # (B, H, L, E)
    key_t = key.transpose(-1, -2).contiguous()  # (B, H, E, S): contiguous columns for the products
    needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, value))
    outputs = []
    with torch.set_grad_enabled(needs_grad):
        for q0 in range(0, query.shape[2], chunk_size):
            q = q_all[:, :, q0 : q0 + chunk_size]  # (B, H, c, E)
            args = (q, key_t, value, q0, chunk_size, is_causal)
            if needs_grad:
                out = checkpoint(_online_softmax_rows, *args, use_reentrant=False)
            else:
                out = _online_softmax_rows(*args)
            outputs.append(out)
    return torch.cat(outputs, dim=2)  # (B, H, L, Ev)
