"""Boolean attention masks: who may attend to whom.

Explained in chapter 5 (masks and "no peeking"; local and sparse attention).

Every builder returns a ``torch.bool`` tensor where ``True`` means "query i may attend to key
j", the convention of :func:`torch.nn.functional.scaled_dot_product_attention` and of
:func:`helpers.attention.scaled_dot_product_attention`. A mask of shape ``(L, S)`` broadcasts
against attention weights ``(B, H, L, S)`` as is.

Shape legend::

    B   batch size          L   query length (rows)          S   key length (columns)

Unless a builder says otherwise, query position ``i`` and key position ``j`` are compared as
plain indices (the two sequences aligned at their first token, "top-left").

**What ``is_causal`` means, everywhere in the package.** Every ``is_causal`` is ``False`` by
default and, when ``True``, means one thing: PyTorch's top-left causal mask, query ``i`` sees
keys ``j <= i`` (:func:`torch.nn.functional.scaled_dot_product_attention`,
``torch.nn.attention.bias.causal_upper_left``). Where the queries do not start at position 0,
the function says where they start, and the same rule holds for those positions. The
bottom-right mask (the last query aligned with the last key) has its own name,
``causal_mask(L, S, align="bottom_right")``.

=============================================  ==================================================
where                                          ``is_causal=True``: query ``i`` sees key ``j`` iff
=============================================  ==================================================
``attention.scaled_dot_product_attention``     ``j <= i``
``attention.attention_weights``                ``j <= i``
``chunked.online_softmax_attention``           ``j <= i``
``chunked.chunked_attention``                  ``j <= i``
``efficient.sliding_window_attention``         ``i - window < j <= i``
``efficient.hierarchical_attention``           ``j <= i`` in the block, earlier blocks
``efficient_linear.linear_attention``          ``j <= i`` (needs ``L == S``)
``efficient_linear.performer_attention``       ``j <= i`` (needs ``L == S``)
``masks.sliding_window_mask``                  ``j <= i`` inside the window
``masks.dilated_mask``                         ``j <= i`` inside the window
``multihead.MultiHeadAttention``               ``j <= i``; ``j <= P + i`` after ``P`` cached
``blocks.TransformerBlock``, tiny models       as ``MultiHeadAttention``
``positional.alibi_bias``                      ``j <= query_offset + i``
``masks.causal_mask(L, S)``                    ``j <= i`` (``align="top_left"``)
``causal_mask(L, S, align="bottom_right")``    ``j <= i + (S - L)``, not ``is_causal``
=============================================  ==================================================

With a KV cache of ``P`` tokens and ``L`` new ones, ``S = P + L``, so ``j <= P + i`` is the
bottom-right mask: the new tokens are the last ones, and they see everything before them.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from .checks import check_int

__all__ = [
    "causal_mask",
    "padding_mask",
    "sliding_window_mask",
    "dilated_mask",
    "block_local_mask",
    "global_tokens_mask",
    "random_mask",
    "bigbird_mask",
    "combine_masks",
]

DeviceLike = torch.device | str | None


def _positions(L: int, S: int, device: DeviceLike) -> tuple[Tensor, Tensor]:
    """Query indices as a column ``(L, 1)`` and key indices as a row ``(1, S)``."""
    check_int("L", L, 0)
    check_int("S", S, 0)
    i = torch.arange(L, device=device).unsqueeze(-1)  # (L, 1)
    j = torch.arange(S, device=device).unsqueeze(0)  # (1, S)
    return i, j


def causal_mask(
    L: int, S: int | None = None, *, align: str = "top_left", device: DeviceLike = None
) -> Tensor:
    """Causal ("no peeking") mask: a query sees its own position and the past only.

    Vaswani et al. (2017), "Attention Is All You Need" (decoder self-attention). Explained in
    chapter 5.

    - ``align="top_left"``: query ``i`` sees keys ``j <= i`` (``is_causal=True`` of torch's
      ``scaled_dot_product_attention``; ``torch.nn.attention.bias.causal_upper_left``).
    - ``align="bottom_right"``: query ``i`` sees keys ``j <= i + (S - L)``: the last query is
      aligned with the last key, as when ``L`` new tokens are decoded after ``S - L`` cached
      ones (``torch.nn.attention.bias.causal_lower_right``). When ``L > S`` the first ``L - S``
      rows see nothing.

    Args:
        L: Query length.
        S: Key length; ``None`` means ``L``.
        align: ``"top_left"`` or ``"bottom_right"``.
        device: Device of the mask.

    Returns:
        Boolean mask, True = may attend.

    Shape:
        ``(L, S)``.
    """
    S = L if S is None else S
    i, j = _positions(L, S, device)
    if align == "top_left":
        return j <= i  # (L, S)
    if align == "bottom_right":
        return j <= i + (S - L)  # (L, S)
    raise ValueError(f"align must be 'top_left' or 'bottom_right', got {align!r}")


def padding_mask(lengths: Tensor | Sequence[int], S: int, *, device: DeviceLike = None) -> Tensor:
    """Key-padding mask: sequence ``b`` has ``lengths[b]`` real tokens, the rest is padding.

    Explained in chapter 5. The mask has shape ``(B, 1, 1, S)``, so that it broadcasts as is
    against attention weights ``(B, H, L, S)``: every head and every query of sequence ``b`` may
    attend to keys ``j < lengths[b]`` and to none of the padding. For a ``(B, L, S)`` use, take
    ``mask[:, 0]``; for a ``(B, S)`` key mask, ``mask[:, 0, 0]``.

    Args:
        lengths: Number of real tokens of each sequence, each in ``[0, S]``.
        S: Padded length.
        device: Device of the mask (defaults to that of ``lengths`` if it is a tensor).

    Returns:
        Boolean mask, True = real token (may be attended to).

    Shape:
        lengths ``(B,)`` -> ``(B, 1, 1, S)``.
    """
    check_int("S", S, 0)
    if isinstance(lengths, Tensor):
        if (
            lengths.dim() != 1
            or lengths.is_floating_point()
            or lengths.is_complex()
            or lengths.dtype == torch.bool
        ):
            raise ValueError(
                f"lengths must be a 1-D integer tensor, got shape {tuple(lengths.shape)}, dtype {lengths.dtype}"
            )
        device = lengths.device if device is None else device
        lengths = lengths.to(device)
    else:
        lengths = torch.tensor(
            [check_int("lengths[]", n, 0) for n in lengths], dtype=torch.long, device=device
        )
    if lengths.numel() and lengths.device.type != "meta" and (lengths.min() < 0 or lengths.max() > S):
        raise ValueError(f"every entry of lengths must be in [0, S={S}], got {lengths.tolist()}")
    j = torch.arange(S, device=device)  # (S,)
    return (j < lengths.unsqueeze(-1))[:, None, None, :]  # (B, S) -> (B, 1, 1, S)


def sliding_window_mask(
    L: int, S: int, window: int, *, is_causal: bool = False, device: DeviceLike = None
) -> Tensor:
    """Local attention: query ``i`` sees keys less than ``window`` positions away.

    Beltagy, Peters & Cohan (2020), "Longformer"; the causal form is Mistral's
    ``sliding_window``. Explained in chapter 5.

    - ``is_causal=False``: key ``j`` is visible when ``|i - j| < window`` (up to ``2 window - 1``
      keys, centred on ``i``).
    - ``is_causal=True``: visible when ``0 <= i - j < window`` (the last ``window`` keys, ``i``
      included).

    Args:
        L: Query length.
        S: Key length.
        window: Window size, ``>= 1`` (``window=1`` is "attend to yourself only").
        is_causal: Keep only the past half of the window.
        device: Device of the mask.

    Returns:
        Boolean mask, True = may attend.

    Shape:
        ``(L, S)``.
    """
    return dilated_mask(L, S, window, 1, is_causal=is_causal, device=device)


def dilated_mask(
    L: int, S: int, window: int, dilation: int, *, is_causal: bool = False, device: DeviceLike = None
) -> Tensor:
    """Dilated sliding window: every ``dilation``-th key, ``window`` of them on each side.

    Beltagy, Peters & Cohan (2020), "Longformer" (dilated sliding window). Explained in
    chapter 5. Key ``j`` is visible from query ``i`` when ``i - j`` is a multiple of
    ``dilation`` and ``|i - j| / dilation < window`` (with ``is_causal=True`` also ``j <= i``).
    ``dilation=1`` is :func:`sliding_window_mask`. The receptive field grows to
    ``(window - 1) * dilation`` at the same number of keys per query.

    Args:
        L: Query length.
        S: Key length.
        window: Number of keys on each side, the query's own position included, ``>= 1``.
        dilation: Gap between attended keys, ``>= 1``.
        is_causal: Keep only keys ``j <= i``.
        device: Device of the mask.

    Returns:
        Boolean mask, True = may attend.

    Shape:
        ``(L, S)``.
    """
    check_int("window", window, 1)
    check_int("dilation", dilation, 1)
    i, j = _positions(L, S, device)
    offset = i - j  # (L, S)
    visible = (offset % dilation == 0) & (offset.abs() < window * dilation)  # (L, S)
    return visible & (offset >= 0) if is_causal else visible


def block_local_mask(L: int, S: int, block_size: int, *, device: DeviceLike = None) -> Tensor:
    """Block-local attention: the sequence is cut into blocks; a query sees its own block only.

    Parmar et al. (2018), "Image Transformer" (local 1-D attention); Qiu et al. (2020),
    "Blockwise Self-Attention". Explained in chapter 5. Key ``j`` is visible from query ``i``
    when ``i // block_size == j // block_size``; the last block may be shorter.

    Args:
        L: Query length.
        S: Key length.
        block_size: Tokens per block, ``>= 1``.
        device: Device of the mask.

    Returns:
        Boolean mask, True = may attend.

    Shape:
        ``(L, S)``.
    """
    check_int("block_size", block_size, 1)
    i, j = _positions(L, S, device)
    return i // block_size == j // block_size  # (L, 1) == (1, S) -> (L, S)


def global_tokens_mask(
    L: int, S: int, global_indices: Sequence[int] | Tensor, *, device: DeviceLike = None
) -> Tensor:
    """Global tokens: a few positions attend to everything and are attended to by everything.

    Beltagy, Peters & Cohan (2020), "Longformer" (global attention, e.g. on ``[CLS]``);
    Zaheer et al. (2020), "BigBird". Explained in chapter 5. Row ``g`` (if ``g < L``) and column
    ``g`` (if ``g < S``) are all True for each global index ``g``; everything else is False,
    so combine it with a local mask by :func:`combine_masks`.

    Args:
        L: Query length.
        S: Key length.
        global_indices: Positions of the global tokens, each in ``[0, max(L, S))``.
        device: Device of the mask.

    Returns:
        Boolean mask, True = may attend.

    Shape:
        ``(L, S)``.
    """
    i, j = _positions(L, S, device)
    if isinstance(global_indices, Tensor):
        if (
            global_indices.is_floating_point()
            or global_indices.dtype == torch.bool
            or global_indices.dim() > 1
        ):
            raise ValueError(
                f"global_indices must be a 1-D integer tensor or a sequence of ints, got {global_indices!r}"
            )
        global_indices = global_indices.tolist()
    indices = [check_int("global_indices[]", g, 0) for g in global_indices]
    if any(g >= max(L, S) for g in indices):
        raise ValueError(f"global_indices must be in [0, max(L, S)={max(L, S)}), got {indices}")
    is_global = torch.tensor(indices, dtype=torch.long, device=device)  # (G,)
    row_global = (i == is_global).any(dim=-1, keepdim=True)  # (L, G) -> (L, 1)
    col_global = (j.T == is_global).any(dim=-1).unsqueeze(0)  # (S, G) -> (1, S)
    return row_global | col_global  # (L, S)


def random_mask(
    L: int, S: int, num_random: int, *, generator: torch.Generator | None = None, device: DeviceLike = None
) -> Tensor:
    """Random attention: each query sees ``num_random`` keys drawn uniformly without replacement.

    Zaheer et al. (2020), "BigBird" (the random part of its pattern). Explained in chapter 5.
    Deterministic for a seeded ``generator``.

    Args:
        L: Query length.
        S: Key length.
        num_random: Keys per query, in ``[0, S]``.
        generator: Source of randomness; ``None`` uses the global RNG.
        device: Device of the mask (the generator may live on any device: the keys are drawn
            on the generator's device, then moved).

    Returns:
        Boolean mask with exactly ``num_random`` True entries per row.

    Shape:
        ``(L, S)``.
    """
    _positions(L, S, device)
    check_int("num_random", num_random, 0)
    if num_random > S:
        raise ValueError(f"num_random must be <= S={S}, got {num_random}")
    draw_device = device if generator is None else generator.device  # a generator fills tensors on its own device
    order = torch.rand(L, S, generator=generator, device=draw_device).argsort(dim=-1)  # (L, S): a random order per row
    mask = torch.zeros(L, S, dtype=torch.bool, device=device)
    chosen = order[:, :num_random].to(mask.device)  # (L, num_random); device=None is the default device, not the draw's
    return mask.scatter(-1, chosen, True)  # (L, S)


def bigbird_mask(
    L: int,
    S: int,
    *,
    block_size: int,
    num_global_blocks: int,
    window_blocks: int,
    num_random_blocks: int,
    generator: torch.Generator | None = None,
    device: DeviceLike = None,
) -> Tensor:
    """BigBird's block-sparse pattern: global blocks + a sliding window of blocks + random blocks.

    Zaheer et al. (2020), "Big Bird: Transformers for Longer Sequences" (ITC variant, blocked as
    in its implementation). Explained in chapter 5. Queries and keys are cut into blocks of
    ``block_size`` tokens (the last block may be shorter); the pattern is built on blocks, so
    every token of a query block sees whole key blocks:

    1. global: the first ``num_global_blocks`` blocks attend to all blocks and are attended to
       by all blocks;
    2. window: query block ``a`` sees key blocks ``b`` with ``|a - b| <= window_blocks // 2``
       (``window_blocks`` is the window's width in blocks, odd; BigBird uses 3);
    3. random: each non-global query block also sees ``num_random_blocks`` key blocks drawn
       uniformly among those it does not see yet (fewer if not enough remain).

    Args:
        L: Query length.
        S: Key length.
        block_size: Tokens per block, ``>= 1``.
        num_global_blocks: Number of leading global blocks, ``>= 0``.
        window_blocks: Width of the sliding window in blocks, odd and ``>= 1``.
        num_random_blocks: Random key blocks per query block, ``>= 0``.
        generator: Source of randomness for the random blocks, on any device (the blocks are
            drawn on the generator's device); ``None`` uses the global CPU RNG.
        device: Device of the mask.

    Returns:
        Boolean mask, True = may attend.

    Shape:
        ``(L, S)``.
    """
    i, j = _positions(L, S, device)
    check_int("block_size", block_size, 1)
    check_int("num_global_blocks", num_global_blocks, 0)
    check_int("window_blocks", window_blocks, 1)
    check_int("num_random_blocks", num_random_blocks, 0)
    if window_blocks % 2 == 0:
        raise ValueError(f"window_blocks must be odd (a window centred on the block), got {window_blocks}")
    query_blocks, key_blocks = -(-L // block_size), -(-S // block_size)  # ceil divisions
    # The block pattern is tiny and drawn row by row (a data-dependent loop): it is built on the
    # CPU, with each row's random blocks drawn on the generator's device, then moved to `device`.
    a = torch.arange(query_blocks).unsqueeze(-1)  # (L_blocks, 1)
    b = torch.arange(key_blocks).unsqueeze(0)  # (1, S_blocks)
    blocks = (a < num_global_blocks) | (b < num_global_blocks)  # global, (L_blocks, S_blocks)
    blocks = blocks | ((a - b).abs() <= window_blocks // 2)  # sliding window of blocks
    draw_device = None if generator is None else generator.device
    for row in range(num_global_blocks, query_blocks):  # random key blocks for each non-global query block
        unseen = (~blocks[row]).nonzero().squeeze(-1)  # (n_unseen,)
        draw = torch.randperm(unseen.numel(), generator=generator, device=draw_device)[:num_random_blocks]
        blocks[row, unseen[draw.cpu()]] = True
    return blocks.to(device)[i // block_size, j // block_size]  # (L, 1), (1, S) -> (L, S)


def combine_masks(*masks: Tensor, mode: str = "or") -> Tensor:
    """Combine boolean masks: ``"or"`` = union of what may be attended, ``"and"`` = intersection.

    Explained in chapter 5: BigBird is ``window | global | random``; a padded causal decoder is
    ``causal & padding``. Masks broadcast against each other (e.g. ``(L, S)`` with
    ``(B, 1, 1, S)`` gives ``(B, 1, L, S)``).

    Args:
        *masks: One or more boolean masks.
        mode: ``"or"`` or ``"and"``.

    Returns:
        The combined boolean mask.

    Shape:
        the broadcast shape of all masks.
    """
    if not masks:
        raise ValueError("combine_masks needs at least one mask, got none")
    if mode not in ("or", "and"):
        raise ValueError(f"mode must be 'or' or 'and', got {mode!r}")
    for k, mask in enumerate(masks):
        if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
            raise TypeError(
                f"masks[{k}] must be a bool tensor, got {getattr(mask, 'dtype', type(mask).__name__)}"
            )
    try:
        shape = torch.broadcast_shapes(*(mask.shape for mask in masks))
    except RuntimeError:
        raise ValueError(f"masks do not broadcast: shapes {[tuple(m.shape) for m in masks]}") from None
    combined = masks[0].expand(shape)
    for mask in masks[1:]:
        combined = combined | mask if mode == "or" else combined & mask
    return combined.clone()  # a fresh tensor, not a broadcast view
