"""Efficient attention that is exact on its pattern: local, block-sparse, BigBird, hierarchical.

Every function here *computes* only the scores its pattern needs -- band by band or block by
block -- and never builds an ``L x S`` score matrix and masks it. That is what makes "local
attention is O(n*w)" true of this code, and :class:`helpers.memory.TensorMemoryTracker` is how
the tests prove it. Chunked exact attention (the online softmax of FlashAttention) lives in
:mod:`helpers.chunked`, the kernel approximations (linear attention, Performer, Linformer) in
:mod:`helpers.efficient_linear`, the memory tools in :mod:`helpers.memory`.

Shape legend (as in :func:`torch.nn.functional.scaled_dot_product_attention`):
    B  batch                     H   query heads           H_kv  key/value heads (divides H)
    L  query length              S   key/value length      E     query/key head dim
    Ev value head dim            W   window                c     band/chunk rows
    nb number of blocks          bs  block size            K     key blocks per query block

Explained in chapter 5 (local, sparse, hierarchical).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .attention import default_scale, masked_softmax, repeat_kv
from .checks import check_int, check_positive_int, check_qkv, check_scale

__all__ = [
    "sliding_window_attention",
    "block_sparse_attention",
    "block_layout_to_mask",
    "bigbird_layout",
    "bigbird_attention",
    "hierarchical_attention",
]


def _scale_factor(query: Tensor, scale: float | None) -> float:
    """``scale`` after checking it, or the default ``1 / sqrt(E)``."""
    check_scale("scale", scale)
    return default_scale(query.size(-1)) if scale is None else scale


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
    n_rep = check_qkv(query, key, value)  # H / H_kv
    key, value = repeat_kv(key, n_rep), repeat_kv(value, n_rep)  # (B, H, S, E), (B, H, S, Ev)
    check_positive_int("window", window)
    batch, heads, q_len, _ = query.shape
    k_len, v_dim = key.shape[2], value.shape[-1]
    rows = min(max(window, 32), q_len)  # c: query rows per band block
    num_blocks = -(-q_len // rows)  # nb
    # Keys a block [a, a + c) may need: [a - left, a + c + right); trimmed where no key exists.
    left = min(window - 1, (num_blocks - 1) * rows)
    right = 0 if is_causal else max(0, min(window - 1, k_len - rows))
    span = rows + left + right
    needed = (num_blocks - 1) * rows + span  # padded key length the unfold reads
    q = F.pad(query * _scale_factor(query, scale), (0, 0, 0, num_blocks * rows - q_len))  # (B, H, nb*c, E)
    q = q.view(batch, heads, num_blocks, rows, -1)  # (B, H, nb, c, E)
    kv_pad = (left, needed - left - k_len)  # negative right padding crops unused keys
    k = F.pad(key, (0, 0) + kv_pad).unfold(2, span, rows)  # (B, H, nb, E, span) view
    v = F.pad(value, (0, 0) + kv_pad).unfold(2, span, rows)  # (B, H, nb, Ev, span) view
    scores = torch.matmul(q, k)  # (B, H, nb, c, E) x (B, H, nb, E, span) -> (B, H, nb, c, span)

    # Which (row, key) pairs are in the band: j - i = t - r - left for row r, key slot t.
    offset = torch.arange(span, device=query.device)[None, :] - torch.arange(rows, device=query.device)[:, None] - left
    band = (offset > -window) & ((offset <= 0) if is_causal else (offset < window))  # (c, span)
    block_start = torch.arange(num_blocks, device=query.device)[:, None] * rows - left  # (nb, 1)
    key_pos = block_start + torch.arange(span, device=query.device)  # (nb, span)
    exists = (key_pos >= 0) & (key_pos < k_len)  # (nb, span): not padding
    weights = masked_softmax(scores, band & exists[:, None, :])  # (B, H, nb, c, span)
    out = torch.matmul(weights.to(value.dtype), v.transpose(-1, -2))  # (B, H, nb, c, span) x (B, H, nb, span, Ev)
    return out.reshape(batch, heads, num_blocks * rows, v_dim)[:, :, :q_len]  # (B, H, L, Ev)


# ----------------------------------------------------------------------------------------------
# Block-sparse attention and BigBird
# ----------------------------------------------------------------------------------------------
def _check_layout(layout: Tensor, block_size: int, q_len: int, k_len: int) -> None:
    if not isinstance(layout, Tensor) or layout.dtype != torch.bool or layout.dim() != 2:
        got = f"{layout.dtype} {tuple(layout.shape)}" if isinstance(layout, Tensor) else type(layout).__name__
        raise TypeError(f"layout must be a 2-D bool tensor (num_q_blocks, num_k_blocks), got {got}")
    check_positive_int("block_size", block_size)
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
    n_rep = check_qkv(query, key, value)  # H / H_kv
    key, value = repeat_kv(key, n_rep), repeat_kv(value, n_rep)  # (B, H, S, E), (B, H, S, Ev)
    batch, heads, q_len, e_dim = query.shape
    k_len, v_dim = key.shape[2], value.shape[-1]
    _check_layout(layout, block_size, q_len, k_len)
    layout = layout.cpu()  # which blocks to gather is decided on the CPU (data-dependent), then moved
    q = (query * _scale_factor(query, scale)).view(batch, heads, -1, block_size, e_dim)  # (B, H, nb_q, bs, E)
    k = key.reshape(batch, heads, -1, block_size, e_dim)  # (B, H, nb_k, bs, E)
    v = value.reshape(batch, heads, -1, block_size, v_dim)  # (B, H, nb_k, bs, Ev)
    out = query.new_zeros(batch, heads, q.shape[2], block_size, v_dim, dtype=value.dtype)
    counts = layout.sum(dim=1)  # key blocks per query block
    for count in counts.unique().tolist():
        if count == 0:
            continue  # no key: the output stays zero
        rows = (counts == count).nonzero().squeeze(1)  # (G,) query blocks with `count` key blocks
        cols = layout[rows].nonzero()[:, 1].to(query.device)  # (G * K,) their key blocks, row by row
        rows = rows.to(query.device)
        k_g = k.index_select(2, cols).view(batch, heads, len(rows), count * block_size, e_dim)  # (B, H, G, K*bs, E)
        v_g = v.index_select(2, cols).view(batch, heads, len(rows), count * block_size, v_dim)  # (B, H, G, K*bs, Ev)
        scores = torch.matmul(q.index_select(2, rows), k_g.transpose(-1, -2))  # (B, H, G, bs, K*bs)
        weights = masked_softmax(scores, None).to(value.dtype)
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
    device: torch.device | str | None = None,
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
        generator: Random generator, for a reproducible pattern, on any device: the blocks are
            drawn on the generator's device (``None``: the global CPU generator).
        device: Device of the layout (it is built on the CPU, a loop over tiny block rows, and
            moved there).

    Returns:
        Bool block layout, ``True`` = may attend.

    Shape:
        ``(num_q_blocks, num_k_blocks)``.
    """
    check_positive_int("num_q_blocks", num_q_blocks)
    check_positive_int("num_k_blocks", num_k_blocks)
    check_positive_int("window_blocks", window_blocks)
    if window_blocks % 2 == 0:
        raise ValueError(f"window_blocks must be odd (the block plus as many on each side), got {window_blocks}")
    check_int("num_global", num_global, 0)
    check_int("num_random", num_random, 0)
    q_block = torch.arange(num_q_blocks)[:, None]  # (nb_q, 1)
    k_block = torch.arange(num_k_blocks)[None, :]  # (1, nb_k)
    layout = (q_block - k_block).abs() <= window_blocks // 2  # (nb_q, nb_k) window
    layout |= (q_block < num_global) | (k_block < num_global)  # global rows and columns
    draw_device = None if generator is None else generator.device  # a generator draws on its own device
    for row in range(num_global, num_q_blocks):  # random key blocks of each non-global query block
        unseen = (~layout[row]).nonzero().squeeze(-1)  # (n_unseen,)
        draw = torch.randperm(unseen.numel(), generator=generator, device=draw_device)[:num_random]
        layout[row, unseen[draw.cpu()]] = True
    return layout.to(device)


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
    check_positive_int("block_size", block_size)
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
    n_rep = check_qkv(query, key, value)  # H / H_kv
    key, value = repeat_kv(key, n_rep), repeat_kv(value, n_rep)  # (B, H, S, E), (B, H, S, Ev)
    check_positive_int("block_size", block_size)
    batch, heads, q_len, e_dim = query.shape
    k_len, v_dim = key.shape[2], value.shape[-1]
    if q_len != k_len:
        raise ValueError(f"hierarchical_attention is self-attention: needs L == S, got L={q_len}, S={k_len}")
    if q_len % block_size:
        raise ValueError(f"block_size={block_size} must divide the length L={q_len}")
    nb = q_len // block_size
    q = (query * _scale_factor(query, scale)).view(batch, heads, nb, block_size, e_dim)  # (B, H, nb, bs, E)
    k = key.reshape(batch, heads, nb, block_size, e_dim)  # (B, H, nb, bs, E)
    v = value.reshape(batch, heads, nb, block_size, v_dim)  # (B, H, nb, bs, Ev)
    k_mean, v_mean = k.mean(dim=3), v.mean(dim=3)  # (B, H, nb, E), (B, H, nb, Ev)
    fine = torch.matmul(q, k.transpose(-1, -2))  # (B, H, nb, bs, bs)
    # (B, H, nb, bs, E) x (B, H, 1, E, nb) -> (B, H, nb, bs, nb)
    coarse = torch.matmul(q, k_mean[:, :, None].transpose(-1, -2))
    pos = torch.arange(block_size, device=query.device)
    blk = torch.arange(nb, device=query.device)
    if is_causal:
        fine_ok = pos[None, :] <= pos[:, None]  # (bs, bs)
    else:
        fine_ok = torch.ones(block_size, block_size, dtype=torch.bool, device=query.device)
    coarse_ok = (blk[None, :] < blk[:, None]) if is_causal else (blk[None, :] != blk[:, None])  # (nb_q, nb_k)
    mask = torch.cat(
        [fine_ok.expand(nb, block_size, block_size), coarse_ok[:, None, :].expand(nb, block_size, nb)], dim=-1
    )  # (nb, bs, bs + nb)
    weights = masked_softmax(torch.cat([fine, coarse], dim=-1), mask).to(value.dtype)  # (B, H, nb, bs, bs + nb)
    out = torch.matmul(weights[..., :block_size], v)  # (B, H, nb, bs, bs) x (B, H, nb, bs, Ev)
    out = out + torch.matmul(weights[..., block_size:], v_mean[:, :, None])  # (B, H, nb, bs, nb) x (B, H, 1, nb, Ev)
    return out.view(batch, heads, q_len, v_dim)  # (B, H, L, Ev)
