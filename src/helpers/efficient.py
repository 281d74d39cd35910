"""Efficient attention that is exact on its pattern: local, block-sparse, hierarchical, chunked.

Every function here *computes* only the scores its pattern needs -- band by band, block by
block or chunk by chunk -- and never builds an ``L x S`` score matrix and masks it. That is what
makes "local attention is O(n*w)" and "the n x n matrix is the memory bottleneck" true of this
code, and :class:`TensorMemoryTracker` is how the tests prove it. The kernel approximations
(linear attention, Performer, Linformer) live in :mod:`helpers.efficient_linear`.

Shape legend (as in :func:`torch.nn.functional.scaled_dot_product_attention`):
    B  batch                     H   query heads           H_kv  key/value heads (divides H)
    L  query length              S   key/value length      E     query/key head dim
    Ev value head dim            W   window                c     band/chunk rows
    nb number of blocks          bs  block size            K     key blocks per query block

Explained in chapter 5 (local, sparse, hierarchical) and chapter 6 (memory: chunked attention,
gradient checkpointing, the KV cache).
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.checkpoint import checkpoint

__all__ = [
    "sliding_window_attention",
    "block_sparse_attention",
    "block_layout_to_mask",
    "bigbird_layout",
    "bigbird_attention",
    "hierarchical_attention",
    "chunked_attention",
    "Checkpointed",
    "checkpointed",
    "kv_cache_bytes",
    "TensorMemoryTracker",
]


# ----------------------------------------------------------------------------------------------
# Shared checks and the masked softmax
# ----------------------------------------------------------------------------------------------
def _check_positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value}")


def _check_qkv(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """Validate (B, H, L, E), (B, H_kv, S, E), (B, H_kv, S, Ev); return key/value with H heads."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{name} must have shape (B, H, len, dim), got {tuple(t.shape)}")
        if not t.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got {t.dtype}")
    (b, h, _, e), (bk, hk, s, ek), (bv, hv, sv, _) = query.shape, key.shape, value.shape
    if not (bk == bv == b and hv == hk and sv == s and ek == e):
        raise ValueError(
            "expected query (B, H, L, E), key (B, H_kv, S, E), value (B, H_kv, S, Ev), got "
            f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
        )
    if hk == 0 or h % hk != 0:
        raise ValueError(f"key/value heads H_kv={hk} must divide query heads H={h}")
    if hk != h:  # grouped-query attention: share each key/value head by h // hk query heads
        key = key.repeat_interleave(h // hk, dim=1)  # (B, H, S, E)
        value = value.repeat_interleave(h // hk, dim=1)  # (B, H, S, Ev)
    return key, value


def _scale(query: Tensor, scale: float | None) -> float:
    return 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)


def _softmax_dtype(dtype: torch.dtype) -> torch.dtype:
    """float32 for half precision (and float32), float64 kept: never softmax in less than float32."""
    return torch.promote_types(dtype, torch.float32)


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """Softmax over the last dim in (at least) float32; ``mask`` True = keep; empty rows give zeros.

    A row with no allowed key returns all-zero weights (so a zero output, as
    :func:`torch.nn.functional.scaled_dot_product_attention` does) and no NaN in the gradient.
    """
    scores = scores.to(_softmax_dtype(scores.dtype))
    if mask is None:
        return scores.softmax(dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    row_max = scores.detach().amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    weights = (scores - row_max).exp()
    total = weights.sum(dim=-1, keepdim=True)
    return weights / total.clamp_min(torch.finfo(scores.dtype).tiny)


# ----------------------------------------------------------------------------------------------
# Sliding-window (local) attention
# ----------------------------------------------------------------------------------------------
def sliding_window_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    window: int,
    *,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """Local attention: query ``i`` sees only keys ``j`` with ``|i - j| < window``.

    The window, precisely (positions are absolute indices, top-left aligned when ``L != S``):

    - ``is_causal=False``: key ``j`` is visible to query ``i`` iff ``i - window < j < i + window``
      (``2 * window - 1`` keys);
    - ``is_causal=True``: iff ``i - window < j <= i`` (the last ``window`` keys, itself included).

    So ``window=1`` attends only to itself and ``window >= max(L, S)`` is full (causal)
    attention. A query with no visible key (possible when ``L > S``) outputs zeros.

    The band is computed block by block: queries are cut into blocks of ``c`` rows and each block
    is multiplied only with the ``c + 2 * (window - 1)`` keys its rows can see (a strided
    ``unfold`` view of the padded keys), so time and memory are ``O(L * (c + window))`` with
    ``c = min(max(window, 32), L)`` -- linear in the length, never ``L x S``.

    Paper: Beltagy et al., "Longformer: The Long-Document Transformer" (2020); the band is the
    local pattern of Child et al., "Generating Long Sequences with Sparse Transformers" (2019).
    Explained in chapter 5.

    Args:
        query: Queries.
        key: Keys (``H_kv`` must divide ``H``).
        value: Values.
        window: How far a query sees, ``>= 1`` (see above).
        is_causal: Also hide keys after the query (``j > i``).
        scale: Score scale; default ``1 / sqrt(E)``.

    Returns:
        The attention output, equal to dense attention under the band mask.

    Shape:
        query ``(B, H, L, E)``, key ``(B, H_kv, S, E)``, value ``(B, H_kv, S, Ev)`` ->
        ``(B, H, L, Ev)``.
    """
    key, value = _check_qkv(query, key, value)
    _check_positive_int("window", window)
    batch, heads, q_len, _ = query.shape
    k_len, v_dim = key.shape[2], value.shape[-1]
    rows = min(max(window, 32), q_len)  # c: query rows per band block
    num_blocks = -(-q_len // rows)  # nb
    # Keys a block [a, a + c) may need: [a - left, a + c + right); trimmed where no key exists.
    left = min(window - 1, (num_blocks - 1) * rows)
    right = 0 if is_causal else max(0, min(window - 1, k_len - rows))
    span = rows + left + right
    needed = (num_blocks - 1) * rows + span  # padded key length the unfold reads
    q = F.pad(query * _scale(query, scale), (0, 0, 0, num_blocks * rows - q_len))  # (B, H, nb*c, E)
    q = q.view(batch, heads, num_blocks, rows, -1)  # (B, H, nb, c, E)
    kv_pad = (left, needed - left - k_len)  # negative right padding crops unused keys
    k = F.pad(key, (0, 0) + kv_pad).unfold(2, span, rows)  # (B, H, nb, E, span) view
    v = F.pad(value, (0, 0) + kv_pad).unfold(2, span, rows)  # (B, H, nb, Ev, span) view
    scores = torch.matmul(q, k)  # (B, H, nb, c, E) x (B, H, nb, E, span) -> (B, H, nb, c, span)

    # Which (row, key) pairs are in the band: j - i = t - r - left for row r, key slot t.
    offset = torch.arange(span, device=query.device)[None, :] - torch.arange(rows, device=query.device)[:, None] - left
    band = (offset > -window) & ((offset <= 0) if is_causal else (offset < window))  # (c, span)
    key_pos = torch.arange(num_blocks, device=query.device)[:, None] * rows - left + torch.arange(span, device=query.device)
    exists = (key_pos >= 0) & (key_pos < k_len)  # (nb, span): not padding
    weights = _masked_softmax(scores, band & exists[:, None, :])  # (B, H, nb, c, span)
    out = torch.matmul(weights.to(value.dtype), v.transpose(-1, -2))  # (B, H, nb, c, span) x (B, H, nb, span, Ev)
    return out.reshape(batch, heads, num_blocks * rows, v_dim)[:, :, :q_len]  # (B, H, L, Ev)


# ----------------------------------------------------------------------------------------------
# Block-sparse attention and BigBird
# ----------------------------------------------------------------------------------------------
def _check_layout(layout: Tensor, block_size: int, q_len: int, k_len: int) -> None:
    if not isinstance(layout, Tensor) or layout.dtype != torch.bool or layout.dim() != 2:
        got = f"{layout.dtype} {tuple(layout.shape)}" if isinstance(layout, Tensor) else type(layout).__name__
        raise TypeError(f"layout must be a 2-D bool tensor (num_q_blocks, num_k_blocks), got {got}")
    _check_positive_int("block_size", block_size)
    if q_len % block_size or k_len % block_size:
        raise ValueError(f"block_size={block_size} must divide L={q_len} and S={k_len}")
    if tuple(layout.shape) != (q_len // block_size, k_len // block_size):
        raise ValueError(
            f"layout must have shape (L // block_size, S // block_size) = "
            f"{(q_len // block_size, k_len // block_size)}, got {tuple(layout.shape)}"
        )


def block_layout_to_mask(layout: Tensor, block_size: int) -> Tensor:
    """The dense ``(L, S)`` boolean mask equivalent to a block layout (for tests and figures).

    Args:
        layout: ``True`` where query block ``a`` attends to key block ``b``.
        block_size: Tokens per block.

    Returns:
        ``mask[i, j] = layout[i // block_size, j // block_size]``.

    Shape:
        layout ``(L / bs, S / bs)`` -> ``(L, S)``. Explained in chapter 5.
    """
    _check_layout(layout, block_size, layout.shape[0] * block_size, layout.shape[1] * block_size)
    return layout.repeat_interleave(block_size, 0).repeat_interleave(block_size, 1)  # (L, S)


def block_sparse_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    layout: Tensor,
    block_size: int,
    *,
    scale: float | None = None,
) -> Tensor:
    """Attention over a block pattern, computed block by block.

    Query block ``a`` (tokens ``a*bs .. a*bs + bs - 1``) attends to every token of the key blocks
    ``b`` with ``layout[a, b]`` and to nothing else. For each group of query blocks that attend
    to the same number ``K`` of key blocks, those key blocks are gathered (``index_select``) and
    scored with one batched product: cost ``O(nnz(layout) * bs^2 * E)`` in time and
    ``O(nnz(layout) * bs * (bs + E + Ev))`` in memory (scores plus gathered keys and values).
    A query block with an empty row outputs zeros.

    Paper: Child et al., "Generating Long Sequences with Sparse Transformers" (2019); the
    blocked form of Zaheer et al., "Big Bird: Transformers for Longer Sequences" (2020).
    Explained in chapter 5.

    Args:
        query: Queries.
        key: Keys.
        value: Values.
        layout: Bool block layout, ``True`` = query block may attend to key block.
        block_size: Tokens per block; must divide ``L`` and ``S``.
        scale: Score scale; default ``1 / sqrt(E)``.

    Returns:
        Equal to dense attention with ``block_layout_to_mask(layout, block_size)``.

    Shape:
        query ``(B, H, L, E)``, key ``(B, H_kv, S, E)``, value ``(B, H_kv, S, Ev)``,
        layout ``(L / bs, S / bs)`` -> ``(B, H, L, Ev)``.
    """
    key, value = _check_qkv(query, key, value)
    batch, heads, q_len, e_dim = query.shape
    k_len, v_dim = key.shape[2], value.shape[-1]
    _check_layout(layout, block_size, q_len, k_len)
    layout = layout.to(query.device)
    q = (query * _scale(query, scale)).view(batch, heads, -1, block_size, e_dim)  # (B, H, nb_q, bs, E)
    k = key.reshape(batch, heads, -1, block_size, e_dim)  # (B, H, nb_k, bs, E)
    v = value.reshape(batch, heads, -1, block_size, v_dim)  # (B, H, nb_k, bs, Ev)
    out = query.new_zeros(batch, heads, q.shape[2], block_size, v_dim, dtype=value.dtype)
    counts = layout.sum(dim=1)  # key blocks per query block
    for count in counts.unique().tolist():
        if count == 0:
            continue  # no key: the output stays zero
        rows = (counts == count).nonzero().squeeze(1)  # (G,) query blocks with `count` key blocks
        cols = layout[rows].nonzero()[:, 1]  # (G * K,) their key blocks, row by row
        k_g = k.index_select(2, cols).view(batch, heads, len(rows), count * block_size, e_dim)  # (B, H, G, K*bs, E)
        v_g = v.index_select(2, cols).view(batch, heads, len(rows), count * block_size, v_dim)  # (B, H, G, K*bs, Ev)
        scores = torch.matmul(q.index_select(2, rows), k_g.transpose(-1, -2))  # (B, H, G, bs, K*bs)
        weights = _masked_softmax(scores, None).to(value.dtype)
        out = out.index_copy(2, rows, torch.matmul(weights, v_g))  # (B, H, G, bs, Ev) into out
    return out.view(batch, heads, q_len, v_dim)  # (B, H, L, Ev)


def bigbird_layout(
    num_q_blocks: int,
    num_k_blocks: int,
    *,
    num_global: int,
    window_blocks: int,
    num_random: int,
    generator: torch.Generator | None = None,
) -> Tensor:
    """The BigBird block layout: global + sliding window + random blocks.

    - global: the first ``num_global`` blocks attend everywhere and are attended by everyone;
    - window: query block ``a`` attends to key blocks ``b`` with ``|a - b| <= window_blocks // 2``
      (``window_blocks`` odd: 3 means the block and one neighbour on each side);
    - random: every non-global query block also attends to ``num_random`` key blocks drawn
      uniformly (without replacement) among those the first two parts left out (fewer if fewer
      remain): one ``torch.randperm`` per query block, in order, from ``generator``.

    The same pattern, drawn the same way, as :func:`helpers.masks.bigbird_mask` (which returns
    the token-level mask): with identically seeded generators the two agree.

    Paper: Zaheer et al., "Big Bird: Transformers for Longer Sequences" (2020). Explained in
    chapter 5.

    Args:
        num_q_blocks: Query blocks.
        num_k_blocks: Key blocks.
        num_global: Global blocks (``>= 0``).
        window_blocks: Blocks in the sliding window (odd, ``>= 1``).
        num_random: Random key blocks per query block (``>= 0``).
        generator: Random generator, for a reproducible pattern.

    Returns:
        Bool block layout, ``True`` = may attend.

    Shape:
        ``(num_q_blocks, num_k_blocks)``.
    """
    _check_positive_int("num_q_blocks", num_q_blocks)
    _check_positive_int("num_k_blocks", num_k_blocks)
    _check_positive_int("window_blocks", window_blocks)
    if window_blocks % 2 == 0:
        raise ValueError(f"window_blocks must be odd (the block plus as many on each side), got {window_blocks}")
    for name, val in (("num_global", num_global), ("num_random", num_random)):
        if isinstance(val, bool) or not isinstance(val, int) or val < 0:
            raise ValueError(f"{name} must be an int >= 0, got {val!r}")
    q_block = torch.arange(num_q_blocks)[:, None]
    k_block = torch.arange(num_k_blocks)[None, :]
    layout = (q_block - k_block).abs() <= window_blocks // 2  # (nb_q, nb_k) window
    layout |= (q_block < num_global) | (k_block < num_global)  # global rows and columns
    for row in range(num_global, num_q_blocks):  # random key blocks of each non-global query block
        unseen = (~layout[row]).nonzero().squeeze(-1)  # (n_unseen,)
        draw = torch.randperm(unseen.numel(), generator=generator)[:num_random]
        layout[row, unseen[draw]] = True
    return layout


def bigbird_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    *,
    block_size: int,
    num_global: int,
    num_random: int,
    window_blocks: int,
    generator: torch.Generator | None = None,
    scale: float | None = None,
) -> Tensor:
    """BigBird attention: :func:`block_sparse_attention` over :func:`bigbird_layout`.

    Each non-global query block sees ``num_global + window_blocks + num_random`` key blocks, so
    time and memory grow linearly in the length; the ``num_global`` global query blocks see all
    ``S`` keys (also linear). To get the same pattern as a dense mask, call
    ``block_layout_to_mask(bigbird_layout(..., generator=g), block_size)`` with an identically
    seeded generator.

    Paper: Zaheer et al., "Big Bird: Transformers for Longer Sequences" (2020). Explained in
    chapter 5.

    Args:
        query: Queries.
        key: Keys.
        value: Values.
        block_size: Tokens per block; must divide ``L`` and ``S``.
        num_global: Global blocks.
        num_random: Random key blocks per query block.
        window_blocks: Blocks in the sliding window (odd).
        generator: Random generator for the random blocks.
        scale: Score scale; default ``1 / sqrt(E)``.

    Returns:
        The attention output.

    Shape:
        query ``(B, H, L, E)``, key ``(B, H_kv, S, E)``, value ``(B, H_kv, S, Ev)`` ->
        ``(B, H, L, Ev)``.
    """
    _check_positive_int("block_size", block_size)
    q_len, k_len = query.shape[-2], key.shape[-2]
    if q_len % block_size or k_len % block_size:
        raise ValueError(f"block_size={block_size} must divide L={q_len} and S={k_len}")
    layout = bigbird_layout(
        q_len // block_size,
        k_len // block_size,
        num_global=num_global,
        window_blocks=window_blocks,
        num_random=num_random,
        generator=generator,
    )
    return block_sparse_attention(query, key, value, layout, block_size, scale=scale)


# ----------------------------------------------------------------------------------------------
# Hierarchical (two-level) attention
# ----------------------------------------------------------------------------------------------
def hierarchical_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    *,
    block_size: int,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """Two-level attention: fine within a block, coarse (mean-pooled) between blocks.

    Exactly what it computes, for self-attention (``L == S``) cut into blocks of ``bs`` tokens:
    query ``i`` in block ``a`` scores

    - every key ``j`` of its own block ``a`` (fine): ``s_ij = scale * q_i . k_j``;
    - the summary of every *other* block ``b`` (coarse): ``s_ib = scale * q_i . mean(k in b)``;

    and takes **one** softmax over those ``bs + nb - 1`` scores; the output is the same weighted
    sum of the fine values and the block-mean values ``mean(v in b)``. With ``is_causal`` the fine
    part keeps ``j <= i`` and the coarse part keeps only earlier blocks ``b < a``. Far context
    is thus seen at block resolution. Cost ``O(L * (bs + L / bs))``: ``O(L^1.5)`` at
    ``bs ~ sqrt(L)``; with one block it is exactly full attention.

    Paper: a two-level simplification of Zhu and Soricut, "H-Transformer-1D: Fast
    One-Dimensional Hierarchical Attention for Sequences" (2021). Explained in chapter 5.

    Args:
        query: Queries.
        key: Keys.
        value: Values.
        block_size: Tokens per block; must divide the length.
        is_causal: Hide the future (see above).
        scale: Score scale; default ``1 / sqrt(E)``.

    Returns:
        The attention output.

    Shape:
        query ``(B, H, L, E)``, key ``(B, H_kv, L, E)``, value ``(B, H_kv, L, Ev)`` ->
        ``(B, H, L, Ev)``.
    """
    key, value = _check_qkv(query, key, value)
    _check_positive_int("block_size", block_size)
    batch, heads, q_len, e_dim = query.shape
    k_len, v_dim = key.shape[2], value.shape[-1]
    if q_len != k_len:
        raise ValueError(f"hierarchical_attention is self-attention: needs L == S, got L={q_len}, S={k_len}")
    if q_len % block_size:
        raise ValueError(f"block_size={block_size} must divide the length L={q_len}")
    nb = q_len // block_size
    q = (query * _scale(query, scale)).view(batch, heads, nb, block_size, e_dim)  # (B, H, nb, bs, E)
    k = key.reshape(batch, heads, nb, block_size, e_dim)  # (B, H, nb, bs, E)
    v = value.reshape(batch, heads, nb, block_size, v_dim)  # (B, H, nb, bs, Ev)
    k_mean, v_mean = k.mean(dim=3), v.mean(dim=3)  # (B, H, nb, E), (B, H, nb, Ev)
    fine = torch.matmul(q, k.transpose(-1, -2))  # (B, H, nb, bs, bs)
    coarse = torch.matmul(q, k_mean[:, :, None].transpose(-1, -2))  # (B, H, nb, bs, E) x (B, H, 1, E, nb) -> (B, H, nb, bs, nb)
    pos = torch.arange(block_size, device=query.device)
    blk = torch.arange(nb, device=query.device)
    fine_ok = (pos[None, :] <= pos[:, None]) if is_causal else torch.ones(block_size, block_size, dtype=torch.bool, device=query.device)
    coarse_ok = (blk[None, :] < blk[:, None]) if is_causal else (blk[None, :] != blk[:, None])  # (nb_q, nb_k)
    mask = torch.cat(
        [fine_ok.expand(nb, block_size, block_size), coarse_ok[:, None, :].expand(nb, block_size, nb)], dim=-1
    )  # (nb, bs, bs + nb)
    weights = _masked_softmax(torch.cat([fine, coarse], dim=-1), mask).to(value.dtype)  # (B, H, nb, bs, bs + nb)
    out = torch.matmul(weights[..., :block_size], v)  # (B, H, nb, bs, bs) x (B, H, nb, bs, Ev)
    out = out + torch.matmul(weights[..., block_size:], v_mean[:, :, None])  # (B, H, nb, bs, nb) x (B, H, 1, nb, Ev)
    return out.view(batch, heads, q_len, v_dim)  # (B, H, L, Ev)


# ----------------------------------------------------------------------------------------------
# Chunked attention with the online softmax (the FlashAttention algorithm, in PyTorch)
# ----------------------------------------------------------------------------------------------
def _online_softmax_rows(q: Tensor, key_t: Tensor, value: Tensor, q_start: int, chunk_size: int, is_causal: bool) -> Tensor:
    """Attention of one (pre-scaled) query chunk, looping over key/value chunks.

    Without autograd the score block is written into one reused buffer (``out=``) and the
    output accumulated in place (``baddbmm_``): no fresh score-sized allocation per chunk.
    """
    batch, heads, rows, _ = q.shape
    k_len, v_dim = key_t.shape[-1], value.shape[-1]
    stop = min(k_len, q_start + rows) if is_causal else k_len  # later key chunks are fully masked
    acc_dtype = _softmax_dtype(q.dtype)  # float32 for half inputs
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

    For each chunk of ``chunk_size`` queries, loop over chunks of ``chunk_size`` keys and keep,
    per query row, the running maximum ``m``, the running sum ``l = sum exp(s - m)`` and the
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
    key, value = _check_qkv(query, key, value)
    _check_positive_int("chunk_size", chunk_size)
    q_all = query * _scale(query, scale)  # (B, H, L, E)
    key_t = key.transpose(-1, -2).contiguous()  # (B, H, E, S): contiguous columns for the products
    needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, value))
    outputs = []
    with torch.set_grad_enabled(needs_grad):
        for q0 in range(0, query.shape[2], chunk_size):
            q = q_all[:, :, q0 : q0 + chunk_size]  # (B, H, c, E)
            args = (q, key_t, value, q0, chunk_size, is_causal)
            out = checkpoint(_online_softmax_rows, *args, use_reentrant=False) if needs_grad else _online_softmax_rows(*args)
            outputs.append(out)
    return torch.cat(outputs, dim=2)  # (B, H, L, Ev)


# ----------------------------------------------------------------------------------------------
# Memory: gradient checkpointing, the KV cache, and measuring what is allocated
# ----------------------------------------------------------------------------------------------
class Checkpointed(nn.Module):
    """Runs ``module`` under ``torch.utils.checkpoint`` (``use_reentrant=False``) in training.

    Forward keeps only the module's inputs; backward runs the forward again to rebuild the
    activations it needs. Memory for time: about one extra forward per backward. Without
    gradients (``torch.no_grad`` or inputs that need none) it is a plain call.

    Paper: Chen et al., "Training Deep Nets with Sublinear Memory Cost" (2016). Explained in
    chapter 6.

    Args:
        module: The module to wrap (its parameters stay its own).

    Shape:
        Whatever ``module`` takes and returns.
    """

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        if not isinstance(module, nn.Module):
            raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
        self.module = module

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if torch.is_grad_enabled():
            return checkpoint(self.module, *args, use_reentrant=False, **kwargs)
        return self.module(*args, **kwargs)


def checkpointed(module: nn.Module) -> Checkpointed:
    """Wrap ``module`` so that its forward runs under gradient checkpointing.

    Args:
        module: Any module, e.g. a Transformer block.

    Returns:
        A :class:`Checkpointed` wrapper with the same inputs and outputs. Explained in chapter 6.
    """
    return Checkpointed(module)


def kv_cache_bytes(
    num_layers: int, num_kv_heads: int, head_dim: int, seq_len: int, batch: int, dtype: torch.dtype
) -> int:
    """Bytes held by a decoder's KV cache: ``2 * layers * batch * kv_heads * seq_len * head_dim * size``.

    The 2 counts keys and values. Multi-query and grouped-query attention shrink it through
    ``num_kv_heads``. Paper: Shazeer, "Fast Transformer Decoding: One Write-Head is All You
    Need" (2019); Pope et al., "Efficiently Scaling Transformer Inference" (2022). Explained in
    chapter 6.

    Args:
        num_layers: Decoder layers.
        num_kv_heads: Key/value heads per layer.
        head_dim: Dimension per head.
        seq_len: Cached positions.
        batch: Sequences in the batch.
        dtype: Element type of the cache, e.g. ``torch.float16``.

    Returns:
        The size in bytes.
    """
    for name, val in (("num_layers", num_layers), ("num_kv_heads", num_kv_heads), ("head_dim", head_dim),
                      ("seq_len", seq_len), ("batch", batch)):
        _check_positive_int(name, val)
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__} {dtype!r}")
    return 2 * num_layers * batch * num_kv_heads * seq_len * head_dim * dtype.itemsize


class TensorMemoryTracker(TorchDispatchMode):
    """Records every tensor that ATen allocates while active: its size, and live bytes over time.

    Used as a context manager. Each op's outputs whose storage is new (not a view of, or an
    in-place result on, an input) are counted; a storage stops counting when it is freed
    (a weak reference to it fires). What it sees are tensors at the dispatcher level: scratch
    buffers that a fused kernel allocates inside itself are invisible to it.

    Attributes:
        max_numel: Elements of the largest tensor allocated.
        max_shape: Shape of that tensor.
        current_bytes: Bytes of tracked storages still alive.
        peak_bytes: The highest ``current_bytes`` seen.

    Example:
        >>> with TensorMemoryTracker() as tracker:
        ...     out = chunked_attention(q, k, v, chunk_size=256)
        >>> tracker.max_numel < q.shape[2] * k.shape[2]

    Explained in chapter 6.
    """

    def __init__(self) -> None:
        super().__init__()
        self.max_numel = 0
        self.max_shape: tuple[int, ...] = ()
        self.current_bytes = 0
        self.peak_bytes = 0
        self._live: dict[int, int] = {}

    def _free(self, key: int) -> None:
        self.current_bytes -= self._live.pop(key, 0)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        inputs = {t.untyped_storage()._cdata for t in tree_flatten((args, kwargs))[0] if isinstance(t, Tensor)}
        for t in tree_flatten(out)[0]:
            if not isinstance(t, Tensor):
                continue
            if t.numel() > self.max_numel:
                self.max_numel, self.max_shape = t.numel(), tuple(t.shape)
            storage = t.untyped_storage()
            key = storage._cdata
            if key in inputs or key in self._live:
                continue
            self._live[key] = storage.nbytes()
            self.current_bytes += storage.nbytes()
            self.peak_bytes = max(self.peak_bytes, self.current_bytes)
            weakref.finalize(storage, self._free, key)
        return out
