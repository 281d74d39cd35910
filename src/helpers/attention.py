"""Scaled dot-product attention, the core kernel of the book, and the masked softmax under it.

Explained in chapter 3 (why scale by sqrt(d_k)); the score functions it generalises are in
:mod:`helpers.scores` (chapter 2).

Shape legend (the layout of :func:`torch.nn.functional.scaled_dot_product_attention`)::

    B     batch size
    H     query heads                    H_kv  key/value heads (H_kv divides H for GQA/MQA)
    L     query length (target)          S     key/value length (source)
    E     query/key feature size         Ev    value feature size

Any number of leading batch dimensions ``...`` is accepted where a shape says ``(..., L, E)``;
the usual case is ``(B, H, L, E)``.

Masks: a boolean ``attn_mask`` says ``True`` = "may attend"; a float ``attn_mask`` is added to
the scores. Scores and softmax are computed in float32 (float64 inputs stay in float64); outputs
are cast back to the value's dtype, and attention weights are returned in that dtype. A query
whose every key is masked gets all-zero weights and a zero output (no NaN), as torch's own kernel
gives.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .checks import check_attn_mask, check_positive_int, check_scale, check_tensor

__all__ = [
    "default_scale",
    "masked_softmax",
    "repeat_kv",
    "attention_weights",
    "scaled_dot_product_attention",
]


def default_scale(head_dim: int) -> float:
    """The default score scale ``1 / sqrt(head_dim)`` of every attention kernel of the package.

    Why: with ``q`` and ``k`` of ``head_dim`` independent unit-variance components, ``q . k``
    has variance ``head_dim``; dividing by its square root brings it back to 1, so the softmax
    does not saturate as heads grow (Vaswani et al., 2017, section 3.2.1, footnote 4).
    Explained in chapter 3. It is PyTorch's default ``scale`` in
    :func:`torch.nn.functional.scaled_dot_product_attention`. Every kernel that takes
    ``scale=None`` uses this function, so the default is written once.

    Args:
        head_dim: ``E``, the number of features in each query/key dot product (per head, not
            the model width ``embed_dim``: chapter 3's ``sqrt(d_model)`` bug).

    Returns:
        ``1 / sqrt(head_dim)``.

    Raises:
        TypeError: ``head_dim`` is not an int.
        ValueError: ``head_dim < 1``.
    """
    check_positive_int("head_dim", head_dim)
    return 1 / math.sqrt(head_dim)


# --------------------------------------------------------------------------------------------
# Input checks (kept apart so that the kernels below read like the maths)
# --------------------------------------------------------------------------------------------


def _check_sdpa_inputs(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
    scale: float | None,
    enable_gqa: bool,
) -> None:
    """Every check of :func:`scaled_dot_product_attention`, with messages that name the argument."""
    for name, x in (("query", query), ("key", key), ("value", value)):
        check_tensor(name, x, min_dim=3 if enable_gqa else 2, finite=True)
        if x.dtype != query.dtype:
            raise TypeError(
                f"query, key and value must share a dtype, got query {query.dtype}, {name} {x.dtype}"
            )
        if x.device != query.device:
            raise ValueError(
                f"query, key and value must be on one device, got query {query.device}, {name} {x.device}"
            )
    shapes = f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
    if query.size(-1) != key.size(-1) or query.size(-1) == 0:
        raise ValueError(f"query and key must have the same feature size E >= 1 (last dim), got {shapes}")
    if key.size(-2) != value.size(-2):
        raise ValueError(f"key and value must have the same length S (dim -2), got {shapes}")
    if enable_gqa:
        if (
            key.size(-3) == 0
            or value.size(-3) == 0
            or query.size(-3) % key.size(-3)
            or query.size(-3) % value.size(-3)
        ):
            raise ValueError(
                f"with enable_gqa the key/value heads (dim -3) must divide the query heads, got {shapes}"
            )
    heads = (query.size(-3),) if enable_gqa else ()  # after repeat_kv, key/value have H heads
    k_batch, v_batch = (x.shape[: -3 if enable_gqa else -2] + heads for x in (key, value))
    try:
        batch = torch.broadcast_shapes(query.shape[:-2], k_batch, v_batch)
    except RuntimeError:
        hint = "" if enable_gqa else " (different head counts need enable_gqa=True)"
        raise ValueError(
            f"the batch dimensions (all but the last two) do not broadcast{hint}: {shapes}"
        ) from None
    if not isinstance(is_causal, bool):
        raise TypeError(f"is_causal must be a bool, got {is_causal!r}")
    if is_causal and attn_mask is not None:
        raise ValueError("pass either attn_mask or is_causal=True, not both (as in torch)")
    if attn_mask is not None:
        check_attn_mask(attn_mask, query, (*batch, query.size(-2), key.size(-2)))
    if not isinstance(dropout_p, (int, float)) or isinstance(dropout_p, bool) or not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be a number in [0, 1), got {dropout_p!r}")
    check_scale("scale", scale)


# --------------------------------------------------------------------------------------------
# Softmax over keys, and scaled dot-product attention (chapter 3)
# --------------------------------------------------------------------------------------------


def masked_softmax(scores: Tensor, attn_mask: Tensor | None = None) -> Tensor:
    """Softmax over the last dim (keys) in float32, with a defined answer for empty rows.

    A position is masked out where a boolean ``attn_mask`` is ``False`` or where the score is
    ``-inf``. A row whose every position is masked out (a query that may attend to nothing)
    gets all-zero weights instead of the ``0/0 = NaN`` of a plain softmax, and its gradient is
    zero too: no NaN reaches an output or a gradient. This matches what PyTorch's own
    :func:`torch.nn.functional.scaled_dot_product_attention` returns for such rows.

    Explained in chapter 5 (masks). Used by every attention function of this module.

    Args:
        scores: Attention scores, any floating dtype.
        attn_mask: Optional boolean mask, ``True`` = may attend, broadcastable to ``scores``.

    Returns:
        Float32 weights; each row sums to 1, or to 0 if the row is fully masked.

    Shape:
        scores ``(..., L, S)``, attn_mask broadcastable to it -> ``(..., L, S)``.
    """
    scores = scores.to(torch.promote_types(scores.dtype, torch.float32))  # softmax in float32 (float64 stays)
    if attn_mask is not None:
        scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))  # (..., L, S)
    empty_row = torch.isneginf(scores).all(dim=-1, keepdim=True)  # (..., L, 1)
    weights = torch.softmax(scores.masked_fill(empty_row, 0.0), dim=-1)  # (..., L, S)
    return weights.masked_fill(empty_row, 0.0)


def repeat_kv(x: Tensor, n_rep: int) -> Tensor:
    """Repeats each key/value head ``n_rep`` times, so that ``H_kv`` heads serve ``H`` queries.

    Head ``g`` of the input becomes heads ``g * n_rep ... (g + 1) * n_rep - 1`` of the output,
    which is ``x.repeat_interleave(n_rep, dim=-3)``, written as a broadcast (``expand``, no copy)
    and one ``reshape`` (which copies), as in Hugging Face Llama. Every kernel of the package
    that shares key/value heads among query heads (grouped-query and multi-query attention)
    goes through it: :func:`scaled_dot_product_attention` with ``enable_gqa``,
    :class:`helpers.multihead.MultiHeadAttention` and the kernels of :mod:`helpers.efficient`,
    :mod:`helpers.efficient_linear` and :mod:`helpers.chunked`.

    Paper: Ainslie et al., 2023, "GQA: Training Generalized Multi-Query Transformer Models from
    Multi-Head Checkpoints". Explained in chapter 6.

    Args:
        x: keys or values.
        n_rep: how many query heads share each key/value head (``H / H_kv``).

    Returns:
        The repeated heads (``x`` itself when ``n_rep == 1``).

    Shape:
        x: ``(B, H_kv, S, E)`` (any leading dims before ``H_kv``); output: ``(B, H_kv * n_rep, S, E)``
    """
    if not isinstance(x, Tensor) or x.dim() < 3:
        got = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"x must have shape (B, H_kv, S, E), got {got}")
    check_positive_int("n_rep", n_rep)
    if n_rep == 1:
        return x
    *batch, num_kv_heads, length, head_dim = x.shape
    x = x.unsqueeze(-3).expand(*batch, num_kv_heads, n_rep, length, head_dim)  # (B, H_kv, n_rep, S, E), no copy
    return x.reshape(*batch, num_kv_heads * n_rep, length, head_dim)  # (B, H, S, E)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    scale: float | None = None,
    enable_gqa: bool = False,
    need_weights: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Scaled dot-product attention ``softmax(Q K^T / sqrt(E) + bias) V``, readable and exact.

    Vaswani et al. (2017), "Attention Is All You Need", eq. 1. Explained in chapter 3.
    The body is PyTorch's documented reference implementation of
    :func:`torch.nn.functional.scaled_dot_product_attention`, line for line, with its semantics:

    - a boolean ``attn_mask`` keeps the positions where it is ``True``; a float ``attn_mask``
      (of the query's dtype) is added to the scores; either broadcasts to ``(..., H, L, S)``;
    - ``is_causal=True`` lets query ``i`` see keys ``j <= i``, aligned at the top-left corner
      also when ``L != S``; it cannot be combined with ``attn_mask`` (ValueError);
    - ``scale`` defaults to ``1 / sqrt(E)``;
    - ``enable_gqa=True`` lets ``H_kv`` (dim -3 of key/value) divide ``H``: each key/value head
      is repeated ``H / H_kv`` times with :func:`repeat_kv`, so query heads
      ``g * H/H_kv ... (g+1) * H/H_kv - 1`` share key/value head ``g``;
    - dropout with probability ``dropout_p`` is applied to the weights whenever
      ``dropout_p > 0`` (no train/eval switch, as in torch).

    Where it differs from the reference, on purpose:

    - the scores and the softmax are computed in float32 (float64 stays float64), and the
      weights are cast back to the value's dtype before the product with ``value``;
    - a fully masked row (a query that may attend to nothing) gives all-zero weights and a zero
      output row, with zero gradients, instead of the reference's NaN (see
      :func:`masked_softmax`). ``torch.nn.functional.scaled_dot_product_attention`` on CPU
      (torch 2.13) also returns zeros for such rows;
    - inputs that torch rejects with a RuntimeError (or silently accepts, like a key and value
      of different lengths) raise a ValueError/TypeError naming the argument; so do a 1-D
      ``attn_mask`` and ``attn_mask`` together with ``is_causal`` (torch accepts both for a few
      sizes such as ``L = S = 1`` and rejects them otherwise), NaN/inf
      inputs, integer masks (use a bool mask), float masks holding NaN or ``+inf``, and
      ``dropout_p`` outside ``[0, 1)`` (torch also accepts 1).

    Args:
        query: Queries.
        key: Keys.
        value: Values.
        attn_mask: Optional bool mask (True = may attend) or float bias, broadcastable to the
            weights' shape ``(..., H, L, S)``, e.g. ``(L, S)``, ``(B, 1, L, S)``, ``(B, 1, 1, S)``.
        dropout_p: Dropout probability on the attention weights, in ``[0, 1)``.
        is_causal: Apply a top-left aligned causal mask.
        scale: Factor applied to ``Q K^T``; ``None`` means ``1 / sqrt(E)``.
        enable_gqa: Allow fewer key/value heads than query heads (grouped-query attention).
        need_weights: Also return the attention weights actually multiplied with ``value``
            (after dropout, if any).

    Returns:
        The output ``(..., H, L, Ev)``; with ``need_weights``, the pair
        ``(output, weights)``, the weights in float32 (float64 for float64 inputs).

    Shape:
        query ``(B, H, L, E)``, key ``(B, H_kv, S, E)``, value ``(B, H_kv, S, Ev)``
        -> output ``(B, H, L, Ev)``, weights ``(B, H, L, S)``. Any number of leading batch
        dimensions works; they broadcast as in ``torch.matmul``.
    """
    _check_sdpa_inputs(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    L, S = query.size(-2), key.size(-2)
    scale_factor = default_scale(query.size(-1)) if scale is None else scale
    compute_dtype = torch.promote_types(query.dtype, torch.float32)  # float16/bfloat16 -> float32; float64 stays
    attn_bias = torch.zeros(L, S, dtype=compute_dtype, device=query.device)  # (L, S)
    if is_causal:
        temp_mask = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(diagonal=0)  # (L, S)
        attn_bias = attn_bias.masked_fill(temp_mask.logical_not(), float("-inf"))

    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_bias = attn_bias.masked_fill(attn_mask.logical_not(), float("-inf"))  # (..., L, S)
        else:
            attn_bias = attn_mask.to(compute_dtype) + attn_bias  # (..., L, S)

    if enable_gqa:
        key = repeat_kv(key, query.size(-3) // key.size(-3))  # (B, H, S, E)
        value = repeat_kv(value, query.size(-3) // value.size(-3))  # (B, H, S, Ev)

    # (B, H, L, E) x (B, H, E, S) -> (B, H, L, S), in compute_dtype
    attn_weight = query.to(compute_dtype) @ key.to(compute_dtype).transpose(-2, -1) * scale_factor
    attn_weight = attn_weight + attn_bias  # (B, H, L, S)
    attn_weight = masked_softmax(attn_weight)  # (B, H, L, S), compute_dtype; empty rows -> 0
    attn_weight = torch.dropout(attn_weight, dropout_p, train=True)  # (B, H, L, S)
    output = attn_weight.to(value.dtype) @ value  # (B, H, L, S) x (B, H, S, Ev) -> (B, H, L, Ev)
    return (output, attn_weight) if need_weights else output


def attention_weights(
    query: Tensor,
    key: Tensor,
    attn_mask: Tensor | None = None,
    is_causal: bool = False,
    *,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """The attention weights ``softmax(Q K^T / sqrt(E) + bias)`` alone, for plots and checks.

    Exactly the weights that :func:`scaled_dot_product_attention` uses (without dropout), with
    the same arguments and conventions; rows sum to 1, fully masked rows to 0. Explained in
    chapter 3.

    Args:
        query: Queries.
        key: Keys.
        attn_mask: Optional bool mask (True = may attend) or float bias, broadcastable to
            ``(..., H, L, S)``.
        is_causal: Apply a top-left aligned causal mask.
        scale: Factor applied to ``Q K^T``; ``None`` means ``1 / sqrt(E)``.
        enable_gqa: Allow fewer key heads than query heads (grouped-query attention).

    Returns:
        Float32 attention weights.

    Shape:
        query ``(B, H, L, E)``, key ``(B, H_kv, S, E)`` -> ``(B, H, L, S)``.
    """
    no_values = key.new_zeros(*key.shape[:-1], 0) if isinstance(key, Tensor) else key  # (B, H_kv, S, 0)
    _, weights = scaled_dot_product_attention(
        query,
        key,
        no_values,
        attn_mask,
        0.0,
        is_causal,
        scale=scale,
        enable_gqa=enable_gqa,
        need_weights=True,
    )
    return weights
